"""The diagnostic codes: one named constant per code, with its one-line meaning.

Code refers to a code by name (``codes.UNKNOWN_FIELD``), never by its text (``"TS200"``), so a
typo is a type checker's error and every code is listed here once. A :class:`Code` *is* its text:
a ``str`` subclass whose value is ``"TS200"``, so it prints, compares, hashes, sorts and goes into
JSON exactly as the plain string (what tools and tests match on). Codes are public and stable: a
code never changes meaning, and a number once given is never given again (:data:`RETIRED`).

Grouped by the hundred: TS1xx reading files, TS2xx the spec schema, TS3xx cross-field meaning,
TS4xx compiling, TS5xx checking emitted manifests and targets, TS6xx project policy, TS7xx running
a job (TS70x locally, TS71x-TS73x on a cluster). ``tests/test_diagnostic_codes.py`` keeps this
module, the code that uses it and the README's and docs' code tables in step.

Why not an :class:`enum.Enum`: creating one of this size costs about 2.5 ms at every start-up
(every command imports the diagnostics), these constants about 0.2 ms; and an enum member's
``format()``, ``hash()`` and YAML/JSON handling differ from its value's unless overridden one by one.
"""

from __future__ import annotations

from typing import Any, Final


class Code(str):
    """A diagnostic code: the string ``"TSnnn"`` itself, with its one-line ``description``."""

    description: str

    def __new__(cls, code: str, description: str) -> Code:
        self = super().__new__(cls, code)
        self.description = description
        return self

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        # Pickled (a diagnostic crossing a process) by name: unpickled, it is the registry's Code.
        return (code_named, (str(self),))


#: Numbers that were given once and are not reported any more: never to be reused for a new meaning.
#: TS408 ("compiled output is stale") was never reported: ``compile --check`` lists stale files itself.
RETIRED: Final = frozenset({"TS408"})

# -- reading files ---------------------------------------------------------------------------------
UNREADABLE_FILE: Final = Code("TS100", "file cannot be read (missing, a directory, or permission denied)")
NOT_UTF8: Final = Code("TS101", "file is not valid UTF-8")
FILE_TOO_LARGE: Final = Code("TS102", "file is larger than the size cap")
YAML_SYNTAX: Final = Code("TS103", "YAML syntax error")
TAB_INDENT: Final = Code("TS104", "tab character in indentation")
DUPLICATE_KEY: Final = Code("TS105", "duplicate key in a mapping")
ALIAS_BOMB: Final = Code("TS106", "alias expansion beyond the cap (possible billion-laughs document)")
NOT_A_MAPPING: Final = Code("TS107", "document is not a mapping")
EMPTY_DOCUMENT: Final = Code("TS108", "empty document (ignored)")
YAML11_IMPLICIT: Final = Code("TS109", "YAML 1.1 implicit boolean/number/null where a string is expected")
UNKNOWN_KIND: Final = Code("TS110", "unknown kind for apiVersion trainspec.dev")
UNSUPPORTED_API_VERSION: Final = Code("TS111", "unsupported trainspec apiVersion")
PYTHON_IMPORT_FAILED: Final = Code("TS112", "Python spec file failed to import")
DISALLOWED_TAG_OR_KEY: Final = Code("TS113", "YAML tag or key type not allowed in specs")
NOT_READ_AS_SPEC: Final = Code(
    "TS114",
    "document looks like a spec but is not read as one (apiVersion missing, misspelled or of another group)",
)
PYTHON_TIMEOUT: Final = Code("TS115", "Python spec module ran longer than the time limit")
PYTHON_OUTPUT: Final = Code(
    "TS116",
    "Python spec module wrote to stdout or stderr (shown as notes, kept out of the output)",
)
PYTHON_NO_SPECS: Final = Code("TS117", "Python spec module defines no TrainingJob or Runtime (warning)")
NOT_A_REGULAR_FILE: Final = Code(
    "TS118",
    "not a regular file (FIFO, socket, device), a symlink loop, or a symlinked directory: not read",
)
PATH_TOO_LONG: Final = Code("TS119", "path name too long for the file system")
PYTHON_ENDED: Final = Code(
    "TS120",
    "a Python spec module ended without handing back its specs (exit, signal, crash, malformed result)",
)
PYTHON_RESULT_TOO_LARGE: Final = Code("TS121", "a Python spec module handed back more data than the cap")
PYTHON_LEFTOVER_PROCESSES: Final = Code(
    "TS122",
    "a Python spec module left processes running after it ended (they were killed)",
)
PYTHON_NOT_RUN: Final = Code(
    "TS123",
    "a Python spec module was not run (--no-python, project spec.python: warn or deny, or read from standard input)",
)
UNSAFE_FILE_NAME: Final = Code("TS124", "file name with a control or bidirectional-override character: not read")

