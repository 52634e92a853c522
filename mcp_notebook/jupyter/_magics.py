"""The ``%mcp`` line magic and ``%%mcp`` cell magic: ``%load_ext mcp_notebook``.

::

    %load_ext mcp_notebook
    %mcp connect demo -- python -m mcp_notebook.demo
    %mcp tools
    %mcp call add a=1.5 b=2
    %%mcp call sales_records -o rows
    {"region": "north", "limit": 3}
    job = %mcp call --task crunch steps=50
    %mcp tasks
    %mcp tasks result <TASK_ID>
    %mcp connect --all claude_desktop_config.json --only github,demo --as work
    %mcp call github.search_issues query=bug
    %mcp servers

The magics use the notebook's one set of named sessions (:mod:`..notebook._registry`): the ones ``%mcp
connect`` opens and the ones code opens (``s = mcp_notebook.connect(...)``, ``Session(...)``,
``connect_all(...)``) alike, so ``%mcp tools`` works right after ``connect()``. The last one
connected, either way (or chosen with ``%mcp use``), is the current one, and ``-s NAME`` picks
another for one command. ``%mcp servers`` lists every one, with each group's servers. A session
closed in code leaves the set; ``%mcp`` then says so if it is named (``no session named 'x' (it
was closed); open sessions: …``). ``%mcp help`` lists the subcommands; ``%mcp?`` shows the same
text.

``%mcp connect --all [CONFIG]`` connects every server of a config file as one
:class:`~mcp_notebook.notebook.Group` (kept by its ``--as`` name, "group" by default), shows its
board and makes its first server that came up current. Its servers are then names like sessions
(``-s demo``, ``%mcp use demo``, ``%mcp tools demo``), and ``%mcp call SERVER.TOOL`` reaches any
server, a group's or a session's. When two share a name, a session connected on its own wins, then
the group connected last (the board marks a server so hidden); ``%mcp call TOOL`` is the current
session's tool when it has one, otherwise ``SERVER.TOOL``, fastmcp's ``SERVER_TOOL`` or a name only
one server offers (:mod:`._group_commands` holds these rules).

Behaviours:

- A command returns its result (a ``ToolResult``, ``ResourceContents``, ``PromptResult``, a
  DataFrame or a widget), so the cell displays it. With ``-o VAR`` the result is stored in the
  user's variable ``VAR`` instead and nothing is displayed (a tool that reports ``isError`` still
  gets a one-line notice).
- ``connect``, ``use`` and ``disconnect`` print one line saying what happened and return nothing
  (``connect -o VAR`` stores the Session).
- A mistake (an unknown subcommand, server, tool, prompt or argument, a value that does not fit the
  schema, an error from the server or the connection) is shown as one red line,
  ``mcp call: no tool 'ad' on 'demo'; did you mean 'add'? (tools: ...)``, never a traceback. It is
  raised as an exception (a ``UsageError`` that renders as that one line), so the cell counts as
  failed and "Run all" stops there, as it would for any other error.
- Tasks: ``%mcp call TOOL`` on a tool that runs as a task waits for its end and returns its
  result, as for any tool. ``%mcp call --task TOOL`` starts it and returns the running task at
  once (a ``SessionTask``: ``job.result()`` waits, ``job.cancel()`` stops it); with ``-o VAR`` it
  prints one line naming the task id, the thing to keep for attaching again after a kernel
  restart. ``%mcp tasks`` is the session's tasks as a DataFrame (``--all``: the server's own
  list); ``%mcp tasks get|result|cancel ID`` act on one, attaching to a task the session does not
  know yet.
- Tab completion: subcommands, server names (``use``, ``disconnect``, ``-s``; names from mcp.json
  after ``connect``; a group's servers too), tool names, every server's ``SERVER.TOOL``, and then
  their ``key=`` arguments and enum/boolean values (``call``), prompt names and arguments
  (``prompt``), resource URIs (``read``), task actions and the ids of the session's tasks
  (``tasks``): :mod:`._magic_completion`. The subcommands, their options and help texts are
  :mod:`._magic_grammar`'s, connect targets :mod:`..notebook._targets`'.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class

from ..client._arguments import suggest, unknown_tool
from ..notebook import _commands
from ..notebook._registry import REGISTRY, Entry, Registry
from ..notebook._session_tasks import SessionTask
from ..notebook._targets import TargetError, connect_target, describe_command, describe_url, http_options
from ..protocol._errors import McpError
from . import _group_commands as _groups
from ._magic_args import (
    MagicArgError,
    Options,
    body_arguments,
    one_line,
    parse_options,
    prompt_arguments,
    split_line,
    tool_arguments,
)
from ._magic_completion import Completer, matcher
from ._magic_grammar import COMMANDS, CONNECT_ALL, TASK_ACTIONS, help_text, unknown_subcommand
from ._session import Session, connect

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from ._session import Group

__all__ = ["McpMagicError", "McpMagics", "load_ipython_extension", "unload_ipython_extension"]


@dataclass(frozen=True)
class _Printed:
    """What one action of a command returns when it printed what it did (as a quiet command does):
    nothing is displayed, ``-o`` stores ``value``."""

    value: Any


class McpMagicError(UsageError):
    """A user's mistake or an MCP error, shown by IPython as one line (no traceback)."""

    def __init__(self, message: str, *, colour: bool = True) -> None:
        super().__init__(message)
        self.message = message
        self.colour = colour

    def _render_traceback_(self) -> list[str]:
        # IPython calls this instead of formatting a traceback (ipykernel sends it as the error output).
        return [f"\x1b[0;31m{self.message}\x1b[0m" if self.colour else self.message]


