"""The planner's diagnostics on a job (TS420-TS429): a pinned layout that cannot work, or none that fits.

Run in the ``rules`` pass, so ``validate``, ``compile``, ``check`` and ``explain`` all say it.
A structurally impossible pin (TS421-TS423, TS426) is an error; one whose model state alone
exceeds the GPU is an error, one that only the activation estimate overflows a warning (TS425):
the activation formulas are an estimate, the model state is exact arithmetic.
"""

from __future__ import annotations

from collections.abc import Iterator

from trainspec.compiler.parallelism import fromplan, model_checks
from trainspec.compiler.parallelism.inputs import Cluster, Shape
from trainspec.compiler.parallelism.layouts import balanced_split, layer_split_problem, stages_for
from trainspec.compiler.parallelism.memory import HEADROOM
from trainspec.compiler.parallelism.recommend import Plan
from trainspec.compiler.plan import JobPlan
from trainspec.compiler.resolve import related_at
from trainspec.compiler.sizing import human_bytes
from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Severity

PAR = ("spec", "parallelism")


def check(plan: JobPlan) -> list[Diagnostic]:
    """Every planner diagnostic of ``plan`` (none unless the job has spec.model or spec.parallelism)."""
    if not fromplan.wanted(plan):
        return []
    return list(_check(plan))


def _check(plan: JobPlan) -> Iterator[Diagnostic]:
    resolved = plan.resolved
    loaded = resolved.loaded
    spec = resolved.job.spec
    yield from _parameters(plan)
    if resolved.gpus_per_node.value == 0:
        return
    cluster = fromplan.cluster(plan)
    found = fromplan.arch(plan)
    shape = found.shape if found is not None else None
    structural = list(_structural(plan, cluster, shape))
    yield from structural
    if cluster.gpu_memory is None:
        yield loaded.diagnostic(
            codes.NO_GPU_MEMORY,
            ("spec", "model") if spec.model is not None else PAR,
            f"runtime {resolved.runtime.name} does not say how much memory a GPU has: the planner cannot tell "
            "whether any layout fits",
            severity=Severity.WARNING,
            hint="set spec.accelerator: {name: H100, memory: 80Gi} in the runtime",
            related=(related_at(resolved.runtime.loaded, ("spec",), f"runtime {resolved.runtime.name}"),),
        )
        return
    if found is None or plan.parallel is None or any(d.is_error for d in structural):
        return
    yield from _fit(plan, plan.parallel)  # the plan pass's answer (the planner runs once per job)


def _parameters(plan: JobPlan) -> Iterator[Diagnostic]:
    """TS420 (no count, or two), TS460 (a count the shape disagrees with), TS461 (an inferred GPU)."""
    yield from model_checks.check(plan)


def _structural(plan: JobPlan, cluster: Cluster, shape: Shape | None) -> Iterator[Diagnostic]:
    """TS421-TS424 and TS426 on the pinned degrees and stage."""
    resolved = plan.resolved
    loaded = resolved.loaded
    par = resolved.job.spec.parallelism
    if par is None:
        return
    gpus = related_at(
        resolved.runtime.loaded,
        ("spec", "resourcesPerNode", "gpu"),
        f"runtime {resolved.runtime.name}: {cluster.gpus_per_node} GPUs per node",
    )
    if par.tp is not None and shape is not None:
        for what, heads in (("attention heads", shape.heads), ("KV heads", shape.kv_heads)):
            if heads % par.tp:
                yield loaded.diagnostic(
                    codes.TP_HEADS,
                    (*PAR, "tp"),
                    f"tp {par.tp} does not divide the model's {heads} {what}: each "
                    "tensor-parallel rank must hold whole heads",
                    hint=f"use a tp that divides {heads} (and fits a node of {cluster.gpus_per_node} GPUs)",
                    related=(related_at(loaded, ("spec", "model"), "the model"),),
                )
                break
    if par.pp is not None and shape is not None:
        yield from _layers(plan, par.pp, shape)
    if par.cp is not None and shape is not None and shape.sequence % par.cp:
        yield loaded.diagnostic(
            codes.CP_SEQUENCE,
            (*PAR, "cp"),
            f"cp {par.cp} does not divide the sequence of {shape.sequence} tokens: each context-parallel rank "
            "holds an equal share of every sequence",
            hint=f"use a cp that divides {shape.sequence}",
            related=(related_at(loaded, ("spec", "model", "sequenceLength"), "the sequence length"),),
        )
    yield from _world(plan, cluster)
    if par.tp is not None and (par.tp > cluster.gpus_per_node or cluster.gpus_per_node % par.tp):
        yield loaded.diagnostic(
            codes.TP_CROSSES_NODES,
            (*PAR, "tp"),
            f"tp {par.tp} does not fit inside a node of {cluster.gpus_per_node} GPUs: the "
            "all-reduces tensor parallelism makes in every layer would cross the network instead of NVLink",
            severity=Severity.WARNING,
            hint=f"keep tp at most {cluster.gpus_per_node} (a divisor of it) and use pp across nodes",
            related=(gpus,),
        )
    framework = par.framework.value if par.framework is not None else None
    zero = par.pinned_zero
    pp = par.pp or 1
    if zero is not None and zero not in stages_for(framework, pp):
        field = "zeroStage" if par.zero_stage is not None else "fsdp" if par.fsdp else "distributedOptimizer"
        allowed = ", ".join(map(str, stages_for(framework, pp)))
        with_pp = f" with pp {pp}" if pp > 1 else ""
        message = (
            f"{framework} does not run ZeRO stage {zero}{with_pp} (it runs stages {allowed})"
            if framework
            else f"no framework runs ZeRO stage {zero}{with_pp}: a pipeline accumulates the gradients "
            f"ZeRO-2 would reduce-scatter every micro-batch (stages {allowed} can)"
        )
        yield loaded.diagnostic(
            codes.ZERO_STAGE,
            (*PAR, field),
            message,
            hint="pick a stage the framework runs, or change pp (docs/parallelism.md lists each framework's stages)",
        )


