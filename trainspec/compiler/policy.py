"""Project policy (``spec.policy`` of ``trainspec.yaml``) checked on each planned job.

Each rule is a small function ``(plan, policy) -> diagnostics`` with its own code (TS600-TS605)
and points at the job spec's line that has to change. Policy sees the job after the project
defaults: a job that gets the project's default queue satisfies ``requireQueue``, on purpose
(the default is how a repository meets its own rule).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from trainspec.compiler.plan import JobPlan
from trainspec.compiler.resolve import Origin, related_at
from trainspec.dsl import codes
from trainspec.dsl.codes import Code
from trainspec.dsl.diagnostics import Diagnostic, Related, format_path
from trainspec.dsl.load.loaded import LoadedSpec
from trainspec.dsl.record import replace
from trainspec.dsl.spec.project import Policy

PolicyRule = Callable[[JobPlan, Policy], Iterator[Diagnostic]]
DIGEST_MARK = "@sha256:"
#: The registry an image names when its first component is not a host (Docker's convention).
DEFAULT_REGISTRY = "docker.io"


def _at_field(loaded: LoadedSpec, code: Code, path: tuple, message: str, hint: str) -> Diagnostic:
    """A diagnostic about the field at ``path``: there if the job wrote it, else at the block that
    should hold it (``spec:``), still naming the field."""
    if loaded.has(path):
        return loaded.diagnostic(code, path, message, hint=hint)
    return replace(loaded.diagnostic(code, path[:-1], message, hint=hint), path=format_path(path))


def _require_queue(plan: JobPlan, policy: Policy) -> Iterator[Diagnostic]:
    if policy.require_queue and not plan.resolved.job.spec.queue:
        yield _at_field(
            plan.resolved.loaded,
            codes.POLICY_QUEUE,
            ("spec", "queue"),
            "the project requires a Kueue queue for every job (policy.requireQueue)",
            "set spec.queue to a Kueue LocalQueue, or defaults.queue in trainspec.yaml",
        )


def _require_max_run_time(plan: JobPlan, policy: Policy) -> Iterator[Diagnostic]:
    if policy.require_max_run_time and plan.resolved.job.spec.max_run_time is None:
        yield _at_field(
            plan.resolved.loaded,
            codes.POLICY_MAX_RUN_TIME,
            ("spec", "maxRunTime"),
            "the project requires a deadline for every job (policy.requireMaxRunTime)",
            "set spec.maxRunTime, e.g. 72h",
        )


def _max_gpus(plan: JobPlan, policy: Policy) -> Iterator[Diagnostic]:
    resolved = plan.resolved
    cap = policy.max_gpus_per_job
    total = resolved.nodes.value * resolved.gpus_per_node.value
    if cap is None or total <= cap:
        return
    # Point at what the job wrote that makes it this big: its node count, else its resources.
    loaded = resolved.loaded
    path = next(
        (
            p
            for p in (("spec", "nodes"), ("spec", "resourcesPerNode", "gpu"), ("spec", "resourcesPerNode"))
            if loaded.has(p)
        ),
        ("spec", "runtime"),
    )
    yield loaded.diagnostic(
        codes.POLICY_MAX_GPUS,
        path,
        f"{total} GPUs ({resolved.nodes.value} nodes x {resolved.gpus_per_node.value} GPUs per node), "
        f"but the project allows at most {cap} per job (policy.maxGpusPerJob)",
        hint=f"ask for at most {cap // max(resolved.gpus_per_node.value, 1)} nodes of "
        f"{resolved.gpus_per_node.value} GPUs",
    )


def _required_labels(plan: JobPlan, policy: Policy) -> Iterator[Diagnostic]:
    labels = plan.resolved.job.metadata.labels
    missing = [key for key in policy.required_labels if key not in labels]
    if missing:
        yield _at_field(
            plan.resolved.loaded,
            codes.POLICY_LABELS,
            ("metadata", "labels"),
            f"missing required label{'s' * (len(missing) > 1)} {', '.join(missing)} (policy.requiredLabels)",
            "add " + ", ".join(f"{key}: ..." for key in missing) + " to metadata.labels",
        )


def _images(plan: JobPlan) -> list[tuple[str, tuple, str, Related | None]]:
    """(image, path in the job, what it is, related location or None) of every image the job runs."""
    resolved = plan.resolved
    image = resolved.image
    related = None
    if image.origin is Origin.RUNTIME:
        related = related_at(
            resolved.runtime.loaded, ("spec", "image"), f"the image of runtime {resolved.runtime.name}"
        )
    out: list[tuple[str, tuple, str, Related | None]] = [
        (
            image.value,
            ("spec", "image") if image.origin is Origin.JOB else ("spec", "runtime"),
            "trainer image",
            related,
        )
    ]
    sharding = resolved.runtime.spec.spec.data_sharding
    if plan.data is not None and sharding is not None and sharding.image is not None:  # None: TS416
        out.append(
            (
                sharding.image,
                ("spec", "data"),
                "data-sharding image",
                related_at(resolved.runtime.loaded, ("spec", "dataSharding", "image"), "the data-sharding image"),
            )
        )
    return out


def _require_digest(plan: JobPlan, policy: Policy) -> Iterator[Diagnostic]:
    if policy.images is None or not policy.images.require_digest:
        return
    for image, path, what, related in _images(plan):
        if DIGEST_MARK not in image:
            yield plan.resolved.loaded.diagnostic(
                codes.POLICY_DIGEST,
                path,
                f"{what} {image} is not pinned by digest (policy.images.requireDigest)",
                hint="use name@sha256:<digest> so every run gets the same bytes",
                related=(related,) if related is not None else (),
            )


def image_registry_name(image: str) -> str:
    """``image`` with its registry spelled out: ``pytorch/pytorch:2`` -> ``docker.io/pytorch/pytorch:2``.

    The first component is a registry host when it has a dot or a port, or is ``localhost``;
    otherwise the image is on Docker Hub, whose one-word names live under ``library/``.
    """
    first, _, rest = image.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        return image
    return f"{DEFAULT_REGISTRY}/{image}" if rest else f"{DEFAULT_REGISTRY}/library/{image}"


def registry_allowed(image: str, prefixes: list[str]) -> bool:
    """Whether ``image`` starts with one of ``prefixes`` at a path boundary (``nvcr.io/nvidia``
    allows ``nvcr.io/nvidia/pytorch:25.01-py3`` but not ``nvcr.io/nvidia-evil/x``)."""
    for candidate in {image, image_registry_name(image)}:
        for prefix in prefixes:
            base = prefix.rstrip("/")
            if candidate == base or candidate.startswith(base + "/"):
                return True
    return False


def _allowed_registries(plan: JobPlan, policy: Policy) -> Iterator[Diagnostic]:
    if policy.images is None or not policy.images.allowed_registries:
        return
    allowed = policy.images.allowed_registries
    for image, path, what, related in _images(plan):
        if not registry_allowed(image, allowed):
            yield plan.resolved.loaded.diagnostic(
                codes.POLICY_REGISTRY,
                path,
                f"{what} {image} is not from an allowed registry (policy.images.allowedRegistries)",
                hint="use an image under " + ", ".join(allowed),
                related=(related,) if related is not None else (),
            )


#: Every policy rule, in code order.
POLICY_RULES: tuple[PolicyRule, ...] = (
    _require_queue,
    _require_max_run_time,
    _max_gpus,
    _required_labels,
    _require_digest,
    _allowed_registries,
)


def check_policy(plan: JobPlan, policy: Policy) -> list[Diagnostic]:
    """Every violation of ``policy`` by one planned job, as located errors."""
    return [d for rule in POLICY_RULES for d in rule(plan, policy)]
