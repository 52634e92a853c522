"""A fastmcp server with tasks (the 2026-07-28 extension ``io.modelcontextprotocol/tasks``).

The test peer for the modern flavour of tasks: fastmcp with the ``fastmcp-tasks`` extension,
task state in memory (it dies with the process). Tools:

- ``crunch(steps, delay)``: required task; reports each step as progress (the task's status
  message) and returns ``{"steps": steps}``.
- ``optional_sum(a, b)``: optional task; runs inline unless the client asks for a task.
- ``ask_name(greeting)``: required task that asks the user for a name (elicitation) and greets.
- ``breaks()``: required task that raises (the task ends ``failed`` or its result is an error).
- ``echo(text)``: an ordinary tool.

Run ``python tasks_server.py`` (stdio) or ``python tasks_server.py --http`` (Streamable HTTP on a
free localhost port, announced as ``MCP_HTTP_URL=<url>`` once it listens).
"""

from __future__ import annotations

import socket
import sys
from datetime import timedelta

import anyio
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension
from mcp_types import ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult

mcp = FastMCP("tasks-test-server")
mcp.add_extension(TasksExtension(url="memory://"))

FAST = timedelta(milliseconds=100)


@mcp.tool(task=TaskConfig(mode="required", poll_interval=FAST))
async def crunch(steps: int = 3, delay: float = 0.3, ctx: Context | None = None) -> dict[str, int]:
    """Work through ``steps`` steps of ``delay`` seconds each, reporting each one."""
    for step in range(steps):
        if ctx is not None:
            await ctx.report_progress(step, steps, f"step {step + 1} of {steps}")
        await anyio.sleep(delay)
    return {"steps": steps}


@mcp.tool(task=TaskConfig(mode="optional", poll_interval=FAST))
async def optional_sum(a: int, b: int) -> int:
    """Add two numbers; a task only when the client asks for one."""
    return a + b


NAME_REQUEST = ElicitRequest(
    params=ElicitRequestFormParams(
        message="What is your name?",
        requested_schema={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    )
)


@mcp.tool(task=TaskConfig(mode="required", poll_interval=FAST))
async def ask_name(greeting: str = "Hello", ctx: Context | None = None) -> str | InputRequiredResult:
    """Ask the user for a name (the task waits in ``input_required``), then greet them."""
    assert ctx is not None
    responses = ctx.input_responses or {}
    answer = responses.get("name")
    if not isinstance(answer, ElicitResult):
        return InputRequiredResult(input_requests={"name": NAME_REQUEST})
    if answer.action != "accept" or not answer.content:
        return f"{greeting}, whoever you are ({answer.action})"
    return f"{greeting}, {answer.content['name']}!"


@mcp.tool(task=TaskConfig(mode="required", poll_interval=FAST))
async def breaks() -> str:
    """Always fails."""
    await anyio.sleep(0.1)
    raise ToolError("it broke on purpose")


@mcp.tool
def echo(text: str) -> str:
    """An ordinary tool beside the task tools."""
    return text


def serve_http() -> None:
    """Listen first, then announce: the socket queues connections until uvicorn accepts them."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    print(f"MCP_HTTP_URL=http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
    config = uvicorn.Config(mcp.http_app(), log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    if "--http" in sys.argv[1:]:
        serve_http()
    else:
        mcp.run(show_banner=False)
