"""A Pipeline's job step inside the launcher pod: build the run's job object, then launch it.

The job object is the TrainJob, RayJob, PyTorchJob or MPIJob the job's engine compiles to (every
engine whose dialect says ``kfp_step``); the names below say "trainjob" for history.

``trainspec kfp`` compiles a job step into a container component running this module in the
launcher image (``python3 -m trainspec.kfp.pipeline_job_step``). It receives

* ``--specs``: the step's spec documents as one YAML text: the pipeline reduced to this one step
  (its job fields with their ``$(params.x)`` references left in, the parameters with their
  compile-time defaults), the Runtime documents, and the project file's document if one was used;
* ``--param NAME VALUE``: each parameter the job reads, with the run's value (a pipeline input);
* ``--output STEP.NAME VALUE``: each upstream output the job reads (an artifact's URI, or a
  value output's value);
* ``--checkpoint-claim NAME``: the claim a ``CreatePVC`` task made for this run, in place of the
  job's compiled checkpoint claim (:mod:`trainspec.kfp.pipeline_claims`).

:func:`build_trainjob` (pure: no cluster) puts the run's values in as the parameters' defaults and
the upstream URIs in place of ``$(steps.s.outputs.x)``, then compiles the documents with
trainspec's own compiler: the same expansion, rules and lowering ``trainspec validate`` ran
before merge, so ``nodes: $(params.nodes)`` with nodes=4 gives a TrainJob of 4 nodes with every
derived field (environment, sharding) to match. :func:`main` then hands the TrainJob to
:func:`trainspec.kfp.launcher.run_launcher` and writes the ``checkpoint`` output: a text file
holding where the checkpoints are (``pvc://CLAIM/PATH`` or the object-store URI).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainspec.dsl.spec.pipeline_refs import Ref, substitute
from trainspec.kfp.launch_result import LauncherError

#: KFP's default artifact store is MinIO, written ``minio://BUCKET/KEY``; trainspec's data sources
#: take S3 URIs, and MinIO speaks S3.
_SCHEME_ALIASES = {"minio://": "s3://"}


@dataclass(frozen=True)
class BuiltJob:
    """The TrainJob a job step applies for this run, and where it writes its checkpoints."""

    trainjob: dict[str, Any]
    checkpoint: str


def build_trainjob(
    specs: str,
    *,
    job: str,
    params: Mapping[str, str] | None = None,
    outputs: Mapping[str, str] | None = None,
    checkpoint_claim: str = "",
) -> BuiltJob:
    """The TrainJob ``job`` of ``specs`` for a run with ``params`` (name -> value as text) and
    ``outputs`` (``"step.output"`` -> URI or value); ``checkpoint_claim`` names the run's own
    claim (the launcher mounts it in place of the compiled one). Raises :class:`LauncherError`
    when the documents do not compile with these values (every diagnostic in the message)."""
    import yaml

    from trainspec.compiler.emit import manifest_dicts
    from trainspec.compiler.pipeline import Options, Stop, run
    from trainspec.kfp.job_pipeline import _checkpoint_claim_name, _job_name

    docs = [d for d in yaml.safe_load_all(specs) if isinstance(d, dict)]
    project = [d for d in docs if d.get("kind") == "Project"]
    others = [_with_values(d, params or {}, outputs or {}) for d in docs if d.get("kind") != "Project"]
    with tempfile.TemporaryDirectory(prefix="trainspec-step-") as tmp:
        spec_file = Path(tmp, "specs.yaml")
        spec_file.write_text(yaml.safe_dump_all(others, sort_keys=False), encoding="utf-8")
        project_file = None
        if project:
            project_file = Path(tmp, "trainspec.yaml")
            project_file.write_text(yaml.safe_dump(project[0], sort_keys=False), encoding="utf-8")
        result = run([str(spec_file)], Options(project=str(project_file) if project_file else None, stop=Stop.LOWER))
    if not result.ok:
        lines = "\n".join(f"  {d.path or '-'}: [{d.code}] {d.message}" for d in result.diagnostics if d.is_error)
        raise LauncherError(f"job {job}: the spec does not compile with this run's values:\n{lines}")
    from trainspec.compiler.lower.dialects import dialect_for

    objects = [obj for out in [*result.pipeline_jobs, *result.outputs] for obj in out.objects]
    # The job object of any engine whose launcher facts the dialect gives (kfp_step).
    kinds = {
        kind
        for p in result.plans
        if dialect_for(result.target, p.engine).kfp_step
        for kind in dialect_for(result.target, p.engine).job_kinds
    }
    trainjobs = [d for d in manifest_dicts(objects) if d["kind"] in kinds and _job_name(d) == job]
    if len(trainjobs) != 1:
        raise LauncherError(f"job {job}: the specs hold {len(trainjobs)} job objects of that name, not one")
    trainjob = trainjobs[0]
    plan = next((p for p in result.plans if p.resolved.name == job), None)
    checkpoint = getattr(plan.resolved.loaded.spec.spec, "checkpoint", None) if plan else None
    claim = checkpoint_claim or _checkpoint_claim_name(trainjob)
    where = ""
    if checkpoint is not None and checkpoint.uri:
        where = str(checkpoint.uri)
    elif claim is not None:
        where = f"pvc://{claim}{checkpoint.path if checkpoint is not None else ''}"
    return BuiltJob(trainjob, where)


def _with_values(doc: dict[str, Any], params: Mapping[str, str], outputs: Mapping[str, str]) -> dict[str, Any]:
    """A Pipeline document with the run's parameter values as defaults and upstream outputs in
    place; other documents as they are."""
    if doc.get("kind") != "Pipeline":
        return doc
    spec = dict(doc.get("spec") or {})
    declared = dict(spec.get("parameters") or {})
    for name, text in params.items():
        if name not in declared:
            raise LauncherError(f"--param {name}: the pipeline has no parameter {name!r}")
        declared[name] = {**declared[name], "default": _typed(name, text, declared[name].get("type", "string"))}
    spec["parameters"] = declared

    def value_of(ref: Ref) -> str:
        if ref.kind != "step-output":
            return f"$(params.{ref.name})" if ref.kind == "param" else f"$(outputs.{ref.name})"
        key = f"{ref.step}.{ref.name}"
        if key not in outputs:
            raise LauncherError(f"the job reads $(steps.{key}), and no --output {key} was given")
        value = outputs[key]
        for alias, scheme in _SCHEME_ALIASES.items():
            if value.startswith(alias):
                value = scheme + value[len(alias) :]
        return value

    spec["steps"] = [{**step, "job": _walk(step.get("job"), value_of)} for step in spec.get("steps") or []]
    return {**doc, "spec": spec}


def _walk(value: Any, value_of: Any) -> Any:
    if isinstance(value, str):
        return substitute(value, value_of)
    if isinstance(value, dict):
        return {key: _walk(item, value_of) for key, item in value.items()}
    if isinstance(value, list):
        return [_walk(item, value_of) for item in value]
    return value


def _typed(name: str, text: str, kind: str) -> Any:
    """A run's parameter value (as KFP passes it, text) in the parameter's type."""
    try:
        if kind == "int":
            return int(float(text)) if float(text).is_integer() else int(text)
        if kind == "float":
            return float(text)
        if kind == "bool":
            lowered = text.strip().lower()
            if lowered not in ("true", "false"):
                raise ValueError(text)
            return lowered == "true"
    except ValueError:
        raise LauncherError(f"parameter {name} is of type {kind}; this run gave {text!r}") from None
    return text


def main(argv: list[str] | None = None) -> int:
    """``python3 -m trainspec.kfp.pipeline_job_step``: what a Pipeline's job step runs in KFP."""
    parser = argparse.ArgumentParser(
        prog="python3 -m trainspec.kfp.pipeline_job_step", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--specs", required=True, help="the step's spec documents (YAML text)")
    parser.add_argument("--job", required=True, help="the TrainingJob the step runs")
    parser.add_argument("--run-id", required=True, help="the pipeline run id (names and labels the TrainJob)")
    parser.add_argument("--param", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"))
    parser.add_argument("--output", nargs=2, action="append", default=[], metavar=("STEP.NAME", "VALUE"))
    parser.add_argument("--checkpoint-claim", default="", metavar="NAME", help="the run's checkpoint claim")
    parser.add_argument("--checkpoint", metavar="FILE", help="write where the checkpoints are here")
    parser.add_argument("--status", metavar="FILE", help="write the final status JSON here")
    parser.add_argument("--trainer-api", default="2.3")
    parser.add_argument("--timeout", type=float, default=0, metavar="SECONDS")
    parser.add_argument("--poll-seconds", type=float, default=10.0)
    parser.add_argument("--namespace", default="")
    args = parser.parse_args(argv)
    from trainspec.kfp.launcher import run_launcher

    try:
        built = build_trainjob(
            args.specs,
            job=args.job,
            params=dict(args.param),
            outputs=dict(args.output),
            checkpoint_claim=args.checkpoint_claim,
        )
        kind, spec = built.trainjob.get("kind"), built.trainjob["spec"]
        print(f"[trainspec] {kind} built for this run: {json.dumps(spec.get('trainer', spec), sort_keys=True)[:2000]}")
        result = run_launcher(
            built.trainjob,
            run_id=args.run_id,
            trainer_api=args.trainer_api,
            timeout_seconds=args.timeout,
            poll_seconds=args.poll_seconds,
            namespace=args.namespace,
            checkpoint_claim=args.checkpoint_claim,
            status_path=args.status,
        )
    except LauncherError as exc:
        print(f"trainspec launcher: {exc}", file=sys.stderr)
        return 1
    if args.checkpoint:
        Path(args.checkpoint).parent.mkdir(parents=True, exist_ok=True)
        Path(args.checkpoint).write_text(built.checkpoint + "\n", encoding="utf-8")
    print(result.to_json())
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