# -- the spec schema -------------------------------------------------------------------------------
UNKNOWN_FIELD: Final = Code("TS200", "unknown field")
MISSING_FIELD: Final = Code("TS201", "missing required field")
WRONG_TYPE: Final = Code("TS202", "wrong type")
OUT_OF_RANGE: Final = Code("TS203", "value out of range or not one of the allowed values")
INVALID_QUANTITY: Final = Code("TS204", "invalid Kubernetes quantity")
INVALID_DURATION: Final = Code("TS205", "invalid duration")
INVALID_NAME: Final = Code("TS206", "invalid name (must be an RFC 1035 label)")
INVALID_URI: Final = Code("TS207", "invalid URI or scheme not allowed here")
CHECKPOINT_FORMS: Final = Code("TS208", "checkpoint forms are mutually exclusive")
INVALID_PARAM_COUNT: Final = Code("TS209", "invalid parameter count")
INVALID_LABEL: Final = Code("TS210", "invalid label or annotation key or value")
INVALID_ENV_NAME: Final = Code("TS211", "invalid environment variable name")
SHARD_MODE_ASSIGNMENT: Final = Code("TS212", "data.mode: index with an assignment other than contiguous")

# -- meaning across fields -------------------------------------------------------------------------
PROCS_VS_GPUS: Final = Code("TS300", "procsPerNode does not match the GPUs per node")
RWO_MULTI_NODE: Final = Code("TS301", "multi-node job with a ReadWriteOnce volume")
ENV_SECRET_CLASH: Final = Code("TS302", "a name is in both env and secretEnv")
RESERVED_ENV: Final = Code("TS303", "environment variable name reserved by Kubeflow Trainer")
CREDENTIAL: Final = Code("TS304", "env value looks like a credential")
RUNTIME_NOT_FOUND: Final = Code("TS305", "runtime not found among the inputs nor in the built-in catalog")
DUPLICATE_OBJECT: Final = Code("TS306", "two specs define the same object")
TEMPLATE_UNDEFINED: Final = Code("TS307", "template expression is undefined or invalid")
VALUES_FILE: Final = Code("TS308", "values file cannot be used")
TEMPLATE_CAP: Final = Code("TS309", "template output or work beyond the cap")
TEMPLATE_CONSTRUCT: Final = Code(
    "TS310",
    "template construct not allowed (loops, calls, assignments, macros, includes, some filters)",
)
TEMPLATE_NOT_TEXT: Final = Code("TS311", "template renders a null, a mapping or a list")
PIPELINE_STEP: Final = Code(
    "TS312", "a pipeline step is not exactly one of job, jobRef and container, or two steps share a name"
)
PIPELINE_REFERENCE: Final = Code(
    "TS313", "a pipeline names a step, parameter, output or TrainingJob that does not exist, or a reference misplaced"
)
PIPELINE_CYCLE: Final = Code("TS314", "pipeline steps depend on each other in a cycle")
PIPELINE_PARAMETER: Final = Code("TS315", "a pipeline parameter has no default, or a default not of its type")
RUN_ID_PLACEHOLDER: Final = Code("TS316", "a value is the text trainspec writes where a job's run id goes")

