"""Every spec field that ends up under a Kubernetes rule: a value at the limit passes, a value just
past it is an error located at the field (line, column, path), before anything reaches a cluster.

One table, one row per field and rule (docs/check.md, "Every spec field and the rule the cluster
applies", is the same table in prose). A row gives the document kind, the YAML line at the limit
and the line just past it, the code, the field path and the text the diagnostic points at.
"""

from __future__ import annotations

from typing import NamedTuple

import pytest

from trainspec.dsl.kube_facts import (
    ANNOTATIONS_SPEC_MAX,
    EXTENDED_RESOURCE_PREFIX_MAX,
    IMAGE_MAX,
    IMAGE_NAME_MAX,
    INT32_MAX,
    INT64_MAX,
    MAX_CPU_MILLI,
    MAX_USER_ID,
    PATH_MAX,
    SEED_MAX,
)
from trainspec.dsl.load.spec_sources import load_string

_JOB, _RUNTIME = "kind: TrainingJob\nmetadata: {name: sft, namespace: team-nlp}", "kind: Runtime\nmetadata: {name: rt}"
#: The document before a row's own line, by kind ("bare-": without the field the row sets itself).
BEFORE = {
    "job": f"{_JOB}\nspec:\n  runtime: trainspec-torch\n",
    "bare-job": f"{_JOB}\nspec:\n",
    "runtime": f"{_RUNTIME}\nspec:\n  framework: mpi\n  image: example.com/mpi:1\n",
    "bare-runtime": f"{_RUNTIME}\nspec:\n  framework: mpi\n",
    "project": "kind: Project\nspec:\n",
}


class Row(NamedTuple):
    kind: str  # job, runtime or project
    at: str  # the row's YAML line at the limit: "metadata: ..." replaces line 3, else a spec line
    past: str  # the same just past the limit
    code: str
    path: str  # the diagnostic's field path
    points_at: str  # the text of `past` the diagnostic's column points at


def document(kind: str, lines: str) -> tuple[str, int]:
    """The document with the row's ``lines`` in it, and the line number its first line lands on."""
    before = "apiVersion: trainspec.dev/v1alpha1\n" + BEFORE[kind]
    if lines.startswith("metadata:"):  # in place of the metadata line
        head, _, rest = before.partition("\nmetadata:")
        return f"{head}\n{lines}\n{rest.partition(chr(10))[2]}", 3
    return f"{before}{lines}\n", before.count("\n") + 1


N63, N64 = "a" * 63, "a" * 64
SUB253, SUB254 = "a" * 253, "a" * 254
ENV256, ENV257 = "E" * 256, "E" * 257
ANNOTATION_AT = "x" * (ANNOTATIONS_SPEC_MAX - 1)  # with its one-character key: exactly the limit
ANNOTATION_PAST = ANNOTATION_AT + "x"
IMAGE_AT = "r" * IMAGE_NAME_MAX
DIGEST_AT = "@sha256:" + "0" * (IMAGE_MAX - IMAGE_NAME_MAX - len("@sha256:"))  # reference exactly IMAGE_MAX long
DOMAIN_AT, DOMAIN_PAST = "d" * EXTENDED_RESOURCE_PREFIX_MAX, "d" * (EXTENDED_RESOURCE_PREFIX_MAX + 1)
PATH_AT, PATH_PAST = "/" + "p" * (PATH_MAX - 1), "/" + "p" * PATH_MAX

