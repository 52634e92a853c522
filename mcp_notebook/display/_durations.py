"""A duration in seconds as a person reads it in a picture: ``7 ms``, ``1.2 s``, ``2 min 05 s``.

Frames keep durations as float seconds (``Float64``), which sort, sum and plot; a picture (a live
table, a panel row) shows them short instead of ``0.007393598`` or pandas' ``0 days
00:00:00.007393598``. Pure, no pandas: every layer above may use it.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["short_duration"]


def short_duration(seconds: Any) -> str:
    """``0.4 ms`` (under a millisecond), ``7 ms``, ``1.2 s``, ``12.3 s``, ``2 min 05 s``,
    ``1 h 02 min``; ``""`` for a missing value (None, ``pd.NA``, NaN) or anything that is not a
    number of seconds."""
    if isinstance(seconds, bool):
        return ""
    try:
        value = float(seconds)
    except (TypeError, ValueError):
        return ""
    if not math.isfinite(value):
        return ""
    value = max(0.0, value)
    if value < 0.00095:
        return f"{value * 1000:.1f} ms"
    if round(value * 1000) < 1000:
        return f"{round(value * 1000)} ms"
    if round(value, 1) < 60:
        return f"{value:.1f} s"
    minutes, secs = divmod(round(value), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"