# -- compiling -------------------------------------------------------------------------------------
RUNTIME_LIMIT: Final = Code("TS400", "resolved value conflicts with the runtime's limits")
NAME_BUDGET: Final = Code("TS401", "name does not fit the Kubernetes name budget")
SHARDING_UNSUPPORTED: Final = Code("TS402", "job asks for data sharding on a runtime that cannot shard")
GANG_WITHOUT_QUEUE: Final = Code("TS403", "Kueue gang admission without a queue")
NAMESPACED_RUNTIME: Final = Code("TS404", "namespaced runtime used from another namespace")
CHECKPOINT_SIZE: Final = Code("TS405", "checkpoint size cannot be computed")
GANG_CONFLICT: Final = Code("TS406", "scheduling setting conflicts with the gang policy")
OUTPUT_UNWRITABLE: Final = Code("TS407", "output directory cannot be written")
MARKER_MALFORMED: Final = Code(
    "TS409",
    "the output directory's marker (.trainspec-managed.json) is malformed or names a file trainspec never writes",
)
PVC_REMOVAL: Final = Code(
    "TS410",
    "compiling would remove a PersistentVolumeClaim from the output (needs --allow-volume-removal)",
)
HAND_EDITED: Final = Code("TS411", "a managed output file was edited by hand since trainspec wrote it (needs --force)")
UNSAFE_OUTPUT_DIR: Final = Code(
    "TS412",
    "unsafe output directory (empty, /, home, a repository root, the working directory, or holding inputs)",
)
INTERRUPTED_COMPILE: Final = Code(
    "TS413",
    "an interrupted compile left a generation beside the output directory (recovered)",
)
UPSTREAM_RUNTIME_NAME: Final = Code(
    "TS414",
    "runtime takes a name Kubeflow Trainer installs (it would overwrite the cluster's)",
)
UNMODELLED_FRAMEWORK: Final = Code(
    "TS415",
    "runtime uses a framework trainspec does not model (Kubeflow Trainer's mlx, xgboost)",
)
NO_STAGE_IMAGE: Final = Code(
    "TS416",
    "a job runs the data-sharding stage, but no stage image is configured (runtime or project default)",
)
FOREIGN_OUTPUT_DIR: Final = Code(
    "TS417",
    "the output directory holds files trainspec did not write and none it did (needs --adopt)",
)
NO_SPECS: Final = Code(
    "TS418",
    "no spec found in the inputs: compile writes nothing (an empty tree would prune everything)",
)
POD_REFUSED: Final = Code(
    "TS419",
    "the trainer pods, job and runtime merged, are ones the API server refuses (two volumes at one mount path, huge"
    " pages without cpu or memory)",
)
MODEL_PARAMS: Final = Code("TS420", "spec.model has no parameter count, or one that disagrees with checkpoint.model")
TP_HEADS: Final = Code("TS421", "pinned tensor-parallel degree does not divide the attention (or KV) heads")
PP_LAYERS: Final = Code("TS422", "pinned pipeline stages cannot hold the layers (evenly, or as the uneven split says)")
LAYOUT_WORLD_SIZE: Final = Code("TS423", "pinned tp x cp x pp x dp does not match the world size")
TP_CROSSES_NODES: Final = Code(
    "TS424",
    "pinned tensor parallelism crosses nodes (tp larger than, or not dividing, the GPUs per node)",
)
LAYOUT_MEMORY: Final = Code("TS425", "pinned parallel layout does not fit in GPU memory")
ZERO_STAGE: Final = Code("TS426", "pinned ZeRO stage the named framework cannot run")
NO_LAYOUT_FITS: Final = Code("TS427", "no parallel layout of the job's GPUs fits in GPU memory")
NO_GPU_MEMORY: Final = Code("TS428", "the parallelism planner cannot check memory: the runtime gives no GPU memory")
CP_SEQUENCE: Final = Code("TS429", "pinned context-parallel degree does not divide the sequence length")
LADDER_SHARED_CLAIM: Final = Code(
    "TS430",
    "scaling ladder: the job checkpoints to an existing claim, which every rung would share",
)
LADDER_BUCKET_ROOT: Final = Code(
    "TS431",
    "scaling ladder: object-storage checkpoints at a bucket root leave no place for the rungs' own",
)
LADDER_NAME_TAKEN: Final = Code("TS432", "scaling ladder: a rung would take the name of another job in its namespace")
PODMONITOR_NO_PORT: Final = Code(
    "TS435",
    "observability: a PodMonitor is asked for but the runtime declares no metricsPort",
)
POD_LABEL_OVERRIDDEN: Final = Code(
    "TS436",
    "observability: podLabels set a label trainspec writes on every trainer pod (trainspec's value is kept)",
)