ROWS = {
    # -- TrainingJob: metadata ----------------------------------------------------------------------
    "job metadata.name: RFC 1035 label": Row(
        "job", f"metadata: {{name: {'j' * 63}}}", f"metadata: {{name: {'j' * 64}}}", "TS206", "metadata.name", "jjj"
    ),
    "job metadata.namespace: RFC 1123 label": Row(
        "job",
        f"metadata: {{name: sft, namespace: {N63}}}",
        f"metadata: {{name: sft, namespace: {N64}}}",
        "TS206",
        "metadata.namespace",
        N64,
    ),
    "job metadata.labels value: label value": Row(
        "job",
        f"metadata: {{name: sft, labels: {{team: {N63}}}}}",
        f"metadata: {{name: sft, labels: {{team: {N64}}}}}",
        "TS210",
        "metadata.labels.team",
        N64,
    ),
    "job metadata.labels key: qualified name": Row(
        "job",
        f"metadata: {{name: sft, labels: {{{N63}: v}}}}",
        f"metadata: {{name: sft, labels: {{{N64}: v}}}}",
        "TS210",
        f"metadata.labels.{N64}",
        N64,
    ),
    "job metadata.labels key prefix: DNS-1123 subdomain": Row(
        "job",
        f"metadata: {{name: sft, labels: {{{SUB253}/k: v}}}}",
        f"metadata: {{name: sft, labels: {{{SUB254}/k: v}}}}",
        "TS210",
        f"metadata.labels.{SUB254}/k",
        SUB254,
    ),
    "job metadata.annotations: total size": Row(
        "job",
        f"metadata: {{name: sft, annotations: {{k: {ANNOTATION_AT}}}}}",
        f"metadata: {{name: sft, annotations: {{k: {ANNOTATION_PAST}}}}}",
        "TS210",
        "metadata.annotations",
        "annotations",
    ),
    # -- TrainingJob: spec -----------------------------------------------------------------------
    "job spec.runtime: DNS-1123 subdomain": Row(
        "bare-job", f"  runtime: {SUB253}", f"  runtime: {SUB254}", "TS206", "spec.runtime", SUB254
    ),
    "job spec.image: repository name length": Row(
        "job", f"  image: {IMAGE_AT}", f"  image: {IMAGE_AT}r", "TS203", "spec.image", "rrr"
    ),
    "job spec.image: reference length": Row(
        "job", f"  image: {IMAGE_AT}{DIGEST_AT}", f"  image: {IMAGE_AT}{DIGEST_AT}0", "TS203", "spec.image", "rrr"
    ),
    "job spec.image: reference grammar": Row(
        "job",
        "  image: registry.example.com/team/train:1",
        "  image: registry.example.com/Team/train:1",
        "TS203",
        "spec.image",
        "registry",
    ),
    "job spec.env name: env var name": Row(
        "job", f"  env: {{{ENV256}: x}}", f"  env: {{{ENV257}: x}}", "TS211", f"spec.env.{ENV257}", ENV257
    ),
    "job spec.secretEnv.secret: DNS-1123 subdomain": Row(
        "job",
        f"  secretEnv: {{HF_TOKEN: {{secret: {SUB253}, key: token}}}}",
        f"  secretEnv: {{HF_TOKEN: {{secret: {SUB254}, key: token}}}}",
        "TS206",
        "spec.secretEnv.HF_TOKEN.secret",
        SUB254,
    ),
    "job spec.secretEnv.key: Secret key length": Row(
        "job",
        f"  secretEnv: {{HF_TOKEN: {{secret: hf, key: {'k' * 253}}}}}",
        f"  secretEnv: {{HF_TOKEN: {{secret: hf, key: {'k' * 254}}}}}",
        "TS206",
        "spec.secretEnv.HF_TOKEN.key",
        "kkk",
    ),
    "job spec.secretEnv.key: Secret key characters": Row(
        "job",
        "  secretEnv: {HF_TOKEN: {secret: hf, key: tls.crt}}",
        "  secretEnv: {HF_TOKEN: {secret: hf, key: 'a/b:c'}}",
        "TS206",
        "spec.secretEnv.HF_TOKEN.key",
        "'a/b:c'",
    ),
    "job spec.nodes: int32 count": Row("job", "  nodes: 10000", "  nodes: 10001", "TS203", "spec.nodes", "10001"),
    "job spec.procsPerNode: int32 count": Row(
        "job", "  procsPerNode: 256", "  procsPerNode: 257", "TS203", "spec.procsPerNode", "257"
    ),
    "job spec.resourcesPerNode.gpu: count": Row(
        "job",
        "  resourcesPerNode: {gpu: 64}",
        "  resourcesPerNode: {gpu: 65}",
        "TS203",
        "spec.resourcesPerNode.gpu",
        "65",
    ),
    "job spec.resourcesPerNode.cpu: int64 milli-cores": Row(
        "job",
        f"  resourcesPerNode: {{cpu: {MAX_CPU_MILLI}m}}",
        f"  resourcesPerNode: {{cpu: {MAX_CPU_MILLI + 1}m}}",
        "TS203",
        "spec.resourcesPerNode.cpu",
        str(MAX_CPU_MILLI + 1),
    ),
    "job spec.resourcesPerNode.memory: int64 quantity": Row(
        "job",
        f"  resourcesPerNode: {{memory: {INT64_MAX}}}",
        f"  resourcesPerNode: {{memory: {INT64_MAX + 1}}}",
        "TS203",
        "spec.resourcesPerNode.memory",
        str(INT64_MAX + 1),
    ),
    "job spec.resourcesPerNode.extra: extended resources take whole amounts": Row(
        "job",
        "  resourcesPerNode: {extra: {rdma/ib: 4}}",
        "  resourcesPerNode: {extra: {rdma/ib: 3.7}}",
        "TS204",
        "spec.resourcesPerNode.extra.rdma/ib",
        "3.7",
    ),
    "job spec.resourcesPerNode.extra key: extended resource domain": Row(
        "job",
        f"  resourcesPerNode: {{extra: {{{DOMAIN_AT}/dev: 1}}}}",
        f"  resourcesPerNode: {{extra: {{{DOMAIN_PAST}/dev: 1}}}}",
        "TS210",
        f"spec.resourcesPerNode.extra.{DOMAIN_PAST}/dev",
        DOMAIN_PAST,
    ),
    "job spec.resourcesPerNode.extra key: a name without domain is a standard resource": Row(
        "job",
        "  resourcesPerNode: {extra: {hugepages-2Mi: 4Mi}}",
        "  resourcesPerNode: {extra: {fpga: 1}}",
        "TS210",
        "spec.resourcesPerNode.extra.fpga",
        "fpga",
    ),
    "job spec.resourcesPerNode.extra: huge pages in whole pages": Row(
        "job",
        "  resourcesPerNode: {extra: {hugepages-2Mi: 4Mi}}",
        "  resourcesPerNode: {extra: {hugepages-2Mi: 3Mi}}",
        "TS204",
        "spec.resourcesPerNode.extra.hugepages-2Mi",
        "3Mi",
    ),
    "job spec.queue: label value": Row("job", f"  queue: {N63}", f"  queue: {N64}", "TS206", "spec.queue", N64),
    "job spec.queue: no line break": Row(
        "job", '  queue: "team-nlp"', '  queue: "team-nlp\\n"', "TS206", "spec.queue", '"team'
    ),
    "job spec.priority: label value": Row(
        "job", f"  priority: {N63}", f"  priority: {N64}", "TS206", "spec.priority", N64
    ),
    "job spec.maxRunTime: int32 seconds": Row(
        "job",
        f"  maxRunTime: {INT32_MAX}s",
        f"  maxRunTime: {INT32_MAX + 1}s",
        "TS203",
        "spec.maxRunTime",
        str(INT32_MAX + 1),
    ),
    "job spec.topology.level: label key": Row(
        "job",
        f"  topology: {{level: example.com/{N63}}}",
        f"  topology: {{level: example.com/{N64}}}",
        "TS210",
        "spec.topology.level",
        "example.com",
    ),
    "job spec.data.source: pvc claim name": Row(
        "job",
        f"  data: {{source: 'pvc://{SUB253}/d'}}",
        f"  data: {{source: 'pvc://{SUB254}/d'}}",
        "TS207",
        "spec.data.source",
        "'pvc",
    ),
    "job spec.data.seed: uint64": Row(
        "job",
        f"  data: {{source: s3://b/d, seed: {SEED_MAX}}}",
        f"  data: {{source: s3://b/d, seed: {SEED_MAX + 1}}}",
        "TS203",
        "spec.data.seed",
        str(SEED_MAX + 1),
    ),
    "job spec.checkpoint.path: mount path length": Row(
        "job",
        f"  checkpoint: {{size: 1Ti, path: {PATH_AT}}}",
        f"  checkpoint: {{size: 1Ti, path: {PATH_PAST}}}",
        "TS203",
        "spec.checkpoint.path",
        "/ppp",
    ),
    "job spec.checkpoint.size: storage > 0": Row(
        "job", "  checkpoint: {size: 1}", "  checkpoint: {size: 0}", "TS203", "spec.checkpoint.size", "0}"
    ),
    "job spec.checkpoint.keep: int32 count": Row(
        "job",
        "  checkpoint: {size: 1Ti, keep: 1000}",
        "  checkpoint: {size: 1Ti, keep: 1001}",
        "TS203",
        "spec.checkpoint.keep",
        "1001",
    ),
    "job spec.checkpoint.storageClass: DNS-1123 subdomain": Row(
        "job",
        f"  checkpoint: {{size: 1Ti, storageClass: {SUB253}}}",
        f"  checkpoint: {{size: 1Ti, storageClass: {SUB254}}}",
        "TS206",
        "spec.checkpoint.storageClass",
        SUB254,
    ),
    "job spec.checkpoint.claimName: DNS-1123 subdomain": Row(
        "job",
        f"  checkpoint: {{claimName: {SUB253}}}",
        f"  checkpoint: {{claimName: {SUB254}}}",
        "TS206",
        "spec.checkpoint.claimName",
        SUB254,
    ),
    "job spec.rerun: bound": Row("job", "  rerun: 1000000", "  rerun: 1000001", "TS203", "spec.rerun", "1000001"),
    "job spec.podLabels value: label value": Row(
        "job", f"  podLabels: {{team: {N63}}}", f"  podLabels: {{team: {N64}}}", "TS210", "spec.podLabels.team", N64
    ),
    "job spec.podAnnotations: total size": Row(
        "job",
        f"  podAnnotations: {{k: {ANNOTATION_AT}}}",
        f"  podAnnotations: {{k: {ANNOTATION_PAST}}}",
        "TS210",
        "spec.podAnnotations",
        "podAnnotations",
    ),
    "job spec.observability.team: label value": Row(
        "job",
        f"  observability: {{team: {N63}}}",
        f"  observability: {{team: {N64}}}",
        "TS210",
        "spec.observability.team",
        N64,
    ),
    "job spec.notSecret: env var name": Row(
        "job",
        f"  env: {{SORT_KEY: id, {ENV256}: x}}\n  notSecret: [SORT_KEY, {ENV256}]",
        f"  env: {{SORT_KEY: id, {ENV256}: x}}\n  notSecret: [SORT_KEY, {ENV257}]",
        "TS211",
        "spec.notSecret[1]",
        ENV257,
    ),
    # -- Runtime ------------------------------------------------------------------------------------
    "runtime metadata.name: RFC 1035 label": Row(
        "runtime", f"metadata: {{name: {'r' * 63}}}", f"metadata: {{name: {'r' * 64}}}", "TS206", "metadata.name", "rrr"
    ),
    "runtime metadata.annotations: total size": Row(
        "runtime",
        f"metadata: {{name: rt, annotations: {{k: {ANNOTATION_AT}}}}}",
        f"metadata: {{name: rt, annotations: {{k: {ANNOTATION_PAST}}}}}",
        "TS210",
        "metadata.annotations",
        "annotations",
    ),
    "runtime spec.image: reference grammar": Row(
        "bare-runtime", "  image: example.com/mpi:1", "  image: 'example.com/mpi:1 '", "TS203", "spec.image", "'example"
    ),
    "runtime spec.env name: env var name": Row(
        "runtime", f"  env: {{{ENV256}: x}}", f"  env: {{{ENV257}: x}}", "TS211", f"spec.env.{ENV257}", ENV257
    ),
    "runtime spec.maxNodes: int32 count": Row(
        "runtime", "  maxNodes: 10000", "  maxNodes: 10001", "TS203", "spec.maxNodes", "10001"
    ),
    "runtime spec.gpuResource: extended resource name": Row(
        "runtime", "  gpuResource: amd.com/gpu", "  gpuResource: 'gpu'", "TS210", "spec.gpuResource", "'gpu'"
    ),
    "runtime spec.gpuResource: extended resource domain": Row(
        "runtime",
        f"  gpuResource: {DOMAIN_AT}/gpu",
        f"  gpuResource: {DOMAIN_PAST}/gpu",
        "TS210",
        "spec.gpuResource",
        DOMAIN_PAST,
    ),
    "runtime spec.sharedMemory: size > 0": Row(
        "runtime", "  sharedMemory: 1", "  sharedMemory: 0", "TS203", "spec.sharedMemory", "0"
    ),
    "runtime spec.network.resources: extended resources take whole amounts": Row(
        "runtime",
        "  network: {resources: {rdma/ib: 8}}",
        "  network: {resources: {rdma/ib: 3.7}}",
        "TS204",
        "spec.network.resources.rdma/ib",
        "3.7",
    ),
    "runtime spec.network.env name: env var name": Row(
        "runtime",
        f"  network: {{env: {{{ENV256}: x}}}}",
        f"  network: {{env: {{{ENV257}: x}}}}",
        "TS211",
        f"spec.network.env.{ENV257}",
        ENV257,
    ),
    "runtime spec.restarts.max: int32 count": Row(
        "runtime", "  restarts: {max: 1000}", "  restarts: {max: 1001}", "TS203", "spec.restarts.max", "1001"
    ),
    "runtime spec.scheduling.nodeSelector value: label value": Row(
        "runtime",
        f"  scheduling: {{nodeSelector: {{pool: {N63}}}}}",
        f"  scheduling: {{nodeSelector: {{pool: {N64}}}}}",
        "TS210",
        "spec.scheduling.nodeSelector.pool",
        N64,
    ),
    "runtime spec.scheduling.tolerations key: label key": Row(
        "runtime",
        f"  scheduling: {{tolerations: [{{key: {N63}, operator: Exists}}]}}",
        f"  scheduling: {{tolerations: [{{key: {N64}, operator: Exists}}]}}",
        "TS210",
        "spec.scheduling.tolerations[0].key",
        N64,
    ),
    "runtime spec.scheduling.tolerations value: label value": Row(
        "runtime",
        f"  scheduling: {{tolerations: [{{key: k, value: {N63}}}]}}",
        f"  scheduling: {{tolerations: [{{key: k, value: {N64}}}]}}",
        "TS210",
        "spec.scheduling.tolerations[0].value",
        N64,
    ),
    "runtime spec.scheduling.tolerations: Exists takes no value": Row(
        "runtime",
        "  scheduling: {tolerations: [{key: k, operator: Exists}]}",
        "  scheduling: {tolerations: [{key: k, operator: Exists, value: v}]}",
        "TS203",
        "spec.scheduling.tolerations[0]",
        "{key",
    ),
    "runtime spec.scheduling.tolerations: no key needs Exists": Row(
        "runtime",
        "  scheduling: {tolerations: [{operator: Exists}]}",
        "  scheduling: {tolerations: [{operator: Equal}]}",
        "TS203",
        "spec.scheduling.tolerations[0]",
        "{operator",
    ),
    "runtime spec.scheduling.tolerations: tolerationSeconds needs NoExecute": Row(
        "runtime",
        "  scheduling: {tolerations: [{key: k, effect: NoExecute, tolerationSeconds: 60}]}",
        "  scheduling: {tolerations: [{key: k, effect: NoSchedule, tolerationSeconds: 60}]}",
        "TS203",
        "spec.scheduling.tolerations[0]",
        "{key",
    ),
    "runtime spec.scheduling.tolerations: tolerationSeconds int64": Row(
        "runtime",
        f"  scheduling: {{tolerations: [{{key: k, effect: NoExecute, tolerationSeconds: {INT64_MAX}}}]}}",
        f"  scheduling: {{tolerations: [{{key: k, effect: NoExecute, tolerationSeconds: {INT64_MAX + 1}}}]}}",
        "TS203",
        "spec.scheduling.tolerations[0].tolerationSeconds",
        str(INT64_MAX + 1),
    ),
    "runtime spec.scheduling.schedulerName: DNS-1123 subdomain": Row(
        "runtime",
        f"  scheduling: {{schedulerName: {SUB253}}}",
        f"  scheduling: {{schedulerName: {SUB254}}}",
        "TS206",
        "spec.scheduling.schedulerName",
        SUB254,
    ),
    "runtime spec.scheduling.priorityClassName: DNS-1123 subdomain": Row(
        "runtime",
        f"  scheduling: {{priorityClassName: {SUB253}}}",
        f"  scheduling: {{priorityClassName: {SUB254}}}",
        "TS206",
        "spec.scheduling.priorityClassName",
        SUB254,
    ),
    "runtime spec.scheduling.volcanoQueue: DNS-1123 subdomain": Row(
        "runtime",
        f"  scheduling: {{volcanoQueue: {SUB253}}}",
        f"  scheduling: {{volcanoQueue: {SUB254}}}",
        "TS206",
        "spec.scheduling.volcanoQueue",
        SUB254,
    ),
    "runtime spec.scheduling.gangTimeout: int32 seconds": Row(
        "runtime",
        "  scheduling: {gangTimeout: 596523h}",
        "  scheduling: {gangTimeout: 596524h}",
        "TS203",
        "spec.scheduling.gangTimeout",
        "596524h",
    ),
    "runtime spec.dataSharding.storageClass: DNS-1123 subdomain": Row(
        "runtime",
        f"  dataSharding: {{storageClass: {SUB253}}}",
        f"  dataSharding: {{storageClass: {SUB254}}}",
        "TS206",
        "spec.dataSharding.storageClass",
        SUB254,
    ),
    "runtime spec.dataSharding.size: storage > 0": Row(
        "runtime", "  dataSharding: {size: 1}", "  dataSharding: {size: 0}", "TS203", "spec.dataSharding.size", "0}"
    ),
    "runtime spec.mpi.sshAuthMountPath: CRD maxLength": Row(
        "runtime",
        f"  mpi: {{sshAuthMountPath: {PATH_AT}}}",
        f"  mpi: {{sshAuthMountPath: {PATH_PAST}}}",
        "TS203",
        "spec.mpi.sshAuthMountPath",
        "/ppp",
    ),
    "runtime spec.mpi.runAsUser: user id": Row(
        "runtime",
        f"  mpi: {{runAsUser: {MAX_USER_ID}}}",
        f"  mpi: {{runAsUser: {MAX_USER_ID + 1}}}",
        "TS203",
        "spec.mpi.runAsUser",
        str(MAX_USER_ID + 1),
    ),
    "runtime spec.mpi.sshPort: port": Row(
        "runtime", "  mpi: {sshPort: 65535}", "  mpi: {sshPort: 65536}", "TS203", "spec.mpi.sshPort", "65536"
    ),
    "runtime spec.observability.metricsPort: port": Row(
        "runtime",
        "  observability: {metricsPort: 65535}",
        "  observability: {metricsPort: 65536}",
        "TS203",
        "spec.observability.metricsPort",
        "65536",
    ),
    "runtime spec.observability.podMonitorLabels value: label value": Row(
        "runtime",
        f"  observability: {{podMonitorLabels: {{release: {N63}}}}}",
        f"  observability: {{podMonitorLabels: {{release: {N64}}}}}",
        "TS210",
        "spec.observability.podMonitorLabels.release",
        N64,
    ),
    # -- Project (trainspec.yaml) ---------------------------------------------------------------
    "project spec.defaults.queue: label value": Row(
        "project",
        f"  defaults: {{queue: {N63}}}",
        f"  defaults: {{queue: {N64}}}",
        "TS206",
        "spec.defaults.queue",
        N64,
    ),
    "project spec.defaults.priority: label value": Row(
        "project",
        f"  defaults: {{priority: {N63}}}",
        f"  defaults: {{priority: {N64}}}",
        "TS206",
        "spec.defaults.priority",
        N64,
    ),
    "project spec.defaults.namespace: RFC 1123 label": Row(
        "project",
        f"  defaults: {{namespace: {N63}}}",
        f"  defaults: {{namespace: {N64}}}",
        "TS206",
        "spec.defaults.namespace",
        N64,
    ),
    "project spec.defaults.storageClass: DNS-1123 subdomain": Row(
        "project",
        f"  defaults: {{storageClass: {SUB253}}}",
        f"  defaults: {{storageClass: {SUB254}}}",
        "TS206",
        "spec.defaults.storageClass",
        SUB254,
    ),
    "project spec.defaults.stageImage: reference grammar": Row(
        "project",
        "  defaults: {stageImage: registry.example.com/trainspec:0.1}",
        "  defaults: {stageImage: 'registry.example.com/trainspec:0.1:x'}",
        "TS203",
        "spec.defaults.stageImage",
        "'registry",
    ),
    "project spec.policy.maxGpusPerJob: int32": Row(
        "project",
        f"  policy: {{maxGpusPerJob: {INT32_MAX}}}",
        f"  policy: {{maxGpusPerJob: {INT32_MAX + 1}}}",
        "TS203",
        "spec.policy.maxGpusPerJob",
        str(INT32_MAX + 1),
    ),
    "project spec.policy.requiredLabels: label key": Row(
        "project",
        f"  policy: {{requiredLabels: [{N63}]}}",
        f"  policy: {{requiredLabels: [{N64}]}}",
        "TS210",
        "spec.policy.requiredLabels[0]",
        N64,
    ),
}


@pytest.mark.parametrize("row", ROWS.values(), ids=ROWS.keys())
def test_a_field_takes_its_limit_and_refuses_one_more_located(row: Row) -> None:
    text, _ = document(row.kind, row.at)
    _, problems = load_string(text)
    assert problems == []
    text, first = document(row.kind, row.past)
    _, problems = load_string(text)
    [problem] = problems
    [(offset, shown)] = [(i, t) for i, t in enumerate(row.past.split("\n")) if row.points_at in t]
    assert (problem.code, problem.path, problem.is_error) == (row.code, row.path, True), problem.message
    assert (problem.line, problem.column) == (first + offset, shown.index(row.points_at) + 1), problem.message
    assert problem.hint, problem.message


def test_the_table_covers_every_field_kind_of_rule() -> None:
    """Each Kubernetes rule the docs table names has at least one row here."""
    rules = {name.split(": ", 1)[1] for name in ROWS}
    for rule in (
        "label value",
        "DNS-1123 subdomain",
        "RFC 1035 label",
        "extended resources take whole amounts",
        "Secret key characters",
        "total size",
        "env var name",
        "reference grammar",
    ):
        assert rule in rules, rule
