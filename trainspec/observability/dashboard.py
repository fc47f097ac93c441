"""``trainspec.observability.dashboard.dashboard_json(name, namespace)``, as docs/observability.md
documents it: the dashboard is built by :mod:`trainspec.compiler.observability.dashboard`."""

from trainspec.compiler.observability.dashboard import dashboard, dashboard_json

__all__ = ["dashboard", "dashboard_json"]
