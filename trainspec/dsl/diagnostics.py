"""Diagnostics: the one type every problem trainspec finds is reported as.

A diagnostic carries a stable code (``TS101``), a severity, where it is (file, line, column,
field path), what is wrong and what to do about it. Codes are public: tools and tests match
on them, so a code never changes meaning. The registry :data:`CODES` documents each one.
"""

from __future__ import annotations

import enum
import re
from typing import Any

from trainspec.dsl.record import Record, field, replace


class Severity(str, enum.Enum):
    """How bad a problem is. Errors make a command exit 1; warnings do not."""

    ERROR = "error"
    WARNING = "warning"


#: Every diagnostic code and its one-line meaning. Grouped by the hundred:
#: TS1xx reading files, TS2xx the spec schema, TS3xx cross-field meaning, TS4xx compiling,
#: TS5xx checking emitted manifests, TS6xx project policy, TS7xx running a job (TS70x locally, TS71x on a cluster).
CODES: dict[str, str] = {
    # -- reading files ------------------------------------------------------------------
    "TS100": "file cannot be read (missing, a directory, or permission denied)",
    "TS101": "file is not valid UTF-8",
    "TS102": "file is larger than the size cap",
    "TS103": "YAML syntax error",
    "TS104": "tab character in indentation",
    "TS105": "duplicate key in a mapping",
    "TS106": "alias expansion beyond the cap (possible billion-laughs document)",
    "TS107": "document is not a mapping",
    "TS108": "empty document (ignored)",
    "TS109": "YAML 1.1 implicit boolean/number/null where a string is expected",
    "TS110": "unknown kind for apiVersion trainspec.dev",
    "TS111": "unsupported trainspec apiVersion",
    "TS112": "Python spec file failed to import",
    "TS113": "YAML tag or key type not allowed in specs",
    "TS114": "document looks like a spec but is not read as one (apiVersion missing, misspelled or of another group)",
    "TS115": "Python spec module ran longer than the time limit",
    "TS116": "Python spec module wrote to stdout or stderr (shown as notes, kept out of the output)",
    "TS117": "Python spec module defines no TrainingJob or Runtime (warning)",
    "TS118": "not a regular file (FIFO, socket, device), a symlink loop, or a symlinked directory: not read",
    "TS119": "path name too long for the file system",
    "TS120": "a Python spec module ended without handing back its specs (exit, signal, crash, malformed result)",
    "TS121": "a Python spec module handed back more data than the cap",
    "TS122": "a Python spec module left processes running after it ended (they were killed)",
    "TS123": "a Python spec module was not run (--no-python, project spec.python: warn or deny, or read from "
    "standard input)",
    "TS124": "file name with a control or bidirectional-override character: not read",
    # -- the spec schema ----------------------------------------------------------------
    "TS200": "unknown field",
    "TS201": "missing required field",
    "TS202": "wrong type",
    "TS203": "value out of range or not one of the allowed values",
    "TS204": "invalid Kubernetes quantity",
    "TS205": "invalid duration",
    "TS206": "invalid name (must be an RFC 1035 label)",
    "TS207": "invalid URI or scheme not allowed here",
    "TS208": "checkpoint forms are mutually exclusive",
    "TS209": "invalid parameter count",
    "TS210": "invalid label or annotation key or value",
    "TS211": "invalid environment variable name",
    "TS212": "data.mode: index with an assignment other than contiguous",
    # -- meaning across fields ----------------------------------------------------------
    "TS300": "procsPerNode does not match the GPUs per node",
    "TS301": "multi-node job with a ReadWriteOnce volume",
    "TS302": "a name is in both env and secretEnv",
    "TS303": "environment variable name reserved by Kubeflow Trainer",
    "TS304": "env value looks like a credential",
    "TS305": "runtime not found among the inputs nor in the built-in catalog",
    "TS306": "two specs define the same object",
    "TS307": "template expression is undefined or invalid",
    "TS308": "values file cannot be used",
    "TS309": "template output or work beyond the cap",
    "TS310": "template construct not allowed (loops, calls, assignments, macros, includes, some filters)",
    "TS311": "template renders a null, a mapping or a list",
    # -- compiling ----------------------------------------------------------------------
    "TS400": "resolved value conflicts with the runtime's limits",
    "TS401": "name does not fit the Kubernetes name budget",
    "TS402": "job asks for data sharding on a runtime that cannot shard",
    "TS403": "Kueue gang admission without a queue",
    "TS404": "namespaced runtime used from another namespace",
    "TS405": "checkpoint size cannot be computed",
    "TS406": "scheduling setting conflicts with the gang policy",
    "TS407": "output directory cannot be written",
    "TS408": "compiled output is stale",
    "TS409": "the output directory's marker (.trainspec-managed.json) is malformed or names a file trainspec never writes",
    "TS410": "compiling would remove a PersistentVolumeClaim from the output (needs --allow-volume-removal)",
    "TS411": "a managed output file was edited by hand since trainspec wrote it (needs --force)",
    "TS412": "unsafe output directory (empty, /, home, a repository root, the working directory, or holding inputs)",
    "TS413": "an interrupted compile left a generation beside the output directory (recovered)",
    "TS414": "runtime takes a name Kubeflow Trainer installs (it would overwrite the cluster's)",
    "TS415": "runtime uses a framework trainspec does not model (Kubeflow Trainer's mlx, xgboost)",
    "TS416": "a job runs the data-sharding stage, but no stage image is configured (runtime or project default)",
    "TS417": "the output directory holds files trainspec did not write and none it did (needs --adopt)",
    "TS418": "no spec found in the inputs: compile writes nothing (an empty tree would prune everything)",
    "TS419": "the trainer pods, job and runtime merged, are ones the API server refuses (two volumes at one "
    "mount path, huge pages without cpu or memory)",
    "TS420": "spec.model has no parameter count, or one that disagrees with checkpoint.model",
    "TS421": "pinned tensor-parallel degree does not divide the attention (or KV) heads",
    "TS422": "pinned pipeline-parallel degree does not divide the layers",
    "TS423": "pinned tp x pp x dp does not match the world size",
    "TS424": "pinned tensor parallelism crosses nodes (tp larger than, or not dividing, the GPUs per node)",
    "TS425": "pinned parallel layout does not fit in GPU memory",
    "TS426": "pinned ZeRO stage the named framework cannot run",
    "TS427": "no parallel layout of the job's GPUs fits in GPU memory",
    "TS428": "the parallelism planner cannot check memory: the runtime gives no GPU memory",
    "TS430": "scaling ladder: the job checkpoints to an existing claim, which every rung would share",
    "TS431": "scaling ladder: object-storage checkpoints at a bucket root leave no place for the rungs' own",
    "TS432": "scaling ladder: a rung would take the name of another job in its namespace",
    "TS435": "observability: a PodMonitor is asked for but the runtime declares no metricsPort",
    "TS436": "observability: podLabels set a label trainspec writes on every trainer pod (trainspec's value is kept)",
    # -- day 2: the previous tree against the new one -----------------------------------
    "TS440": "an update the API server refuses: a CRD transition rule (oldSelf) fails for an object that exists",
    "TS441": "an update an admission webhook refuses (Kueue, Trainer, KubeRay, Training Operator update rules)",
    "TS442": "a PersistentVolumeClaim change the API server refuses (smaller, storage class, access modes, mode)",
    "TS443": "a PersistentVolumeClaim grows: its storage class must allow volume expansion",
    "TS444": "the previous tree cannot be read (a directory or a git ref)",
    # -- checking emitted manifests -----------------------------------------------------
    "TS500": "manifest violates the CRD's structural schema",
    "TS501": "manifest violates a CRD validation rule (CEL)",
    "TS502": "CRD validation rule could not be evaluated",
    "TS503": "manifest violates an admission-webhook rule",
    "TS504": "no CRD known for this kind",
    "TS505": "the API server drops a field of the manifest on create (warning: accepted, but it has no effect)",
    # -- Kueue pre-flight (trainspec check --cluster) -----------------------------------
    "TS510": "the job's queue leads to no active ClusterQueue (missing LocalQueue, ClusterQueue or ResourceFlavor)",
    "TS511": "the ClusterQueue's namespaceSelector does not select the job's namespace",
    "TS512": "the LocalQueue or ClusterQueue is held by its stopPolicy",
    "TS513": "no WorkloadPriorityClass of the job's priority class",
    "TS514": "the job can never be admitted: it needs more quota than the ClusterQueue can ever reach, "
    "or Kueue's flavor assignment never reaches a fitting choice",
    "TS515": "the job requests a resource that no resource group of the ClusterQueue covers",
    "TS516": "no flavor of the ClusterQueue accepts the pods (nodeSelector, affinity, taints, TAS)",
    "TS517": "one pod is larger than a node of the flavor (or than its nominal quota)",
    "TS518": "the topology request does not match the flavor's Topology",
    "TS519": "more PodSets than a Kueue Workload allows (18)",
    "TS509": "Kueue pre-flight not done: the job's runtime is in neither the inputs nor the cluster files, and "
    "the TrainJob alone does not give its trainer pods' resources (warning)",
    # -- target versions (--target, project spec.target) --------------------------------
    "TS520": "Trainer/Kueue version pairing known to fail",
    "TS521": "not supported by the target Trainer version",
    "TS522": "maxRunTime cannot be enforced by the target Trainer version",
    "TS523": "unsupported or unknown target version",
    "TS524": "the CRDs given or shipped do not match the target version (not checked against them)",
    # -- trainspec migrate (manifests -> specs) -----------------------------------------
    "TS540": "a manifest field is not carried into the migrated specs (warning)",
    "TS541": "a manifest field is carried with a changed meaning or value (warning)",
    "TS542": "a document is not a kind trainspec migrate reads, or a runtime no TrainJob uses (warning)",
    "TS543": "a manifest cannot be migrated (a required part is missing or malformed)",
    "TS544": "the migrated specs are not valid (reported at the manifest field they came from)",
    "TS545": "an output file of trainspec migrate is in the way (not written by it, or edited since)",
    "TS546": "the migrated runtime keeps the job's engine: Kubeflow Trainer cannot run it as it is (warning)",
    "TS547": "a TrainJob's runtime is not among the inputs: the job refers to it by name (warning)",
    "TS548": "two inputs migrate to the same spec object (warning)",
    # -- project policy (trainspec.yaml spec.policy) ------------------------------------
    "TS600": "job has no Kueue queue, and the project requires one (requireQueue)",
    "TS601": "job has no maxRunTime, and the project requires one (requireMaxRunTime)",
    "TS602": "job asks for more GPUs than the project allows (maxGpusPerJob)",
    "TS603": "job lacks a label the project requires (requiredLabels)",
    "TS604": "image not pinned by digest, and the project requires it (images.requireDigest)",
    "TS605": "image not from a registry the project allows (images.allowedRegistries)",
    # -- cluster commands (submit, status, list, logs, cancel) ---------------------------
    "TS710": "the cluster commands need the kubernetes client (pip install 'trainspec[kube]')",
    "TS711": "cannot configure or reach the cluster (kubeconfig, context, network)",
    "TS712": "the runtime the job needs does not exist in the cluster (submit never creates it unless --with-runtimes)",
    "TS713": "the job runs on an engine the cluster commands do not support yet (they handle Trainer TrainJobs)",
    "TS714": "the API server refused an object or a request (validation, field ownership conflict)",
    "TS715": "no job of that name in the specs",
    "TS716": "no TrainJob of that name in the cluster",
    "TS717": "not allowed by the cluster's RBAC (names the user, verb, resource and namespace)",
    "TS718": "TLS with the cluster failed (its certificate is not signed by the kubeconfig's CA, or the host differs)",
    "TS719": "the cluster rejected the credentials (HTTP 401: expired or invalid token, login needed; not RBAC)",
    "TS720": "the namespace does not exist in the cluster (or is being deleted)",
    "TS721": "the cluster does not serve the resource type (its CRD is not installed, or another version)",
    "TS722": "the object is being deleted (an apply reached it; it will be gone once its dependents are)",
    "TS723": "the API server kept throttling (429) or failing (5xx) until the retries gave up",
    "TS724": "the server did not answer like a Kubernetes API server (HTML or non-JSON from a proxy or login page)",
    "TS730": "an object submit would apply is of a kind the cluster does not serve (its operator is not "
    "installed): not applied, the job is submitted without it (warning)",
    "TS731": "an object submit does not apply: cluster-scoped or shared, it is never created or changed "
    "unless asked (warning)",
    "TS732": "the spec's namespace differs from -n/--namespace, or -n is not a namespace name",
    # -- running a job on this machine (trainspec run --local) --------------------------
    "TS700": "the job cannot run locally (its engine or framework is not supported by run --local yet)",
    "TS701": "a secretEnv value is in neither the local environment nor the --env-file",
    "TS702": "the --env-file cannot be read or has a malformed line",
    "TS703": "--job names no job of the inputs, or the inputs hold several jobs and none was chosen",
    "TS704": "the job's data source cannot be read on this machine (pvc://: pass --data-source)",
    "TS705": "the job asks for more GPUs than this machine has",
    "TS706": "the job's command cannot be started here (none set, or not found)",
    "TS707": "the local work directory cannot be used",
}


