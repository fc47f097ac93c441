"""What the rank-0 metrics port adds to a trainer container: the named port and its env var.

Every trainer container of the runtime declares the port (a PodMonitor only scrapes declared
ports, and which pod runs rank 0 is not known for every engine); the training code reads the
number from TRAINSPEC_METRICS_PORT and serves ``/metrics`` on rank 0 only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trainspec.k8s.wellknown import METRICS_PORT_ENV, METRICS_PORT_NAME

if TYPE_CHECKING:
    from trainspec.dsl.spec.models import RuntimeSpec
    from trainspec.k8s import ContainerPort


def _port(spec: RuntimeSpec) -> int | None:
    block = spec.observability
    return block.metrics_port if block is not None else None


def metrics_env(spec: RuntimeSpec) -> dict[str, str]:
    """``{TRAINSPEC_METRICS_PORT: "<port>"}`` when the runtime declares a metrics port, else ``{}``."""
    port = _port(spec)
    return {METRICS_PORT_ENV: str(port)} if port is not None else {}


def metrics_ports(spec: RuntimeSpec) -> list[ContainerPort] | None:
    """The container port named ``train-metrics``, or None."""
    from trainspec.k8s import ContainerPort

    port = _port(spec)
    return [ContainerPort(name=METRICS_PORT_NAME, container_port=port, protocol="TCP")] if port is not None else None
