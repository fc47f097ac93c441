"""Times as the API writes them (RFC 3339) and ages as kubectl shows them (``3h20m``)."""

from __future__ import annotations

from datetime import datetime, timezone

__all__ = ["human_duration", "parse_time"]


def parse_time(text: str | None) -> datetime | None:
    """An RFC 3339 time of the API (``2026-01-01T00:00:00Z``), or None."""
    if not text:
        return None
    try:
        return datetime.strptime(text[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)
    except ValueError:
        return None


def human_duration(seconds: float) -> str:
    """``45s``, ``12m``, ``3h20m``, ``2d4h``: the way kubectl shows ages."""
    seconds = max(0, int(seconds))
    if seconds < 120:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 120:
        return f"{minutes}m"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours}h{minutes}m" if minutes else f"{hours}h"
    days, hours = divmod(hours, 24)
    return f"{days}d{hours}h" if hours else f"{days}d"
