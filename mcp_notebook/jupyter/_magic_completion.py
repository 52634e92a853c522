"""Tab completion for ``%mcp``: what the word being typed can become.

What it owns: reading an ``%mcp`` line up to the cursor (the subcommand, the positional words, the
option the word follows, ``-s SERVER``) and answering, per position, from the grammar
(:mod:`._magic_grammar`) and the lists the registry's sessions already hold: subcommands, server
and group names, config-file names after ``connect``, tool names and every server's
``SERVER.TOOL``, ``key=`` arguments and their enum/boolean values, prompt names and arguments,
resource URIs, task actions and the ids of the session's tasks.

What it must never do: ask a server anything or connect (it runs on every Tab, so it reads only
what the models hold), raise into the user's typing (the matcher swallows errors), or import the
commands' module (:mod:`._magics` builds a :class:`Completer` per call, given its registry).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..notebook import _targets
from ..protocol._errors import McpError
from . import _group_commands as _groups
from ._magic_args import OPTIONS, schema_types
from ._magic_grammar import COMMANDS, TASK_ACTIONS, VALUE_OPTIONS

if TYPE_CHECKING:
    from ..client._results import Tool
    from ..notebook._model import SessionModel
    from ..notebook._registry import Registry

__all__ = ["Completer", "matcher"]

#: The subcommands whose one word is a server's (or, but for ``use``, a group's) name.
_NAMED = ("use", "disconnect", "status", "explore", "log")


class Completer:
    """Completion over ``registry`` (the open sessions and groups) and the ``%mcp`` grammar."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    def completions(self, line: str) -> tuple[str, list[str]] | None:
        """What Tab offers at the end of ``line`` (the text before the cursor on its line).

        ``(fragment, candidates)``: the candidates replace ``fragment``, the word being typed.
        None when ``line`` is not an ``%mcp`` line, or when other completers should answer
        (the command after ``connect … --`` gets the usual file completion).
        """
        match = re.match(r"\s*%%?mcp\s", line)
        if match is None:
            return None
        rest = line[match.end() :]
        words = rest.split()
        fragment = words.pop() if rest and not rest[-1].isspace() else ""
        if "--" in words:
            return None
        if words[:1] == ["connect"] and "--all" in words:
            return None  # CONFIG: a path, for the file completer
        positional: list[str] = []
        server: str | None = None
        previous = ""
        for word in words:
            if previous in VALUE_OPTIONS:
                if previous in ("-s", "--server"):
                    server = word
                previous = ""
                continue
            previous = word
            if not word.startswith("-"):
                positional.append(word)
        candidates = self.candidates(positional, previous, fragment, server)
        return fragment, sorted(c for c in candidates if c.startswith(fragment))

    def candidates(
        self, positional: list[str], previous: str, fragment: str, server: str | None
    ) -> list[str]:
        """Every word that may come here (:meth:`completions` keeps those starting with ``fragment``)."""
        if previous in ("-s", "--server"):
            return list(self.registry.names())
        if previous in VALUE_OPTIONS:
            return []
        if not positional:
            return list(COMMANDS)
        subcommand, arguments = positional[0], positional[1:]
        command = COMMANDS.get(subcommand)
        if command is None:
            return []
        if fragment.startswith("-"):
            return sorted(o for o, (f, _) in OPTIONS.items() if f in command.options and o.startswith("--"))
        return self._complete_subcommand(subcommand, arguments, fragment, server)

    def _complete_subcommand(
        self, subcommand: str, arguments: list[str], fragment: str, server: str | None
    ) -> list[str]:
        """The words after ``subcommand`` that need no session's lists."""
        if subcommand == "help":
            return list(COMMANDS) if not arguments else []
        if subcommand in _NAMED:
            return [] if arguments else self._complete_target(groups=subcommand != "use")
        if subcommand == "tasks" and not arguments:
            return list(TASK_ACTIONS)
        if subcommand == "connect":
            return _targets.server_names() if not arguments else []
        if subcommand == "call":
            return (
                self._complete_tool(server)
                if not arguments
                else self._complete_arguments(arguments, fragment, server)
            )
        if subcommand == "tools" and not arguments and server is None:
            names = [t.name for t in self._cached_tools(self.registry.current)]
            return names + self._complete_target(groups=True)
        return self._complete_from_model(
            subcommand, arguments, self._cached_model(server or self.registry.current)
        )

    def _complete_target(self, *, groups: bool) -> list[str]:
        """Server names (sessions and groups' servers), and the groups' names when ``groups``."""
        return list(self.registry.names()) + (list(self.registry.groups) if groups else [])

    def _complete_tool(self, server: str | None) -> list[str]:
        """``call TOOL``: the server's tools (the current one's), and without ``-s`` every
        server's ``SERVER.TOOL``."""
        names = [t.name for t in self._cached_tools(server or self.registry.current)]
        if server is None:
            names += _groups.qualified_tool_names(self._tool_lists())
        return names

    def _complete_arguments(self, arguments: list[str], fragment: str, server: str | None) -> list[str]:
        """``call TOOL key=value …``: the tool's argument names, then a key's enum or boolean values."""
        tool = self._cached_tool(arguments[0], server)
        return _tool_argument_candidates(tool.input_schema, arguments[1:], fragment) if tool else []

    def _complete_from_model(
        self, subcommand: str, arguments: list[str], model: SessionModel | None
    ) -> list[str]:
        """The words the chosen session's lists answer: resource URIs, tool and prompt names, prompt
        arguments, task ids."""
        if model is None:
            return []
        if subcommand == "read" and not arguments:
            uris = [r.uri for r in model.resources]
            return uris + [t.uri_template.split("{", 1)[0] for t in model.resource_templates]
        if subcommand == "tools" and not arguments:
            return [t.name for t in model.tools]
        if subcommand == "prompt":
            return _prompt_candidates(model, arguments)
        if subcommand == "tasks" and len(arguments) == 1 and arguments[0] in TASK_ACTIONS:
            rows = [row for row in model.tasks if row.get("task_id")]
            if arguments[0] == "cancel":
                rows = [row for row in rows if not row.get("done")]
            return [str(row["task_id"]) for row in rows]
        return []

    # --- the lists at hand (no network) --------------------------------------------------------------

    def _tool_lists(self) -> dict[str, list[Tool]]:
        return _groups.tool_lists(self.registry.session_objects(), self.registry.groups)

    def _cached_model(self, name: str | None) -> SessionModel | None:
        """The model of the session or group server ``name`` (None if there is none up): no network."""
        if name is None:
            return None
        entry = self.registry.sessions.get(name)
        if entry is not None:
            return entry.session.model
        group_name = self.registry.names().get(name)
        session = self.registry.groups[group_name].sessions.get(name) if group_name is not None else None
        return session.model if session is not None else None

    def _cached_tools(self, name: str | None) -> list[Tool]:
        model = self._cached_model(name)
        return list(model.tools) if model is not None else []

    def _cached_tool(self, name: str, server: str | None) -> Tool | None:
        """The tool ``%mcp call NAME`` means, from the lists at hand (as the command's, without asking)."""
        found = next((t for t in self._cached_tools(server or self.registry.current) if t.name == name), None)
        if found is not None or server is not None:
            return found
        lists = self._tool_lists()
        try:
            owner, tool = _groups.resolve_tool(name, lists)
        except McpError:
            return None
        return next((t for t in lists.get(owner, ()) if t.name == tool), None)