def _layers(plan: JobPlan, pp: int, shape: Shape) -> Iterator[Diagnostic]:
    """TS422: the pinned pipeline stages cannot hold the layers (evenly, or as the uneven split says)."""
    loaded = plan.resolved.loaded
    par = plan.resolved.job.spec.parallelism
    assert par is not None
    first, last = par.first_stage_layers or 0, par.last_stage_layers or 0
    problem = layer_split_problem(shape.layers, pp, first, last, par.virtual_stages or 1)
    if problem is None:
        return
    uneven = first or last
    split = balanced_split(shape.layers, pp)
    if "virtual stages" in problem:
        hint = "set virtualStages to a number that divides every stage's layers, or leave it out"
    elif split is not None and split != (0, 0) and not uneven:
        hint = (
            f"give the first and last stages one layer less (firstStageLayers: {split[0]}, lastStageLayers: "
            f"{split[1]}; the split Llama 3 405B trained with), and tell your framework the same"
        )
    else:
        hint = f"use a pp that divides {shape.layers}, or set firstStageLayers and lastStageLayers"
    yield loaded.diagnostic(
        codes.PP_LAYERS,
        (*PAR, "virtualStages")
        if "virtual stages" in problem
        else (*PAR, "firstStageLayers")
        if uneven
        else (*PAR, "pp"),
        f"pp {pp}: {problem}"
        if uneven or problem.startswith(tuple("0123456789"))
        else f"pp {pp} does not divide the model's {shape.layers} layers into equal pipeline stages",
        hint=hint,
        related=(related_at(loaded, ("spec", "model", "layers"), "the layers"),),
    )


def _world(plan: JobPlan, cluster: Cluster) -> Iterator[Diagnostic]:
    """TS423: the pinned degrees do not multiply to (or divide) the world size."""
    resolved = plan.resolved
    par = resolved.job.spec.parallelism
    if par is None:
        return
    pinned = (("tp", par.tp), ("cp", par.cp), ("pp", par.pp), ("dp", par.dp))
    degrees = {name: value for name, value in pinned if value is not None}
    if not degrees:
        return
    product = 1
    for value in degrees.values():
        product *= value
    world = cluster.world
    complete = all(name in degrees for name in ("tp", "pp", "dp"))
    if (complete and product != world) or (not complete and world % product):
        shown = " x ".join(f"{name} {value}" for name, value in degrees.items())
        verb = "is not" if complete else "does not divide"
        yield resolved.loaded.diagnostic(
            codes.LAYOUT_WORLD_SIZE,
            (*PAR, next(iter(degrees))),
            f"{shown} = {product} {verb} the world size {world} ({resolved.nodes.value} nodes x "
            f"{cluster.gpus_per_node} GPUs)",
            hint="make tp x cp x pp x dp equal the GPUs of the job, or leave dp out (it is the world size / "
            "(tp x cp x pp))",
            related=(related_at(resolved.loaded, resolved.nodes.path or ("spec", "nodes"), "the node count"),)
            if resolved.nodes.path
            else (),
        )


def _fit(plan: JobPlan, result: Plan) -> Iterator[Diagnostic]:
    """TS425 (a fully pinned layout that does not fit) or TS427 (no layout at all fits)."""
    loaded = plan.resolved.loaded
    gpu = result.inputs.cluster.gpu_memory or 0
    usable = int(gpu * HEADROOM)
    if result.pinned and result.chosen is not None and not result.chosen.fits:
        chosen = result.chosen
        state_too_big = chosen.memory.state > gpu
        need = chosen.memory.state if state_too_big else chosen.memory.total
        what = "its model state alone (weights, gradients, optimizer) needs" if state_too_big else "it needs about"
        yield loaded.diagnostic(
            codes.LAYOUT_MEMORY,
            PAR,
            f"the pinned layout {chosen.layout.describe()} does not fit: {what} "
            f"{human_bytes(need)} per GPU, {'more than the' if state_too_big else 'over 90% of the'} "
            f"{human_bytes(gpu)} a GPU has",
            severity=Severity.ERROR if state_too_big else Severity.WARNING,
            hint=_fit_hint(result),
        )
    elif not result.pinned and result.chosen is None and result.layouts:
        least = min(result.layouts, key=lambda s: s.memory.total)
        pinned = "" if result.inputs.pin.empty else " that agrees with spec.parallelism"
        yield loaded.diagnostic(
            codes.NO_LAYOUT_FITS,
            ("spec", "model") if plan.resolved.job.spec.model is not None else PAR,
            f"no layout of {result.inputs.cluster.world} GPUs{pinned} fits {human_bytes(usable)} per GPU: the "
            f"least memory is {human_bytes(least.memory.total)} ({least.layout.describe()})",
            severity=Severity.WARNING,
            hint="add nodes, shorten sequenceLength or microBatch, or relax the pin; "
            "`trainspec explain` shows every layout",
        )


def _fit_hint(result: Plan) -> str:
    # What the planner picks without the pin: answered with the plan (Plan.unpinned), not asked again.
    best = result.unpinned
    if best is None:
        return "no layout of this many GPUs fits: add nodes (trainspec explain shows the table)"
    return f"the planner recommends {best.layout.describe()} ({human_bytes(best.memory.total)} per GPU)"
