"""A hand-written structural schema of the Prometheus Operator ``PodMonitor`` (``monitoring.coreos.com/v1``).

The PodMonitor CRD is not among the CRDs trainspec ships, and a cluster that runs the
Prometheus Operator has it. When ``--crds`` provides the real CRD the checker uses that;
otherwise this schema stands in, written from the CRD's ``openAPIV3Schema`` (Prometheus
Operator 0.9x) for the fields trainspec emits: ``spec.selector`` (required, a label selector),
``spec.podMetricsEndpoints[]`` (``port``, ``portNumber`` 1-65535, ``path``, ``interval`` and
``scrapeTimeout`` as Prometheus durations, ``scheme`` http/https), ``spec.podTargetLabels``,
``spec.jobLabel``, ``spec.namespaceSelector``. The CRD's other fields are accepted unchecked
(``x-kubernetes-preserve-unknown-fields``); names outside the CRD are unknown fields (TS500), as
a strict field validation reports them.
"""

from __future__ import annotations

import threading
from typing import Any

from trainspec.k8s.wellknown import MONITORING_API_VERSION

_ANY: dict[str, Any] = {"x-kubernetes-preserve-unknown-fields": True}
_STRING = {"type": "string"}
#: The CRD's pattern for interval and scrapeTimeout (a Prometheus duration, e.g. 30s, 1m30s).
DURATION_PATTERN = r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"

_SELECTOR = {
    "type": "object",
    "properties": {
        "matchLabels": {"type": "object", "additionalProperties": _STRING},
        "matchExpressions": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["key", "operator"],
                "properties": {"key": _STRING, "operator": _STRING, "values": {"type": "array", "items": _STRING}},
            },
        },
    },
}
_ENDPOINT_OTHER = (
    "authorization",
    "basicAuth",
    "bearerTokenSecret",
    "enableHttp2",
    "filterRunning",
    "followRedirects",
    "honorLabels",
    "honorTimestamps",
    "metricRelabelings",
    "noProxy",
    "oauth2",
    "params",
    "proxyConnectHeader",
    "proxyFromEnvironment",
    "proxyUrl",
    "relabelings",
    "targetPort",
    "tlsConfig",
    "trackTimestampsStaleness",
)
_ENDPOINT = {
    "type": "object",
    "properties": {
        "port": _STRING,
        "portNumber": {"type": "integer", "format": "int32", "minimum": 1, "maximum": 65535},
        "path": _STRING,
        "interval": {"type": "string", "pattern": DURATION_PATTERN},
        "scrapeTimeout": {"type": "string", "pattern": DURATION_PATTERN},
        "scheme": {"type": "string", "enum": ["http", "https", "HTTP", "HTTPS"]},
        **dict.fromkeys(_ENDPOINT_OTHER, _ANY),
    },
}
_SPEC_OTHER = (
    "attachMetadata",
    "bodySizeLimit",
    "convertClassicHistogramsToNHCB",
    "fallbackScrapeProtocol",
    "keepDroppedTargets",
    "labelLimit",
    "labelNameLengthLimit",
    "labelValueLengthLimit",
    "nativeHistogramBucketLimit",
    "nativeHistogramMinBucketFactor",
    "sampleLimit",
    "scrapeClass",
    "scrapeClassicHistograms",
    "scrapeNativeHistograms",
    "scrapeProtocols",
    "selectorMechanism",
    "targetLimit",
)
#: The structural schema, in the CRD's own (OpenAPI v3) form.
POD_MONITOR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["spec"],
    "properties": {
        "apiVersion": _STRING,
        "kind": _STRING,
        "metadata": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        "spec": {
            "type": "object",
            "required": ["selector"],
            "properties": {
                "selector": _SELECTOR,
                "podMetricsEndpoints": {"type": "array", "items": _ENDPOINT},
                "podTargetLabels": {"type": "array", "items": _STRING},
                "jobLabel": _STRING,
                "namespaceSelector": {
                    "type": "object",
                    "properties": {"any": {"type": "boolean"}, "matchNames": {"type": "array", "items": _STRING}},
                },
                **dict.fromkeys(_SPEC_OTHER, _ANY),
            },
        },
        "status": _ANY,
    },
}

#: (apiVersion, kind) -> schema of the kinds checked by a hand-written schema when no CRD is given.
HAND_WRITTEN: dict[tuple[str, str], dict[str, Any]] = {(MONITORING_API_VERSION, "PodMonitor"): POD_MONITOR_SCHEMA}
_VALIDATORS: dict[tuple[str, str], Any] = {}
_LOCK = threading.Lock()


def check_hand_written(manifest: dict[str, Any]) -> list[Any] | None:
    """TS500 findings of a manifest of a hand-written kind, sorted by path; None for other kinds."""
    api_version, kind = manifest.get("apiVersion"), manifest.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str) or (api_version, kind) not in HAND_WRITTEN:
        return None
    typed = (api_version, kind)
    with _LOCK:
        if typed not in _VALIDATORS:
            from trainspec.check.schema.structural import StructuralValidator  # lazy: imports jsonschema

            _VALIDATORS[typed] = StructuralValidator(HAND_WRITTEN[typed])
        validator = _VALIDATORS[typed]
    return sorted(validator.validate(dict(manifest)), key=lambda d: d.path)