# -- day 2: the previous tree against the new one --------------------------------------------------
UPDATE_TRANSITION_RULE: Final = Code(
    "TS440",
    "an update the API server refuses: a CRD transition rule (oldSelf) fails for an object that exists",
)
UPDATE_WEBHOOK: Final = Code(
    "TS441",
    "an update an admission webhook refuses (Kueue, Trainer, KubeRay, Training Operator update rules)",
)
PVC_CHANGE_REFUSED: Final = Code(
    "TS442",
    "a PersistentVolumeClaim change the API server refuses (smaller, storage class, access modes, mode)",
)
PVC_EXPANSION: Final = Code("TS443", "a PersistentVolumeClaim grows: its storage class must allow volume expansion")
PREVIOUS_TREE: Final = Code("TS444", "the previous tree cannot be read (a directory or a git ref)")

# -- Kubeflow Pipelines (trainspec kfp) ------------------------------------------------------------
NO_LAUNCHER_IMAGE: Final = Code(
    "TS450",
    "a Kubeflow Pipelines launcher step needs an image with trainspec, and none is named (--image or the project's"
    " spec.defaults.launcherImage)",
)

# -- the planner's inputs, filled in (spec.model's count from its shape, the GPU from node labels) ----
MODEL_COUNT_SHAPE: Final = Code(
    "TS460",
    "the parameter count written differs by more than 5% from the one spec.model's shape gives",
)
ACCELERATOR_INFERRED: Final = Code(
    "TS461",
    "the runtime's accelerator (GPU memory, NVLink) is inferred from a GPU node label of its nodeSelector",
)
MODEL_APPROXIMATED: Final = Code(
    "TS462",
    "spec.model has experts or latent attention, which the planner approximates (every expert stored, no expert"
    " parallelism; attention as multi-head)",
)

# -- checking emitted manifests --------------------------------------------------------------------
CRD_SCHEMA: Final = Code("TS500", "manifest violates the CRD's structural schema")
CRD_RULE: Final = Code("TS501", "manifest violates a CRD validation rule (CEL)")
CRD_RULE_UNEVALUATED: Final = Code("TS502", "CRD validation rule could not be evaluated")
WEBHOOK_RULE: Final = Code("TS503", "manifest violates an admission-webhook rule")
NO_CRD: Final = Code("TS504", "no CRD known for this kind")
FIELD_DROPPED: Final = Code(
    "TS505",
    "the API server drops a field of the manifest on create (warning: accepted, but it has no effect)",
)

# -- Kueue pre-flight (trainspec check --cluster) --------------------------------------------------
PREFLIGHT_SKIPPED: Final = Code(
    "TS509",
    "Kueue pre-flight not done: the job's runtime is in neither the inputs nor the cluster files, and the TrainJob "
    "alone does not give its trainer pods' resources (warning)",
)
NO_ACTIVE_QUEUE: Final = Code(
    "TS510",
    "the job's queue leads to no active ClusterQueue (missing LocalQueue, ClusterQueue or ResourceFlavor)",
)
NAMESPACE_NOT_SELECTED: Final = Code(
    "TS511",
    "the ClusterQueue's namespaceSelector does not select the job's namespace",
)
QUEUE_HELD: Final = Code("TS512", "the LocalQueue or ClusterQueue is held by its stopPolicy")
NO_PRIORITY_CLASS: Final = Code("TS513", "no WorkloadPriorityClass of the job's priority class")
NEVER_ADMITTED: Final = Code(
    "TS514",
    "the job can never be admitted: it needs more quota than the ClusterQueue can ever reach, or Kueue's flavor "
    "assignment never reaches a fitting choice",
)
RESOURCE_NOT_COVERED: Final = Code(
    "TS515",
    "the job requests a resource that no resource group of the ClusterQueue covers",
)
NO_FLAVOR_ACCEPTS: Final = Code(
    "TS516",
    "no flavor of the ClusterQueue accepts the pods (nodeSelector, affinity, taints, TAS)",
)
POD_LARGER_THAN_NODE: Final = Code("TS517", "one pod is larger than a node of the flavor (or than its nominal quota)")
TOPOLOGY_MISMATCH: Final = Code("TS518", "the topology request does not match the flavor's Topology")
TOO_MANY_PODSETS: Final = Code("TS519", "more PodSets than a Kueue Workload allows (18)")

