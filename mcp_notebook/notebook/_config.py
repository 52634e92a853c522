"""Old home of naming servers (``connect("demo")`` finds "demo" in a config file); issue #27 made
:mod:`._targets` the one connect-target parser. Kept, re-exporting, until the faces step (a plain
re-export rather than a ``sys.modules`` alias, so the type checker follows ``_config.resolve_target``)."""

from ._targets import config_files, find_entry, is_name, resolve_target, server_names

__all__ = ["config_files", "find_entry", "is_name", "resolve_target", "server_names"]