_one_line = one_line
_MAGICS = "%mcp connect"  # how the sessions the magics open are marked in the registry


@magics_class
class McpMagics(Magics):
    """The ``%mcp`` magics, over the notebook's one set of named sessions (the registry's REGISTRY)."""

    shell: InteractiveShell  # always given (Magics allows None)
    _matcher: Callable[[Any], dict[str, Any]]  # set by load_ipython_extension when there is a completer

    def __init__(self, shell: Any) -> None:
        super().__init__(shell)
        self.registry: Registry = REGISTRY

    @property
    def sessions(self) -> dict[str, Entry]:
        """The open sessions by name, however they were opened (read only: a snapshot)."""
        return self.registry.sessions

    @property
    def groups(self) -> dict[str, Group]:
        """The open groups by name, the one connected last last (read only: a snapshot)."""
        return cast("dict[str, Group]", self.registry.groups)  # the registry holds notebook Groups

    @property
    def current(self) -> str | None:
        return self.registry.current

    @current.setter
    def current(self, name: str | None) -> None:
        self.registry.current = name

    # --- the magic --------------------------------------------------------------------------------

    @line_cell_magic
    def mcp(self, line: str, cell: str | None = None) -> Any:
        subcommand = ""
        try:
            tokens = split_line(line)
            subcommand = tokens[0] if tokens else "help"
            command = COMMANDS.get(subcommand)
            if command is None:
                raise unknown_subcommand(subcommand)
            options = parse_options(tokens[1:], command.options, subcommand)
            if options.command is not None and subcommand != "connect":
                raise MagicArgError("'--' comes only in %mcp connect NAME -- COMMAND")
            if cell is not None and cell.strip() and not command.body:
                raise MagicArgError(f"%%mcp {subcommand} takes no cell body (only call, app and prompt do)")
            value = getattr(self, f"_do_{subcommand}")(options, cell)
            quiet = command.quiet
            if isinstance(value, _Printed):
                value, quiet = value.value, True
            if options.out is not None:
                self.shell.user_ns[options.out] = value
                return None
            return None if quiet else value
        except (TargetError, McpError) as exc:  # MagicArgError is a TargetError
            message = _one_line(f"mcp {subcommand}: {exc}" if subcommand else f"mcp: {exc}")
        # Raised outside the except block, so no exception context comes along to be shown.
        raise McpMagicError(message, colour=str(getattr(self.shell, "colors", "")).lower() != "nocolor")

    # --- sessions ---------------------------------------------------------------------------------

    def session(self, name: str | None = None) -> tuple[str, Session]:
        """``(name, session)``: NAME's, or the current one; a clear error if there is none."""
        found, session = _commands.named_session(name, registry=self.registry)
        return found, cast(Session, session)  # the registry holds this layer's Sessions

    def _names(self) -> dict[str, str | None]:
        """Every usable server name -> its group (None: a session of its own); see _registry.server_names."""
        return self.registry.names()

    def _tool_lists(self) -> dict[str, list[Any]]:
        return _groups.tool_lists(self.registry.session_objects(), self.groups)

    def _one_word(self, options: Options, subcommand: str, *, optional: bool = False) -> str | None:
        words = options.words
        if len(words) > 1 or (not words and not optional):
            raise MagicArgError(f"usage: %mcp {COMMANDS[subcommand].usage}")
        return words[0] if words else None

    def _do_connect(self, options: Options, cell: str | None) -> Any:
        if options.all:
            return self._connect_group(options)
        if options.only or options.group is not None:
            raise MagicArgError(
                "--only and --as go with --all (%mcp connect --all [CONFIG] --only A,B --as GROUP)"
            )
        name, target, described = connect_target(options, f"usage: %mcp {COMMANDS['connect'].usage}")
        client_options: dict[str, Any] = {}
        if options.protocol is not None:
            client_options["protocol"] = options.protocol
        if options.timeout is not None:
            client_options["timeout"] = options.timeout
        client_options.update(http_options(options, target))
        try:
            session = connect(target, name=name, register=False, **client_options)
        except ValueError as exc:  # a name not in mcp.json, a bad option value
            raise MagicArgError(str(exc)) from None
        # Connecting a NAME again replaces its session (however it was opened), as documented.
        name, old = self.registry.add(
            session, name=name or session.name, opened=_MAGICS, target=described, replace=True
        )
        if old is not None:
            old.close()
        model = session.model
        info = model.server_info or {}
        server = f"{info.get('name', '?')} {info.get('version') or ''}".strip()
        print(
            _one_line(  # the server's name and version are its words: escapes shown, not obeyed
                f"connected {name!r}: {server} ({model.era or '?'} {model.protocol_version or ''}), "
                f"{len(model.tools)} tools, {len(model.resources)} resources, {len(model.prompts)} prompts"
                + (" (replaced the previous session)" if old is not None else "")
            )
        )
        return session

    def _connect_group(self, options: Options) -> _Printed:
        usage = f"usage: %mcp {CONNECT_ALL}"
        if options.command is not None or len(options.words) > 1:
            raise MagicArgError(usage)
        if options.token_env or options.headers or options.header_env:
            raise MagicArgError(
                "--token-env and --header apply to one server URL; a config file gives each server's"
            )
        name = options.group or "group"
        if name.startswith("-") or "=" in name:
            raise MagicArgError(f"{name[:40]!r} cannot be a group name; {usage}")
        if name in self.sessions:
            raise MagicArgError(f"{name!r} already names a session; choose another group name (--as GROUP)")
        client_options: dict[str, Any] = {}
        if options.protocol is not None:
            client_options["protocol"] = options.protocol
        if options.timeout is not None:
            client_options["timeout"] = options.timeout
        config = options.words[0] if options.words else None
        try:
            group = _groups.open_group(config, options.only, register=False, **client_options)
        except (ValueError, OSError) as exc:  # a config that cannot be read, an unknown --only name
            raise MagicArgError(str(exc)) from None
        return _Printed(self.add_group(name, group))

    def add_group(self, name: str, group: Group) -> Group:
        """Keep ``group`` as ``name`` (closing a group of that name it replaces), show its board, and
        make its first server that came up the current session. ``%mcp connect --all`` ends here."""
        group._fetch_lists()  # the board shows what each server offers, as %mcp connect does
        name, old = self.registry.add_group(group, name=name, opened=f"{_MAGICS} --all", replace=True)
        if old is not None:
            old.close()
        names = self._names()
        first = next((s for s in group if names.get(s) == name and s in group.sessions), None)
        from IPython.display import display

        display(
            _groups.ServerBoard([(f"group {name!r}", _groups.group_rows(name, group, names, self.current))])
        )
        up = sum(1 for s in group if s in group.sessions)
        print(
            f"connected group {name!r}: {up} of {len(group)} servers up"
            + (f"; current session: {first!r}" if first is not None else "")
            + (" (replaced the previous group)" if old is not None else "")
        )
        return group

    def _do_servers(self, options: Options, cell: str | None) -> Any:
        if options.words:
            raise MagicArgError(f"usage: %mcp {COMMANDS['servers'].usage}")
        return _commands.servers(registry=self.registry)

    def _do_use(self, options: Options, cell: str | None) -> None:
        name = self._one_word(options, "use")
        assert name is not None
        _commands.use(name, registry=self.registry)
        print(f"current session: {self.current!r}")

    def _do_disconnect(self, options: Options, cell: str | None) -> None:
        if options.all and options.words:
            raise MagicArgError("give a NAME or --all, not both")
        word = None if options.all else self._one_word(options, "disconnect", optional=True)
        closed = _commands.disconnect(word, all=bool(options.all), registry=self.registry)
        print("\n".join(closed) if closed else "no sessions to disconnect")

    def _fix_current(self) -> None:
        """After a close: keep the current name if it still means something, else the last session
        connected, else the first server up of the group connected last, else none."""
        self.registry.fix_current()

    def close_all(self) -> None:
        """Close every session and group the magics opened (the extension's unload does this); the
        ones code opened stay open (code holds them, and closes them)."""
        for name, entry in list(self.sessions.items()):
            if entry.opened == _MAGICS and self.registry.remove(name) is not None:
                entry.session.close()
        for name, opened in list(self.registry.groups_opened.items()):
            group = self.registry.remove_group(name) if opened.startswith(_MAGICS) else None
            if group is not None:
                group.close()
        self._fix_current()

    # --- listing ----------------------------------------------------------------------------------

    def _do_tools(self, options: Options, cell: str | None) -> Any:
        pattern = self._one_word(options, "tools", optional=True)
        return _commands.tools(
            pattern, server=options.server, include_app_only=bool(options.all), registry=self.registry
        )

    def _do_resources(self, options: Options, cell: str | None) -> Any:
        self._no_words(options, "resources")
        return self.session(options.server)[1].resources_frame()

    def _do_prompts(self, options: Options, cell: str | None) -> Any:
        self._no_words(options, "prompts")
        return self.session(options.server)[1].prompts_frame()

    def _do_history(self, options: Options, cell: str | None) -> Any:
        self._no_words(options, "history")
        return self.session(options.server)[1].history_frame()

    def _no_words(self, options: Options, subcommand: str) -> None:
        if options.words:
            raise MagicArgError(f"usage: %mcp {COMMANDS[subcommand].usage}")

    # --- calls ------------------------------------------------------------------------------------

    def _named(self, options: Options, subcommand: str, kind: str) -> tuple[Session, Any, list[str]]:
        """``NAME key=value ...`` of ``call``/``prompt``: the session, the tool or prompt, the pairs.

        A name not in the cached list is looked up once more after re-listing (the server may
        have added it since); still unknown, it is a one-line error with a suggestion.
        """
        if not options.words:
            raise MagicArgError(f"usage: %mcp {COMMANDS[subcommand].usage}")
        name, *pairs = options.words
        if kind == "tools" and options.server is None:
            session, tool = self._tool(name)
            return session, tool, pairs
        server, session = self.session(options.server)
        relist = session.list_tools if kind == "tools" else session.list_prompts
        found = _find(name, list(getattr(session.model, kind)), lambda: relist(refresh=True))
        if found is None:
            known = [item.name for item in getattr(session.model, kind)]  # as re-listed
            raise MagicArgError(f"no {kind[:-1]} {name!r} on {server!r}{suggest(name, known, kind)}")
        return session, found, pairs

    def _tool(self, name: str) -> tuple[Session, Any]:
        """The session and the tool ``%mcp call NAME`` means: the current session's tool of that
        name, else SERVER.TOOL / SERVER_TOOL / a name one server offers (see _group_commands)."""
        names = self._names()
        current = self.current if self.current in names else None
        lists = self._tool_lists()
        if current is not None and any(t.name == name for t in lists.get(current, ())):
            server, tool = current, name
        else:
            try:
                server, tool = _groups.resolve_tool(name, lists)
            except McpError as exc:
                if isinstance(exc.data, dict) and exc.data.get("owners"):
                    raise MagicArgError(exc.message) from None
                if current is None and names:
                    raise self._no_tool(name, names) from None
                server, tool = self.session()[0], name  # the current one, listed again below
        _, session = self.session(server)
        found = _find(tool, list(session.model.tools), lambda: session.list_tools(refresh=True))
        if found is None:
            if server == current and tool == name and _groups.SEPARATOR in name:
                raise self._no_tool(name, names)
            known = [t.name for t in session.model.tools]  # as re-listed
            raise MagicArgError(unknown_tool(tool, known, server))
        return session, found

    def _no_tool(self, name: str, names: dict[str, str | None]) -> MagicArgError:
        prefix, dot, _ = name.partition(_groups.SEPARATOR)
        if dot:
            return MagicArgError(
                f"no server named {prefix!r} (for {name!r}){suggest(prefix, list(names), 'servers')}"
            )
        return MagicArgError(
            f"no server offers a tool {name!r}; name it SERVER{_groups.SEPARATOR}TOOL "
            f"(servers: {', '.join(names)})"
        )

    def _do_call(self, options: Options, cell: str | None) -> Any:
        if options.task and options.frame:
            raise MagicArgError(
                "--task returns the task at once, so there is no result for --frame yet "
                "(%mcp tasks result TASK_ID --frame waits for it)"
            )
        session, tool, pairs = self._named(options, "call", "tools")
        name = tool.name
        arguments = tool_arguments(pairs, tool.input_schema, name, base=body_arguments(cell))
        call_options: dict[str, Any] = {}
        if options.timeout is not None:
            call_options["timeout"] = options.timeout
        if options.task:
            return self._start_task(session, name, arguments, call_options, options.out)
        result = session.call_tool(name, arguments, **call_options)
        if result.is_error and options.out is not None:
            print(_one_line(f"mcp call: tool {name!r} reported an error: {result.text}"), file=sys.stderr)
        return result.to_dataframe() if options.frame else result

    def _start_task(
        self,
        session: Session,
        name: str,
        arguments: dict[str, Any],
        call_options: dict[str, Any],
        out: str | None,
    ) -> SessionTask:
        task = session.start_tool(name, arguments, **call_options)
        if not task.task_id:  # the server may run an optional tool at once after all
            print(
                _one_line(
                    f"mcp call: {session.name!r} ran {name!r} at once, not as a task; "
                    f"the returned task is done and holds the result"
                ),
                file=sys.stderr,
            )
        elif out is not None:  # nothing else shows the id, which is what attaches to it later
            print(_one_line(f"started task {task.task_id!r} ({name}) on {session.name!r}"))
        return task

    # --- tasks ------------------------------------------------------------------------------------

    def _do_app(self, options: Options, cell: str | None) -> Any:
        from ..apps import AppError

        session, tool, pairs = self._named(options, "app", "tools")
        arguments = tool_arguments(pairs, tool.input_schema, tool.name, base=body_arguments(cell))
        try:
            return session.app(tool.name, arguments)
        except AppError as exc:
            raise MagicArgError(str(exc)) from None
        except ImportError as exc:
            raise MagicArgError(
                f"MCP Apps need the notebook extra: pip install 'mcp-notebook[notebook]' ({exc})"
            ) from None

    def _do_tasks(self, options: Options, cell: str | None) -> Any:
        server, session = self.session(options.server)
        if not options.words:
            if options.timeout is not None or options.frame:
                raise MagicArgError("--timeout and --frame go with %mcp tasks result TASK_ID")
            return session.tasks_frame(server=options.all)
        action, *rest = options.words
        if action not in TASK_ACTIONS:
            raise MagicArgError(f"unknown action {action!r}{suggest(action, TASK_ACTIONS, 'actions')}")
        if len(rest) != 1 or not rest[0]:
            raise MagicArgError(f"usage: %mcp tasks {action} TASK_ID [-s SERVER] [-o VAR]")
        if options.all:
            raise MagicArgError("--all goes with the list (%mcp tasks --all), not with an action")
        if action != "result" and (options.timeout is not None or options.frame):
            raise MagicArgError(f"--timeout and --frame go with %mcp tasks result, not {action}")
        task = self._task(server, session, rest[0])
        if action == "get":
            return task
        if action == "result":
            result = task.result(timeout=options.timeout)
            if result.is_error and options.out is not None:
                what = f"mcp tasks: task {task.task_id!r} ({task.tool}) reported an error"
                print(_one_line(f"{what}: {result.text}"), file=sys.stderr)
            return result.to_dataframe() if options.frame else result
        tool = f" ({_one_line(task.tool)})" if task.tool else ""
        if not task.done and task.cancel():
            print(f"cancelled task {task.task_id!r}{tool}")
        elif task.done:  # before, or while being cancelled
            print(f"task {task.task_id!r}{tool} had already ended: {_one_line(task.status)}")
        else:
            status = _one_line(task.status)
            print(f"asked to cancel task {task.task_id!r}{tool}; the server has it {status} still")
        return _Printed(task)

    def _task(self, server: str, session: Session, word: str) -> SessionTask:
        """The session's task with this id (or the only one whose id starts with it); a task the
        session does not know is attached to (``get_task``), so one from before a restart works."""
        known = session.tasks
        for task in known:
            if task.task_id == word:
                return task
        matches = [task for task in known if task.task_id.startswith(word)]
        if len(matches) > 1:
            raise MagicArgError(
                f"{word!r} starts the ids of {len(matches)} tasks on {server!r}; give more of the id"
            )
        if matches:
            return matches[0]
        return session.get_task(word)

    def _do_read(self, options: Options, cell: str | None) -> Any:
        uri = self._one_word(options, "read")
        return self.session(options.server)[1].read_resource(str(uri))

    def _do_prompt(self, options: Options, cell: str | None) -> Any:
        session, prompt, pairs = self._named(options, "prompt", "prompts")
        name = prompt.name
        arguments = prompt_arguments(pairs, prompt.arguments, name, base=body_arguments(cell))
        return session.get_prompt(name, arguments)

    # --- views ------------------------------------------------------------------------------------

    def _view_group(self, options: Options, subcommand: str) -> Group | None:
        """The group a view subcommand's word names (a server's name wins over a group's)."""
        word = self._one_word(options, subcommand, optional=True)
        if word is not None and word not in self._names() and word in self.groups:
            return self.groups[word]
        return None

    def _do_status(self, options: Options, cell: str | None) -> Any:
        group = self._view_group(options, "status")
        if group is not None:
            try:
                return group.status_widget()
            except ImportError:  # no ipywidgets: the group's HTML board
                return group
        _, session = self.session(self._one_word(options, "status", optional=True))
        try:
            return session.status_widget()
        except ImportError:  # no ipywidgets: the session's own HTML card
            return session

    def _do_explore(self, options: Options, cell: str | None) -> Any:
        group = self._view_group(options, "explore")
        try:
            if group is not None:
                return group.explorer()
            _, session = self.session(self._one_word(options, "explore", optional=True))
            return session.explorer()
        except ImportError as exc:
            raise MagicArgError(
                f"the explorer needs ipywidgets: pip install 'mcp-notebook[notebook]' ({exc})"
            ) from None

    def _do_log(self, options: Options, cell: str | None) -> Any:
        group = self._view_group(options, "log")
        if group is not None:
            try:
                return group.log_widget()
            except ImportError:  # no ipywidgets: the merged log as a table
                return group.log_frame()
        _, session = self.session(self._one_word(options, "log", optional=True))
        try:
            return session.log_widget()
        except ImportError:  # no ipywidgets: the log as a table
            import pandas as pd

            from ..notebook._frames import _local_times, _missing_as_na, _readable  # escapes made visible

            rows = [_readable(dict(entry)) for entry in list(session.model.log)]
            frame = pd.DataFrame(rows, columns=["time", "level", "logger", "data"])
            frame["time"] = _local_times(frame["time"])  # local and aware, pd.NA: as every frame
            return _missing_as_na(frame.astype({"level": "string", "logger": "string"}))

    def _do_tb(self, options: Options, cell: str | None) -> None:
        mode = self._one_word(options, "tb", optional=True)
        if mode in ("full", "short"):
            _commands.show_full_tracebacks(mode == "full")
            print(f"McpErrors now show {'their full traceback' if mode == 'full' else 'as a short block'}")
            return
        if mode is not None:
            raise MagicArgError(f"usage: %mcp {COMMANDS['tb'].usage}")
        error = getattr(sys, "last_value", None)
        if error is None:
            print("no error to show yet")
            return
        shown = self.shell.InteractiveTB  # the full one, in the current %xmode
        print(shown.stb2text(shown.structured_traceback(type(error), error, error.__traceback__)))

    def _do_help(self, options: Options, cell: str | None) -> None:
        subcommand = self._one_word(options, "help", optional=True)
        if subcommand is not None and subcommand not in COMMANDS:
            raise unknown_subcommand(subcommand)
        print(help_text(subcommand))

    # --- completion -------------------------------------------------------------------------------

    def completions(self, line: str) -> tuple[str, list[str]] | None:
        """What Tab offers at the end of ``line``: ``(fragment, candidates)`` or None (see
        :meth:`._magic_completion.Completer.completions`)."""
        return Completer(self.registry).completions(line)


