"""The ``%mcp`` grammar: the subcommands, their usage lines, help texts and options.

Read by both the commands (:mod:`._magics`: which options a subcommand takes, whether it takes a
cell body, the usage line a mistake is answered with) and completion (:mod:`._magic_completion`:
the subcommands, the options of each, which options take a value, the task actions). Data and
text only: no IPython, no session.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..client._arguments import suggest
from ._magic_args import OPTIONS, MagicArgError

__all__ = [
    "COMMANDS",
    "CONNECT_ALL",
    "TASK_ACTIONS",
    "VALUE_OPTIONS",
    "Command",
    "help_text",
    "unknown_subcommand",
]


@dataclass(frozen=True)
class Command:
    """One subcommand: its usage line, its help text, the option fields it takes (:data:`OPTIONS`
    of :mod:`._magic_args`), and how it shows its result."""

    usage: str
    summary: str
    options: tuple[str, ...] = ()
    body: bool = False  # takes a %%mcp cell body
    quiet: bool = False  # prints what it did; returns nothing (-o stores the value)


SESSION_OPTIONS = ("out", "server")
CONNECT_ALL = "connect --all [CONFIG] [--only A,B] [--as GROUP] [--timeout S] [-o VAR]"

COMMANDS: dict[str, Command] = {
    "connect": Command(
        "connect NAME [URL | -- COMMAND ARGS…] [--token-env VAR] [--header K=V] [--header-env K=VAR] "
        "[--protocol auto|modern|legacy] [--timeout S] [-o VAR]",
        "Connect to a server and make it the current one. After `--`: the command that starts a stdio "
        "server. A URL: a Streamable HTTP (or HTTP+SSE) server; --token-env names the environment "
        "variable holding a bearer token, --header-env one holding a header's value (values are never "
        "shown). NAME alone: the server of that name in mcp.json (./mcp.json, ./.mcp.json, "
        "./.vscode/mcp.json, ~/.config/mcp/mcp.json). Connecting a NAME again replaces its session. "
        "`connect --all [CONFIG] [--only A,B] [--as GROUP]` connects every server of a config file "
        "(any common format; without CONFIG the first file of the documented search path) in "
        "parallel as one group (default name 'group'; connecting the name again replaces it), shows "
        "its board (a server that fails shows why, and is retried in the background) and makes its "
        "first server that came up current. Its servers are then names like any session's "
        "(-s SERVER, %mcp use SERVER, %mcp call SERVER.TOOL); a session connected on its own keeps "
        "its name over a group's server, and the group connected last comes first. -o stores the "
        "Group.",
        ("out", "token_env", "headers", "header_env", "protocol", "timeout", "all", "only", "group"),
        quiet=True,
    ),
    "servers": Command(
        "servers [-o VAR]",
        "Every session (a DataFrame, one row each): those opened with %mcp connect and those opened "
        "in code (mcp_notebook.connect(), Session(), connect_all()), and each server of every group. "
        "Columns: name, current, server, status, era, protocol, tools, opened (how: '%mcp connect', "
        "'connect()', ...), group, target, last_error. A group's server whose name a session has "
        "shows as 'NAME (hidden by the session)'.",
        ("out",),
    ),
    "use": Command("use NAME", "Make NAME (a session or a group's server) the current session.", quiet=True),
    "tools": Command(
        "tools [PATTERN | SERVER | GROUP] [--all] [-s SERVER] [-o VAR]",
        "The tools (a DataFrame); PATTERN keeps names matching a glob (`sales_*`) or containing it. "
        "A word that names a server lists that server's tools, one that names a group every tool of "
        "the group with a server column (-s SERVER PATTERN filters a server's tools by such a word). "
        "--all adds the tools only an MCP App's View may call (hidden otherwise).",
        (*SESSION_OPTIONS, "all"),
    ),
    "call": Command(
        "call TOOL [key=value …] [key:=JSON …] [--task] [--frame] [--timeout S] [-s SERVER] [-o VAR]",
        "Call a tool. Each value is converted to the type its inputSchema gives (numbers, true/false/"
        "yes/no, null, JSON or comma lists for arrays, JSON objects; strings as typed); key:=JSON "
        "passes JSON as is. In a %%mcp cell the body is a JSON (or YAML) object of arguments, and "
        "key=value on the line override it. Returns the ToolResult (--frame: its DataFrame); a tool "
        "that runs as a task is followed to its end. --task starts the tool as a task and returns "
        "the task at once (`job = %mcp call --task TOOL …`; job.result() waits, job.cancel() stops "
        "it; with -o it prints the task id); see %mcp tasks. TOOL is the current session's tool of "
        "that name if it has one, otherwise SERVER.TOOL (fastmcp's SERVER_TOOL too, or a name only "
        "one server offers) goes to that server, a group's or a session's.",
        (*SESSION_OPTIONS, "timeout", "frame", "task"),
        body=True,
    ),
    "app": Command(
        "app TOOL [key=value …] [key:=JSON …] [-s SERVER] [-o VAR]",
        "Open a tool's MCP App: calls the tool and shows its interactive View in the cell, sandboxed "
        "(see session.app). Arguments as for call (a %%mcp cell body may give them as JSON or YAML). "
        "Returns the AppView: view.model_context, view.messages and view.status follow the View "
        "from Python. A tool without a ui:// View is an error.",
        SESSION_OPTIONS,
        body=True,
    ),
    "read": Command(
        "read URI [-s SERVER] [-o VAR]", "Read a resource; returns its ResourceContents.", SESSION_OPTIONS
    ),
    "prompt": Command(
        "prompt NAME [key=value …] [-s SERVER] [-o VAR]",
        "Get a prompt (its arguments are strings; a %%mcp cell body may give them as JSON or YAML); "
        "returns the PromptResult.",
        SESSION_OPTIONS,
        body=True,
    ),
    "tasks": Command(
        "tasks [get | result | cancel TASK_ID] [--all] [--timeout S] [--frame] [-s SERVER] [-o VAR]",
        "The tasks this session started or attached to (a DataFrame: task_id, tool, status, "
        "status_message, started, ended, elapsed), kept current while they run. --all asks the "
        "server for its own list instead (tasks/list, where the server offers it). `get ID` returns "
        "the task, attaching to it if the session does not know it yet (one started before a kernel "
        "restart, if the server still has it for this session); `result ID` waits for its result "
        "(--timeout S stops the wait, not the task; --frame: its DataFrame); `cancel ID` asks the "
        "server to stop it. The ID of a task the session knows may be shortened to a prefix no "
        "other has.",
        (*SESSION_OPTIONS, "all", "timeout", "frame"),
    ),
    "resources": Command("resources [-s SERVER] [-o VAR]", "The resources (a DataFrame).", SESSION_OPTIONS),
    "prompts": Command("prompts [-s SERVER] [-o VAR]", "The prompts (a DataFrame).", SESSION_OPTIONS),
    "history": Command(
        "history [-s SERVER] [-o VAR]", "The calls made so far (a DataFrame).", SESSION_OPTIONS
    ),
    "status": Command(
        "status [SERVER | GROUP] [-o VAR]",
        "The session's live status panel (a group's: its board).",
        ("out",),
    ),
    "explore": Command(
        "explore [SERVER | GROUP] [-o VAR]",
        "The tool explorer widget (a group's: with a server selector).",
        ("out",),
    ),
    "log": Command(
        "log [SERVER | GROUP] [-o VAR]",
        "The server's notifications and log messages (a group's: every server's, merged).",
        ("out",),
    ),
    "disconnect": Command(
        "disconnect [NAME | --all]",
        "Close the current session, NAME's (a group's NAME: every server of the group), or all of "
        "them, groups and the ones opened in code included.",
        ("all",),
        quiet=True,
    ),
    "tb": Command(
        "tb [full | short]",
        "The full traceback of the cell's last error (an McpError shows as a short block: kind, "
        "message, the call, what to do, and your own frames). `full` shows every McpError with its "
        "full traceback from now on (as MCP_NOTEBOOK_TRACEBACK=full in the environment does), "
        "`short` goes back to the short block.",
        quiet=True,
    ),
    "help": Command("help [SUBCOMMAND]", "This help, or one subcommand's.", quiet=True),
}


def help_text(subcommand: str | None = None) -> str:
    if subcommand is not None:
        command = COMMANDS[subcommand]
        also = f"\n%mcp {CONNECT_ALL}" if subcommand == "connect" else ""
        return f"%mcp {command.usage}{also}\n\n{command.summary}"
    lines = [
        "%mcp SUBCOMMAND …  /  %%mcp call TOOL (cell body: JSON or YAML arguments)",
        "",
        "Talk to MCP servers from cells. The last server connected is the current one;",
        "-s SERVER picks another for one command, -o VAR stores the result instead of showing it.",
        "%mcp connect --all connects every server of a config file as one group; its servers are",
        "then names like sessions, and %mcp call SERVER.TOOL reaches any server.",
        "",
    ]
    for name, command in COMMANDS.items():
        lines.append(f"  %mcp {command.usage}")
        if name == "connect":
            lines.append(f"  %mcp {CONNECT_ALL}")
    lines += ["", "%mcp help SUBCOMMAND explains one. Mistakes are reported in one line, not a traceback."]
    return "\n".join(lines)


def unknown_subcommand(name: str) -> MagicArgError:
    hint = suggest(name, list(COMMANDS), "subcommands", limit=len(COMMANDS))
    return MagicArgError(f"unknown subcommand {name!r}{hint}")


#: The options that take a value (the word after them is not a positional word).
VALUE_OPTIONS = frozenset(o for o, (_, takes_value) in OPTIONS.items() if takes_value)
#: What ``%mcp tasks ACTION TASK_ID`` can do to one task.
TASK_ACTIONS = ("get", "result", "cancel")