def _prompt_candidates(model: SessionModel, arguments: list[str]) -> list[str]:
    if not arguments:
        return [p.name for p in model.prompts]
    prompt = next((p for p in model.prompts if p.name == arguments[0]), None)
    if prompt is None:
        return []
    given = {a.split("=", 1)[0].rstrip(":") for a in arguments[1:]}
    return [f"{n}=" for n in prompt.argument_names if n not in given]


def _tool_argument_candidates(schema: dict[str, Any], given: list[str], fragment: str) -> list[str]:
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return []
    key, has_value, _ = fragment.partition("=")
    if has_value:
        prop = properties.get(key.rstrip(":"))
        if not isinstance(prop, dict):
            return []
        values: list[str] = []
        enum = prop.get("enum")
        if isinstance(enum, list):
            values += [v if isinstance(v, str) else json.dumps(v) for v in enum]
        if "boolean" in schema_types(prop, schema):
            values += ["true", "false"]
        return [f"{key}={v}" for v in values]
    taken = {word.split("=", 1)[0].rstrip(":") for word in given}
    return [f"{name}=" for name in properties if name not in taken]


def matcher(completions: Callable[[str], tuple[str, list[str]] | None]) -> Callable[[Any], dict[str, Any]]:
    """IPython's context matcher over ``completions`` (a line -> ``(fragment, candidates)``)."""
    from IPython.core.completer import SimpleCompletion, context_matcher

    @context_matcher(priority=100, identifier="mcp_notebook.magics")  # type: ignore[untyped-decorator]
    def mcp_matcher(context: Any) -> dict[str, Any]:
        try:
            found = completions(context.text_until_cursor)
        except Exception:  # a completer never breaks typing
            found = None
        if found is None:
            return {"completions": []}
        fragment, candidates = found
        return {
            "completions": [SimpleCompletion(c, type="mcp") for c in candidates],
            "matched_fragment": fragment,
            "suppress": True,
            "ordered": True,
        }

    return mcp_matcher  # type: ignore[no-any-return]