class Related(Record):
    """A second place a diagnostic points at (for example the object a job conflicts with)."""

    message: str
    file: str | None = None
    line: int | None = None
    column: int | None = None


class Diagnostic(Record):
    """One problem, located.

    ``line`` and ``column`` are 1-based. ``path`` is the dotted field path inside the document
    (``spec.checkpoint.size``, ``spec.args[2]``), empty for problems of the whole document.
    """

    code: str
    message: str
    severity: Severity = Severity.ERROR
    file: str | None = None
    line: int | None = None
    column: int | None = None
    path: str = ""
    hint: str | None = None
    related: tuple[Related, ...] = field(default=())

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    @classmethod
    def located(
        cls,
        code: str,
        message: str,
        file: str | None,
        mark: Any,
        path: tuple[str | int, ...] | list[str | int],
        *,
        severity: Severity = Severity.ERROR,
        hint: str | None = None,
        related: tuple[Related, ...] = (),
    ) -> Diagnostic:
        """A diagnostic at ``mark`` (anything with a 1-based ``line`` and ``column``, such as the
        loader's marks) about the field ``path`` of ``file``."""
        return cls(
            code=code,
            message=message,
            severity=severity,
            file=file,
            line=mark.line,
            column=mark.column,
            path=format_path(path),
            hint=hint,
            related=related,
        )

    def at(self, file: str | None, line: int | None, column: int | None) -> Diagnostic:
        """The same diagnostic placed at another location."""
        return replace(self, file=file, line=line, column=column)

    def sort_key(self) -> tuple:
        return (self.file or "", self.line or 0, self.column or 0, self.code, self.path, self.message)