def _find(name: str, items: list[Any], refresh: Callable[[], Sequence[Any]]) -> Any:
    """The item called ``name``; the list is fetched again once if it is not there (it may be new)."""
    found = next((item for item in items if item.name == name), None)
    if found is None:
        try:
            found = next((item for item in refresh() if item.name == name), None)
        except McpError:
            return None
    return found


_describe_command = describe_command
_describe_url = describe_url


# --- the extension -----------------------------------------------------------------------------------


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext mcp_notebook``: register ``%mcp``/``%%mcp`` and their tab completion."""
    if "McpMagics" in ipython.magics_manager.registry:
        return
    magics = McpMagics(ipython)
    ipython.register_magics(magics)
    completer = getattr(ipython, "Completer", None)
    if completer is not None and hasattr(completer, "custom_matchers"):
        magics._matcher = matcher(magics.completions)
        completer.custom_matchers.append(magics._matcher)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext mcp_notebook``: close the magics' sessions and remove ``%mcp``."""
    magics = ipython.magics_manager.registry.pop("McpMagics", None)
    if magics is None:
        return
    magics.close_all()
    for kind in ("line", "cell"):
        ipython.magics_manager.magics[kind].pop("mcp", None)
    matcher = getattr(magics, "_matcher", None)
    completer = getattr(ipython, "Completer", None)
    if matcher is not None and completer is not None and matcher in completer.custom_matchers:
        completer.custom_matchers.remove(matcher)


McpMagics.mcp.__doc__ = help_text()
