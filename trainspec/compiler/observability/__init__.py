"""Observability wiring (issue 15): pod labels, the rank-0 metrics port, PodMonitor, Grafana dashboard.

* :mod:`.settings`: a job's effective ``observability`` block (job over runtime over defaults).
* :mod:`.podmonitor`: the Prometheus Operator ``PodMonitor`` of a job.
* :mod:`.dashboard`: the job's Grafana dashboard (JSON) and the ConfigMap the Grafana sidecar loads.
* :mod:`.promql`: a small PromQL well-formedness check for the expressions trainspec writes.
* :mod:`.observability_rules`: the diagnostics of the block (TS435, TS436).

The pod labels themselves and the rank-0 selector live with the other label keys, in
:mod:`trainspec.compiler.lower.labels`. What the cluster needs is in docs/observability.md.
"""