def format_path(path: tuple[str | int, ...] | list[str | int]) -> str:
    """Render a field path the way users write it: ``spec.args[2].name``."""
    out: list[str] = []
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        else:
            out.append(f".{part}" if out else str(part))
    return "".join(out)


def has_errors(diagnostics: list[Diagnostic] | tuple[Diagnostic, ...]) -> bool:
    return any(d.is_error for d in diagnostics)


# Characters that must never reach a generated file or a terminal as they are: C0 and C1 controls
# (a newline would start a YAML line of its own, an escape sequence rewrites the screen), the line
# and paragraph separators (line breaks to YAML 1.1 readers), the bidirectional controls, and lone
# surrogates (a file name's undecodable bytes: written back raw they may be C1 controls, and they
# cannot be encoded as UTF-8 at all).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def escape_text(text: str, *, backslashes: bool = True) -> str:
    """``text`` with control, separator, bidi and surrogate characters written as ``\\uXXXX``.

    With ``backslashes`` (names in generated files) a ``\\`` is doubled, so a name that holds
    ``\\u000a`` literally never reads as one holding a newline. Without (text for a terminal, which
    may hold names escaped already, by ``repr`` or by the loader) only the unsafe characters are
    replaced: escaping twice would double those names' backslashes.
    """
    if text.isprintable() and not (backslashes and "\\" in text):
        return text  # the common case, without a regular expression
    if backslashes:
        text = text.replace("\\", "\\\\")
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
