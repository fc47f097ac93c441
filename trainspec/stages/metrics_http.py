"""The step and data-wait timers as a Prometheus text endpoint (in-pod; standard library only).

Only when asked: ``serve_metrics(9400)`` (or ``serve_metrics()`` with ``TRAINSPEC_METRICS_PORT``
set) starts an HTTP server on a daemon thread answering ``GET /metrics`` in the Prometheus text
format (version 0.0.4) from the :class:`~trainspec.stages.StepMetrics` it is given (by
default the module's default meter)::

    trainspec_step_seconds_total       counter  time inside step() blocks
    trainspec_data_wait_seconds_total  counter  time inside data_wait() blocks
    trainspec_data_wait_fraction       gauge    data wait / loop time (0..1)
    trainspec_steps_total              counter  completed steps
    trainspec_steps_per_second         gauge    the recent step rate

A PodMonitor scraping the rank-0 pod reads these names. By default only global rank 0 serves
(under torchrun several processes share a pod, and one port); ``rank_zero_only=False`` serves
from whichever process calls it. A port that cannot be bound is said once on stderr and the
call returns None: metrics never stop training.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Mapping
from typing import Any

from trainspec.dsl.kube_facts import METRICS_PORT_ENV
from trainspec.stages.metrics import MetricsSnapshot, StepMetrics, default_metrics
from trainspec.stages.rank_zero import is_rank_zero

__all__ = ["METRIC_NAMES", "MetricsServer", "prometheus_text", "serve_metrics"]

#: name -> (type, help, snapshot attribute): the series every scrape returns, in this order.
METRIC_NAMES: dict[str, tuple[str, str, str]] = {
    "trainspec_step_seconds_total": ("counter", "Seconds spent inside training steps.", "step_seconds_total"),
    "trainspec_data_wait_seconds_total": (
        "counter",
        "Seconds spent waiting for input data.",
        "data_wait_seconds_total",
    ),
    "trainspec_data_wait_fraction": (
        "gauge",
        "Fraction of the training loop's time spent waiting for input.",
        "data_wait_fraction",
    ),
    "trainspec_steps_total": ("counter", "Completed training steps.", "steps"),
    "trainspec_steps_per_second": ("gauge", "Recent training steps per second.", "steps_per_second"),
}
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def prometheus_text(snapshot: MetricsSnapshot) -> str:
    """The exposition text of one snapshot."""
    lines = []
    for name, (kind, help_text, attribute) in METRIC_NAMES.items():
        value = getattr(snapshot, attribute)
        lines += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}", f"{name} {float(value)!r}"]
    return "\n".join(lines) + "\n"


class MetricsServer:
    """A running endpoint: ``port`` (the bound one, useful with port 0) and :meth:`close`."""

    def __init__(self, server: Any, thread: threading.Thread) -> None:
        self._server = server
        self._thread = thread
        self.port: int = server.server_address[1]

    def close(self) -> None:
        """Stop serving and release the port."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


def serve_metrics(
    port: int | None = None,
    *,
    metrics: StepMetrics | None = None,
    host: str = "",
    rank_zero_only: bool = True,
    env: Mapping[str, str] | None = None,
) -> MetricsServer | None:
    """Serve ``/metrics`` on ``port`` (else ``$TRAINSPEC_METRICS_PORT``) from a daemon thread.

    Returns None, serving nothing, when no port is given or set, on ranks other than 0 (unless
    ``rank_zero_only=False``), or when the port cannot be bound (said on stderr).
    """
    env = os.environ if env is None else env
    if port is None:
        text = env.get(METRICS_PORT_ENV, "").strip()
        if not text:
            return None
        try:
            port = int(text)
        except ValueError:
            print(
                f"trainspec: {METRICS_PORT_ENV}={text!r} is not a port; no metrics endpoint",
                file=sys.stderr,
                flush=True,
            )
            return None
    if rank_zero_only and not is_rank_zero(env):
        return None
    meter = metrics if metrics is not None else default_metrics()

    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.split("?", 1)[0] != "/metrics":
                self.send_error(404)
                return
            body = prometheus_text(meter.snapshot()).encode()
            self.send_response(200)
            self.send_header("Content-Type", CONTENT_TYPE)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # one line per scrape would drown the training log

    try:
        server = ThreadingHTTPServer((host, port), Handler)
    except OSError as exc:
        print(
            f"trainspec: cannot serve metrics on port {port}: {exc}; training continues without them",
            file=sys.stderr,
            flush=True,
        )
        return None
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="trainspec-metrics", daemon=True)
    thread.start()
    return MetricsServer(server, thread)
