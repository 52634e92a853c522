"""Notebook sessions ask their servers for log messages; the core client does not.

Why: a server may send log messages (``notifications/message``) only to a client that asks. In the
2026-07-28 era a request carries the level it wants in ``_meta`` and a server must send nothing to
a request without it; in the legacy era ``logging/setLevel`` sets it once for the session. The
core :class:`~mcp_notebook.Client` keeps the spec's opt-in (a script reads no log panel), but a
notebook has one: a session that asked for nothing would leave ``model.log``, the log panel and the
dashboard's Log tab at "Nothing yet." whatever the server has to say.

Why "info": it is what a server says about what it is doing, while "debug" is often many lines
a call, which would push the rest out of the bounded log (and cost the server the work of
sending it). ``log_level="debug"`` (or any RFC 5424 level) asks for more or less; ``log_level=None``
asks for none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["DEFAULT_LOG_LEVEL", "asking_for_logs"]

#: The server log level a notebook session asks for unless given ``log_level=``.
DEFAULT_LOG_LEVEL = "info"


def asking_for_logs(options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` (a client's) with ``log_level`` at :data:`DEFAULT_LOG_LEVEL` unless given,
    ``None`` included: that is how a user opts out."""
    return {"log_level": DEFAULT_LOG_LEVEL, **options}