# -- target versions (--target, project spec.target) -----------------------------------------------
BAD_VERSION_PAIR: Final = Code("TS520", "Trainer/Kueue version pairing known to fail")
TARGET_UNSUPPORTED: Final = Code("TS521", "not supported by the target Trainer version")
MAX_RUN_TIME_UNENFORCED: Final = Code("TS522", "maxRunTime cannot be enforced by the target Trainer version")
UNKNOWN_TARGET_VERSION: Final = Code("TS523", "unsupported or unknown target version")
CRDS_TARGET_MISMATCH: Final = Code(
    "TS524",
    "the CRDs given or shipped do not match the target version (not checked against them)",
)
KUEUE_RAYJOB_RULE: Final = Code(
    "TS530",
    "Kueue would reject the queued RayJob (a cluster spec without clusterSelector, shutdownAfterJobFinishes, "
    "autoscaling, a worker group named head, more PodSets than the Kueue version allows)",
)

# -- trainspec migrate (manifests -> specs) --------------------------------------------------------
FIELD_NOT_CARRIED: Final = Code("TS540", "a manifest field is not carried into the migrated specs (warning)")
FIELD_CHANGED: Final = Code("TS541", "a manifest field is carried with a changed meaning or value (warning)")
NOT_MIGRATED: Final = Code(
    "TS542",
    "a document is not a kind trainspec migrate reads, or a runtime no TrainJob uses (warning)",
)
CANNOT_MIGRATE: Final = Code("TS543", "a manifest cannot be migrated (a required part is missing or malformed)")
MIGRATED_INVALID: Final = Code(
    "TS544",
    "the migrated specs are not valid (reported at the manifest field they came from)",
)
MIGRATE_OUTPUT_IN_THE_WAY: Final = Code(
    "TS545",
    "an output file of trainspec migrate is in the way (not written by it, or edited since)",
)
ENGINE_KEPT: Final = Code(
    "TS546",
    "the migrated runtime keeps the job's engine: Kubeflow Trainer cannot run it as it is (warning)",
)
RUNTIME_BY_NAME: Final = Code(
    "TS547",
    "a TrainJob's runtime is not among the inputs: the job refers to it by name (warning)",
)
MIGRATE_COLLISION: Final = Code("TS548", "two inputs migrate to the same spec object (warning)")

# -- project policy (trainspec.yaml spec.policy) ---------------------------------------------------
POLICY_QUEUE: Final = Code("TS600", "job has no Kueue queue, and the project requires one (requireQueue)")
POLICY_MAX_RUN_TIME: Final = Code("TS601", "job has no maxRunTime, and the project requires one (requireMaxRunTime)")
POLICY_MAX_GPUS: Final = Code("TS602", "job asks for more GPUs than the project allows (maxGpusPerJob)")
POLICY_LABELS: Final = Code("TS603", "job lacks a label the project requires (requiredLabels)")
POLICY_DIGEST: Final = Code("TS604", "image not pinned by digest, and the project requires it (images.requireDigest)")
POLICY_REGISTRY: Final = Code("TS605", "image not from a registry the project allows (images.allowedRegistries)")

