"""Put a compiled trainspec job into a KFP pipeline.

The job is any engine's job object whose dialect says ``kfp_step``: a Kubeflow Trainer TrainJob,
a KubeRay RayJob, a Training Operator PyTorchJob/JAXJob or an mpi-operator MPIJob. The names
below say "trainjob" for history; they take every kind.

* :func:`compile_trainjob` compiles a spec with trainspec's compiler and picks one job
  (no kfp needed: it returns plain dicts and the JSON string the launcher takes);
* :func:`trainjob_task` adds a launcher step for it to the pipeline being defined;
* :func:`build_pipeline` makes a whole pipeline (``trainspec kfp``): an optional checkpoint
  PVC step (kfp-kubernetes ``CreatePVC`` with an explicit storage class), the launcher, and an
  optional ``DeletePVC``; caching is off for all of them.

The launcher step runs in an image built from the ``launcher`` target of trainspec's Dockerfile
and nothing is installed when it starts, so there is no default image: it is named by an
explicit ``image``/``--image`` or by the project file's ``spec.defaults.launcherImage``; with
neither, :func:`launcher_for` raises :class:`KfpSpecError` with a TS450 diagnostic.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Related
from trainspec.dsl.errors import TrainspecError

PathLike = str | Path

#: How to get a launcher image, for messages (docs/kfp.md has the details).
BUILD_HINT = (
    "build the launcher target of trainspec's Dockerfile (docker build --target launcher -t "
    "REGISTRY/trainspec-launcher:VERSION .), push it to your registry, and name it in trainspec.yaml "
    "(spec.defaults.launcherImage) or pass --image / image= (docs/kfp.md)"
)


class KfpSpecError(ValueError, TrainspecError):
    """The spec does not compile, does not name exactly one job, or names no launcher image.

    ``diagnostics`` holds the located problems when there are some (the compiler's, or TS450).
    """

    def __init__(self, message: str, diagnostics: tuple[Diagnostic, ...] = ()) -> None:
        super().__init__(message)
        self.diagnostics = diagnostics


@dataclass(frozen=True)
class CompiledJob:
    """One compiled job: its job object (``trainjob``, dict and JSON; a TrainJob or another
    engine's kind), its checkpoint PVC, its runtimes (TrainJobs only)."""

    name: str
    namespace: str
    trainjob: dict[str, Any]
    #: The TrainJob as the launcher's input: compact JSON, key order as compiled, ints kept.
    manifest: str
    claim: dict[str, Any] | None = None
    runtimes: list[dict[str, Any]] = field(default_factory=list)
    #: The project file's ``spec.defaults.launcherImage`` (None: the project names none).
    launcher_image: str | None = None
    #: Where the job is written, and the project file's defaults (for the TS450 diagnostic).
    origin: Related | None = field(default=None, compare=False, repr=False)
    project_origin: Related | None = field(default=None, compare=False, repr=False)

    @property
    def kind(self) -> str:
        """The job object's kind (``TrainJob``, ``RayJob``, ``PyTorchJob``...)."""
        return str(self.trainjob.get("kind") or "")

    def describe(self) -> str:
        """``TrainJob NAME, runtime R; apply the runtime first``, or ``RayJob NAME``: what the step runs."""
        runtime = ((self.trainjob.get("spec") or {}).get("runtimeRef") or {}).get("name")
        return f"{self.kind} {self.name}" + (f", runtime {runtime}; apply the runtime first" if runtime else "")

    @property
    def storage_class(self) -> str | None:
        return ((self.claim or {}).get("spec") or {}).get("storageClassName")

    @property
    def claim_size(self) -> str | None:
        return ((((self.claim or {}).get("spec") or {}).get("resources") or {}).get("requests") or {}).get("storage")

    @property
    def claim_access_modes(self) -> list[str]:
        return list(((self.claim or {}).get("spec") or {}).get("accessModes") or [])


def trainjob_json(trainjob: dict[str, Any]) -> str:
    """The launcher's input string for a job object dict."""
    return json.dumps(trainjob, separators=(",", ":"), ensure_ascii=False)


def compile_trainjob(
    spec_or_path: Any,
    *,
    job: str | None = None,
    values: dict[str, Any] | None = None,
    project: Any = "discover",
    options: Any = None,
    result: Any = None,
) -> CompiledJob:
    """Compile ``spec_or_path`` (a path, a ``TrainingJob``/``Runtime`` object, or a list of them).

    ``job`` picks one job by name when the specs hold several. The project file is discovered
    as the CLI does unless ``project`` names one (None: none); ``options`` (a
    :class:`trainspec.compiler.pipeline.Options`) overrides both; ``result`` is a compile of the
    same inputs already made (the command's, so the planner runs once per job). Raises
    :class:`KfpSpecError` with the compiler's diagnostics when the spec does not compile.
    """
    if isinstance(spec_or_path, CompiledJob):
        return spec_or_path
    from trainspec.compiler.emit import manifest_dicts
    from trainspec.compiler.lower.dialects import dialect_for
    from trainspec.compiler.pipeline import DISCOVER, Options, Stop, run, sources
    from trainspec.compiler.resolve import related_at

    if result is None:
        items = list(spec_or_path) if isinstance(spec_or_path, (list, tuple)) else [spec_or_path]
        try:  # the pipeline says what an input may be, as for every command and the library
            sources(items)
        except TypeError:
            raise KfpSpecError("specs must be paths or trainspec TrainingJob/Runtime objects") from None
        if options is None:
            options = Options(project=DISCOVER if project == "discover" else project, values=values, stop=Stop.LOWER)
        result = run(items, options)
    if not result.ok:
        lines = "\n".join(_line(d) for d in result.diagnostics)
        raise KfpSpecError(f"the spec does not compile:\n{lines}", tuple(result.diagnostics))
    # The launcher applies and watches the job kinds whose dialect describes them (launch_facts).
    other = [
        p
        for p in result.plans
        if not dialect_for(result.target, p.engine).kfp_step and (job is None or p.resolved.name == job)
    ]
    if other:
        names = ", ".join(f"{p.resolved.namespace}/{p.resolved.name} ({p.engine})" for p in other)
        raise KfpSpecError(
            f"the Kubeflow Pipelines launcher cannot run jobs of {names}'s engine yet: compile "
            "them with `trainspec compile` instead"
        )
    kinds = {kind for p in result.plans for kind in dialect_for(result.target, p.engine).job_kinds}
    dicts = manifest_dicts(result.objects())
    jobs = [d for d in dicts if d["kind"] in kinds]
    every = jobs
    if job is not None:
        jobs = [d for d in jobs if _job_name(d) == job]
    if len(jobs) != 1:
        found = ", ".join(sorted(_job_name(d) for d in every)) or "none"
        raise KfpSpecError(
            f"expected one job{f' named {job!r}' if job else ''}; found: {found}"
            + ("" if job else " (pick one with job=/--job)")
        )
    trainjob = jobs[0]
    meta = trainjob["metadata"]
    claim = _checkpoint_claim(dicts, trainjob)
    runtime_ref = ((trainjob.get("spec") or {}).get("runtimeRef") or {}).get("name")
    runtimes = [
        d
        for d in dicts
        if d["kind"] in ("ClusterTrainingRuntime", "TrainingRuntime") and d["metadata"]["name"] == runtime_ref
    ]
    name = _job_name(trainjob)
    plan = next((p for p in result.plans if p.resolved.name == name), None)
    origin = project_origin = None
    if plan is not None:
        origin = related_at(plan.resolved.loaded, ("metadata", "name"), f"job {name}")
    if result.project_spec is not None:
        path = next((p for p in (("spec", "defaults"), ("spec",)) if result.project_spec.has(p)), ())
        project_origin = related_at(result.project_spec, path, "the project file names no spec.defaults.launcherImage")
    return CompiledJob(
        name,
        meta.get("namespace", ""),
        trainjob,
        trainjob_json(trainjob),
        claim,
        runtimes,
        launcher_image=result.project.spec.defaults.launcher_image,
        origin=origin,
        project_origin=project_origin,
    )


def image_problem(image: str) -> str | None:
    """Why ``image`` is not a container image reference the kubelet takes (None: it is one)."""
    import re

    from trainspec.dsl.kube_facts import IMAGE_MAX, IMAGE_REFERENCE_PATTERN

    if not image or len(image) > IMAGE_MAX or re.fullmatch(IMAGE_REFERENCE_PATTERN, image) is None:
        return f"{image!r} is not a container image reference (example: registry.example.com/trainspec-launcher:0.1.0)"
    return None


def no_launcher_image(compiled: CompiledJob) -> Diagnostic:
    """TS450: the job's launcher step has no image (none given, none in the project file)."""
    where = compiled.origin or Related(message=f"job {compiled.name}")
    project = (
        "the project file names none (spec.defaults.launcherImage)"
        if compiled.project_origin is not None
        else "no project file (trainspec.yaml) is in use"
    )
    return Diagnostic(
        code=codes.NO_LAUNCHER_IMAGE,
        message=f"job {compiled.name}: the Kubeflow Pipelines launcher step has no image: none was given "
        f"(--image, image=) and {project}; the step installs nothing when it starts, and trainspec publishes "
        "no image",
        file=where.file,
        line=where.line,
        column=where.column,
        hint=BUILD_HINT,
        related=(compiled.project_origin,) if compiled.project_origin is not None else (),
    )


def launcher_for(compiled: CompiledJob, image: str | None = None) -> Any:
    """The launcher component for ``compiled``: in ``image``, else the project's launcherImage.

    Raises :class:`KfpSpecError` (TS450) when neither names one, or when ``image`` is not an
    image reference.
    """
    from trainspec.kfp.component import make_launcher

    chosen = image or compiled.launcher_image
    if not chosen:
        diagnostic = no_launcher_image(compiled)
        raise KfpSpecError(f"{diagnostic.message}\n  hint: {diagnostic.hint}", (diagnostic,))
    problem = image_problem(chosen)
    if problem is not None:
        raise KfpSpecError(f"launcher image: {problem}")
    return make_launcher(chosen)


def _line(diagnostic: Diagnostic) -> str:
    """One diagnostic as a line of an exception's message (the CLI prints them itself)."""
    where = ":".join(str(p) for p in (diagnostic.file or "<input>", diagnostic.line, diagnostic.column) if p)
    return f"{where}: {diagnostic.severity.value}[{diagnostic.code}]: {diagnostic.message}"


def _job_name(trainjob: dict[str, Any]) -> str:
    """The job a compiled job object runs (its name is the run's, ``<job>-<run id>``)."""
    from trainspec.k8s.wellknown import JOB_LABEL

    meta = trainjob["metadata"]
    return str((meta.get("labels") or {}).get(JOB_LABEL) or meta["name"])


def _checkpoint_claim_name(trainjob: Any) -> str | None:
    """The claim of the job's checkpoint volume, if any: wherever a pod template of the object
    mounts it (a TrainJob: the compiler's runtime patch; a RayJob: its head and worker groups)."""
    from trainspec.kfp import launcher_names as N

    if isinstance(trainjob, list):
        return next((c for c in map(_checkpoint_claim_name, trainjob) if c is not None), None)
    if not isinstance(trainjob, dict):
        return None
    volumes = trainjob.get("volumes")
    for volume in volumes if isinstance(volumes, list) else []:
        if isinstance(volume, dict) and volume.get("name") == N.CHECKPOINT_VOLUME and "persistentVolumeClaim" in volume:
            return str(volume["persistentVolumeClaim"]["claimName"])
    return _checkpoint_claim_name(list(trainjob.values()))


def _checkpoint_claim(dicts: list[dict[str, Any]], trainjob: dict[str, Any]) -> dict[str, Any] | None:
    """The compiled PVC that the TrainJob mounts as its checkpoint volume (None for an existing claim)."""
    claim = _checkpoint_claim_name(trainjob)
    return next((d for d in dicts if d["kind"] == "PersistentVolumeClaim" and d["metadata"]["name"] == claim), None)


def trainjob_task(
    spec_or_path: Any,
    *,
    job: str | None = None,
    values: dict[str, Any] | None = None,
    project: str | None = None,
    trainer_api: str = "2.3",
    timeout_seconds: int = 0,
    poll_seconds: float = 10.0,
    backoff_seconds: float = 1.0,
    namespace: str = "",
    checkpoint_claim: Any = "",
    launcher: Callable[..., Any] | None = None,
    image: str | None = None,
) -> Any:
    """Add a launcher step for a trainspec job to the pipeline being defined; returns the task.

    The spec is compiled now (at pipeline definition time) and carried as a JSON string
    constant. Caching is off: a cached launcher would report an old run's status. Set
    resources, tolerations, node selectors, env and volumes on the returned task: they are
    forwarded to the TrainJob (see ``PASSTHROUGHS``). ``checkpoint_claim`` may be a
    ``CreatePVC`` output (``pvc.outputs["name"]``). ``launcher`` is a component from
    ``make_launcher``; without one, the launcher runs in ``image``, else in the project file's
    ``spec.defaults.launcherImage`` (``project``, or the one a :class:`CompiledJob` was compiled
    with); with neither, :class:`KfpSpecError` (TS450). Nothing is installed when the step starts.
    """
    from kfp import dsl

    from trainspec.kfp.merge import MergeError, parse_trainer_api

    try:
        parse_trainer_api(trainer_api)  # refuse a release without runtimePatches now, not at run time
    except MergeError as exc:
        raise KfpSpecError(str(exc)) from None
    compiled = compile_trainjob(spec_or_path, job=job, values=values, project=project)
    wants_claim = not isinstance(checkpoint_claim, str) or bool(checkpoint_claim)  # a task output, or a name
    if wants_claim and _checkpoint_claim_name(compiled.trainjob) is None:
        raise KfpSpecError(f"job {compiled.name!r} has no checkpoint volume for checkpoint_claim to replace")
    if launcher is None:
        launcher = cast(Callable[..., Any], launcher_for(compiled, image))
    task = launcher(
        trainjob=compiled.manifest,
        run_id=dsl.PIPELINE_JOB_ID_PLACEHOLDER,
        trainer_api=trainer_api,
        timeout_seconds=timeout_seconds,
        poll_seconds=poll_seconds,
        backoff_seconds=backoff_seconds,
        namespace=namespace,
        checkpoint_claim=checkpoint_claim,
    )
    task.set_caching_options(False)
    task.set_display_name(f"{compiled.kind.lower()} {compiled.name}")
    return task


def build_pipeline(
    compiled: CompiledJob,
    *,
    create_pvc: bool = True,
    delete_pvc: bool = False,
    storage_class: str | None = None,
    pipeline_name: str | None = None,
    launcher: Callable[..., Any] | None = None,
    image: str | None = None,
    **task_options: Any,
) -> Any:
    """A pipeline running ``compiled``: [CreatePVC ->] launcher [-> DeletePVC].

    With ``create_pvc`` and a job that checkpoints to a volume, a per-run PVC is created like
    the compiled one, with an explicit storage class (``storage_class`` or the spec's):
    CreatePVC without one gives ``storageClassName: ""`` (static binding only) and the backend
    default is ``standard``, neither what the spec asked for. ``DeletePVC`` runs only after a
    successful launch, so a failed run keeps its checkpoints. The launcher is ``launcher``, else
    the component for ``image`` or the project's ``spec.defaults.launcherImage`` (none:
    :class:`KfpSpecError`, TS450, before anything is built). Other keywords go to
    :func:`trainjob_task`.
    """
    from kfp import dsl, kubernetes as k8s

    claim = compiled.claim if create_pvc else None
    sc = storage_class or compiled.storage_class
    if claim is not None and not sc:
        raise KfpSpecError(
            f"job {compiled.name!r}: its checkpoint PVC has no storage class, and CreatePVC "
            "needs an explicit one: set checkpoint.storageClass in the spec or pass --storage-class"
        )
    if delete_pvc and claim is None:
        raise KfpSpecError("--delete-pvc needs a PVC step (a job with a checkpoint volume, without --no-create-pvc)")
    if launcher is None:
        launcher = launcher_for(compiled, image)

    @dsl.pipeline(
        name=pipeline_name or f"{compiled.name}-{compiled.kind.lower()}",
        description=f"Runs the trainspec job {compiled.name} as a {compiled.kind}.",
    )
    def trainspec_pipeline():  # type: ignore[no-untyped-def]  # no annotations: KFP would read "-> None" as an output
        pvc = None
        if claim is not None:
            pvc = k8s.CreatePVC(
                pvc_name_suffix=f"-{claim['metadata']['name']}",
                access_modes=compiled.claim_access_modes,
                size=compiled.claim_size,
                storage_class_name=sc,
            )
            pvc.set_caching_options(False)
            pvc.set_display_name("checkpoint PVC")
        train = trainjob_task(
            compiled, launcher=launcher, checkpoint_claim=pvc.outputs["name"] if pvc is not None else "", **task_options
        )
        if pvc is not None and delete_pvc:
            delete = k8s.DeletePVC(pvc_name=pvc.outputs["name"]).after(train)
            delete.set_caching_options(False)
            delete.set_display_name("delete checkpoint PVC")

    return trainspec_pipeline


def compile_pipeline(pipeline: Any, path: str) -> None:
    """Write ``pipeline`` as KFP IR YAML to ``path``."""
    from kfp import compiler

    compiler.Compiler().compile(pipeline, package_path=path)
