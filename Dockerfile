# syntax=docker/dockerfile:1
# Two images from one Dockerfile; trainspec publishes neither, you build and push both.
#
# The data-sharding stage's image (the default target): trainspec with the `data` extra, nothing else.
#
#   docker build -t registry.example.com/platform/trainspec:0.1.0 .
#   docker push registry.example.com/platform/trainspec:0.1.0
#
# then name it once in trainspec.yaml (spec.defaults.stageImage) or in a runtime's
# dataSharding.image. docs/stage-image.md has the details (private registries, digests, mirrors).
#
# The Kubeflow Pipelines launcher's image (target `launcher`): trainspec with the `kube` and `kfp`
# extras, what the launch_trainjob step runs in (it installs nothing when it starts).
#
#   docker build --target launcher -t registry.example.com/platform/trainspec-launcher:0.1.0 .
#   docker push registry.example.com/platform/trainspec-launcher:0.1.0
#
# then name it once in trainspec.yaml (spec.defaults.launcherImage) or pass
# `trainspec kfp --image`. docs/kfp.md has the details.
#
# The base is pinned to an exact tag; pin it by digest for reproducible builds:
#   docker build --build-arg BASE_IMAGE=python:3.12.8-slim-bookworm@sha256:<digest> ...
ARG BASE_IMAGE=python:3.12.8-slim-bookworm

# -- build: wheels for trainspec and its data extra (compilers never reach the final image) ------
FROM ${BASE_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY trainspec ./trainspec
RUN python -m pip wheel --wheel-dir /wheels ".[data]"

# -- launcher-build: wheels for trainspec and its kube and kfp extras ----------------------------
# A stage of its own, so the default build (the stage image) never builds kfp's wheels.
FROM ${BASE_IMAGE} AS launcher-build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY trainspec ./trainspec
RUN python -m pip wheel --wheel-dir /wheels ".[kube,kfp]"

# -- the launcher image (docker build --target launcher) ----------------------------------------
FROM ${BASE_IMAGE} AS launcher
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
# Installed from the wheels built above only: no index is consulted in this stage.
RUN --mount=type=bind,from=launcher-build,source=/wheels,target=/wheels \
    python -m pip install --no-index --find-links /wheels "trainspec[kube,kfp]" \
    && groupadd --gid 65532 trainspec \
    && useradd --uid 65532 --gid 65532 --no-create-home --home-dir /workspace --shell /usr/sbin/nologin trainspec \
    && mkdir -p /workspace && chown 65532:65532 /workspace
# Numeric, so the kubelet can verify runAsNonRoot. KFP's backend (2.15, the floor) mounts emptyDirs
# where its launcher writes artifacts (/gcs, /minio, /s3), so a non-root step can write them.
USER 65532:65532
WORKDIR /workspace
ENV HOME=/workspace
LABEL org.opencontainers.image.title="trainspec Kubeflow Pipelines launcher" \
      org.opencontainers.image.description="Runs the launch_trainjob step: applies a compiled TrainJob and waits for it" \
      org.opencontainers.image.licenses="Apache-2.0"
# No ENTRYPOINT: KFP sets the step's command (its executor runs the launch_trainjob function).

# -- the stage image (the default target: keep it last) -----------------------------------------
FROM ${BASE_IMAGE}
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
# Installed from the wheels built above only: no index is consulted in this stage.
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    python -m pip install --no-index --find-links /wheels "trainspec[data]" \
    && groupadd --gid 65532 trainspec \
    && useradd --uid 65532 --gid 65532 --no-create-home --home-dir /workspace --shell /usr/sbin/nologin trainspec \
    && mkdir -p /workspace && chown 65532:65532 /workspace
# Numeric, so the kubelet can verify runAsNonRoot; the runtime sets fsGroup 65532 on the stage pod.
USER 65532:65532
WORKDIR /workspace
LABEL org.opencontainers.image.title="trainspec data-sharding stage" \
      org.opencontainers.image.licenses="Apache-2.0"
# The command the sharded runtime runs (it sets the same command explicitly).
ENTRYPOINT ["python", "-m", "trainspec.stages.shard"]