# -- running a job on this machine (trainspec run --local) -----------------------------------------
LOCAL_UNSUPPORTED: Final = Code(
    "TS700",
    "the job cannot run locally (its engine or framework is not supported by run --local yet)",
)
LOCAL_SECRET_MISSING: Final = Code("TS701", "a secretEnv value is in neither the local environment nor the --env-file")
ENV_FILE: Final = Code("TS702", "the --env-file cannot be read or has a malformed line")
LOCAL_JOB_CHOICE: Final = Code(
    "TS703",
    "--job names no job of the inputs, or the inputs hold several jobs and none was chosen",
)
LOCAL_DATA_SOURCE: Final = Code(
    "TS704",
    "the job's data source cannot be read on this machine (pvc://: pass --data-source)",
)
LOCAL_GPUS: Final = Code("TS705", "the job asks for more GPUs than this machine has")
LOCAL_COMMAND: Final = Code("TS706", "the job's command cannot be started here (none set, or not found)")
LOCAL_WORK_DIR: Final = Code("TS707", "the local work directory cannot be used")
LOCAL_PIPELINE_PARAM: Final = Code(
    "TS708",
    "a --param of a local pipeline run names no parameter of the pipeline, or its value is not of the parameter's type",
)

# -- cluster commands (submit, status, list, logs, cancel) -----------------------------------------
NO_KUBE_CLIENT: Final = Code("TS710", "the cluster commands need the kubernetes client (pip install 'trainspec[kube]')")
CLUSTER_UNREACHABLE: Final = Code("TS711", "cannot configure or reach the cluster (kubeconfig, context, network)")
CLUSTER_RUNTIME_MISSING: Final = Code(
    "TS712",
    "the runtime the job needs does not exist in the cluster (submit never creates it unless --with-runtimes)",
)
ENGINE_NOT_SUBMITTABLE: Final = Code(
    "TS713",
    "the job runs on an engine the cluster commands do not support yet (they handle Trainer TrainJobs)",
)
API_REFUSED: Final = Code(
    "TS714",
    "the API server refused an object or a request (validation, field ownership conflict)",
)
NO_SUCH_SPEC_JOB: Final = Code("TS715", "no job of that name in the specs")
NO_SUCH_CLUSTER_JOB: Final = Code("TS716", "no TrainJob of that name in the cluster")
RBAC_DENIED: Final = Code("TS717", "not allowed by the cluster's RBAC (names the user, verb, resource and namespace)")
TLS_FAILED: Final = Code(
    "TS718",
    "TLS with the cluster failed (its certificate is not signed by the kubeconfig's CA, or the host differs)",
)
UNAUTHORIZED: Final = Code(
    "TS719",
    "the cluster rejected the credentials (HTTP 401: expired or invalid token, login needed; not RBAC)",
)
NO_NAMESPACE: Final = Code("TS720", "the namespace does not exist in the cluster (or is being deleted)")
KIND_NOT_SERVED: Final = Code(
    "TS721",
    "the cluster does not serve the resource type (its CRD is not installed, or another version)",
)
BEING_DELETED: Final = Code(
    "TS722",
    "the object is being deleted (an apply reached it; it will be gone once its dependents are)",
)
SERVER_GAVE_UP: Final = Code("TS723", "the API server kept throttling (429) or failing (5xx) until the retries gave up")
NOT_AN_API_SERVER: Final = Code(
    "TS724",
    "the server did not answer like a Kubernetes API server (HTML or non-JSON from a proxy or login page)",
)
KIND_NOT_INSTALLED: Final = Code(
    "TS730",
    "an object submit would apply is of a kind the cluster does not serve (its operator is not installed): not "
    "applied, the job is submitted without it (warning)",
)
SHARED_OBJECT_SKIPPED: Final = Code(
    "TS731",
    "an object submit does not apply: cluster-scoped or shared, it is never created or changed unless asked (warning)",
)
NAMESPACE_MISMATCH: Final = Code(
    "TS732",
    "the spec's namespace differs from -n/--namespace, or -n is not a namespace name",
)

#: Every code and its meaning, in code order.
CODES: Final[dict[str, str]] = {
    value: value.description for value in sorted(v for v in globals().values() if isinstance(v, Code))
}
_BY_NAME: Final[dict[str, Code]] = {str(v): v for v in globals().values() if isinstance(v, Code)}


def code_named(name: str) -> Code:
    """The registered code ``name`` (``"TS200"``), as stored data gives it back; KeyError for any other."""
    return _BY_NAME[name]
