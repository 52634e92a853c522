"""``session.run_agent(...)``: an agent run in a cell that an interrupt stops, server call and all (#39).

Why it exists: ipykernel delivers an interrupt to a cell that awaits only when the await ends
(ipykernel issue #881), so ``await agent.run(...)`` in a cell cannot be stopped and the server's call
runs on. ``run_agent`` awaits the run on the session's engine while the cell blocks, as ``call_tool``
does, so an interrupt cancels the run and the call. The agents are real (pydantic-ai with its
``FunctionModel``, OpenAI Agents with a scripted ``Model``: the scripts of their own test files), the
server the bundled demo as a subprocess; the interrupt test drives a real ipykernel.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")
pytest.importorskip("agents")

from agents import Runner

import mcp_notebook
from mcp_notebook.agents import openai_agents_server, pydantic_ai_toolset
from mcp_notebook.notebook import Group, Session

from .conftest import demo_server
from .raises import raises_mcp
from .test_agents_openai import ScriptedModel, _agent
from .test_agents_pydantic_ai import Script
from .test_kernel import DEMO, Kernel, _assert_clean
from .test_kernel import kernel as kernel  # the real-kernel fixture
from .widget_helpers import wait_for

HANG_GUARD = 30


@pytest.fixture
def session() -> Any:
    opened = mcp_notebook.connect(demo_server(), show_progress=False, register=False)
    try:
        yield opened
    finally:
        opened.close()


def _tool_calls(session: Session) -> list[tuple[str, str | None, str]]:
    return [(e["name"], e["via"], e["outcome"]) for e in session.model.history if e["method"] == "tools/call"]


def test_a_pydantic_ai_run_is_awaited_on_the_engine_and_its_result_returned(session: Session) -> None:
    script = Script(("add", {"a": 2, "b": 40}))
    agent = script.agent(pydantic_ai_toolset(session))
    result = session.run_agent(agent.run("add them"))
    assert result.output == "done"
    assert script.returns[0].content == {"result": 42.0}
    assert _tool_calls(session) == [("add", "pydantic-ai", "ok")]


def test_an_openai_agents_run_is_awaited_on_the_engine_and_its_result_returned(session: Session) -> None:
    model = ScriptedModel([("add", {"a": 1, "b": 2})])
    result = session.run_agent(Runner.run(_agent(model, openai_agents_server(session)), "add them"))
    assert result.final_output == "done"
    assert model.texts() == ["3.0"]
    assert _tool_calls(session) == [("add", "openai-agents", "ok")]


def test_a_function_makes_the_awaitable_on_the_engine(session: Session) -> None:
    made_on: list[int] = []
    agent = Script(("echo", {"text": "hi"})).agent(pydantic_ai_toolset(session))

    def run() -> Any:
        made_on.append(threading.get_ident())  # where a loop-bound handler would be bound
        return agent.run("echo")

    assert session.run_agent(run).output == "done"
    assert made_on == [session._engine.thread_id]
    assert _tool_calls(session) == [("echo", "pydantic-ai", "ok")]


def test_a_future_of_another_loop_is_refused_with_what_to_do(session: Session) -> None:
    loop = asyncio.new_event_loop()
    try:
        with pytest.raises(TypeError, match=r"run_agent\(lambda: \.\.\.\)"):
            session.run_agent(loop.create_future())
    finally:
        loop.close()


def test_a_closed_sessions_run_is_refused_and_its_coroutine_closed() -> None:
    session = mcp_notebook.connect(demo_server(), show_progress=False, register=False)
    agent = Script(("add", {"a": 1, "b": 1})).agent(pydantic_ai_toolset(session))
    session.close()
    run = agent.run("add")
    with raises_mcp("closed"):
        session.run_agent(run)
    # closed, so Python never warns that it was not awaited (closed on the engine: soon, not at once)
    wait_for(lambda: inspect.getcoroutinestate(run) == inspect.CORO_CLOSED, HANG_GUARD, "the run closed")


def test_a_dialog_during_the_run_is_answered_under_the_cell() -> None:
    pytest.importorskip("ipywidgets")
    from mcp_notebook.widgets._dialogs import NotebookDialogs

    shown: list[Any] = []  # what goes under the running cell
    dialogs = NotebookDialogs("demo", output=shown.append)
    session = mcp_notebook.connect(demo_server(), show_progress=False, register=False, dialogs=dialogs)

    def answer() -> None:  # the person at the notebook, while the cell runs the agent
        wait_for(lambda: dialogs.open_dialogs, HANG_GUARD, "the agent's dialog")
        [dialog] = dialogs.open_dialogs
        dialog.form.set_value({"name": "Ada"})
        dialog.accept_button.click()

    person = threading.Thread(target=answer, daemon=True)
    person.start()
    try:
        script = Script(("ask_user_name", {"greeting": "Welcome"}))
        result = session.run_agent(script.agent(pydantic_ai_toolset(session)).run("greet me"))
    finally:
        person.join(HANG_GUARD)
        session.close()
    assert result.output == "done"
    assert script.returns[0].content == "Welcome, Ada! Nice to meet you."
    assert shown, "the dialog was not shown under the cell"


def test_a_groups_run_calls_its_members_tools() -> None:
    group = Group({"north": demo_server(), "south": demo_server()}, show_progress=False, register=False)
    try:
        script = Script(("north_add", {"a": 1, "b": 2}), ("south_echo", {"text": "from the south"}))
        toolset = pydantic_ai_toolset(group, tools=["north.add", "south.echo"])
        assert group.run_agent(lambda: script.agent(toolset).run("both")).output == "done"
        assert [p.content for p in script.returns] == [{"result": 3.0}, "from the south"]
        assert _tool_calls(group["north"]) == [("add", "pydantic-ai", "ok")]
        assert _tool_calls(group["south"]) == [("echo", "pydantic-ai", "ok")]
    finally:
        group.close()


# --- in a real kernel: the interrupt button ---------------------------------------------------------

AGENT_CELL = (
    "import json, time\n"
    "import mcp_notebook\n"
    "from mcp_notebook.agents import pydantic_ai_toolset\n"
    "from pydantic_ai import Agent\n"
    "from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart\n"
    "from pydantic_ai.models.function import FunctionModel\n"
    f"session = mcp_notebook.connect({DEMO!r}, show_progress=False)\n"
    "said = []\n"
    "def in_flight(progress, total, message):  # the server is counting: the test interrupts now\n"
    "    if not said:\n"
    "        said.append(progress)\n"
    "        print('in flight', flush=True)\n"
    "def script(messages, info):  # the model: one call of slow_count, then done\n"
    "    if len(messages) == 1:\n"
    "        return ModelResponse(parts=[ToolCallPart('slow_count', {'steps': STEPS, 'delay': 0.1})])\n"
    "    return ModelResponse(parts=[TextPart('done')])\n"
    "agent = Agent(FunctionModel(script), toolsets=[pydantic_ai_toolset(session, progress=in_flight)])\n"
)

REPORT = (
    "deadline = time.time() + 60  # a hang guard: the call's entry comes as the call ends\n"
    "while time.time() < deadline and not session.model.history:\n"
    "    time.sleep(0.02)\n"
    "entry = session.model.history[-1]\n"
    "print(json.dumps({'name': entry['name'], 'via': entry['via'], 'outcome': entry['outcome'],\n"
    "                  'cancellations': session.client.stats.cancellations,\n"
    "                  'in_flight': session.client.stats.in_flight}))\n"
    "session.model.history = []\n"
)


@pytest.mark.timeout(300)
def test_an_interrupted_cell_running_the_agent_cancels_the_call_on_the_server(kernel: Kernel) -> None:
    kernel.run_ok(AGENT_CELL + "STEPS = 100  # 10 s\n")
    message_id = kernel.client.execute("session.run_agent(agent.run('count'))\n")
    kernel.wait_for_output(message_id, "in flight")
    reply = kernel.interrupt(message_id)
    assert reply["content"]["ename"] == "KeyboardInterrupt", reply["content"]
    assert reply["content"]["traceback"] == [
        "KeyboardInterrupt: run_agent() interrupted; the request was cancelled"
    ]
    # the call did not run to its end: cancelled, and the server told so
    report = kernel.run_ok(REPORT).json_line()
    assert report == {
        "name": "slow_count",
        "via": "pydantic-ai",
        "outcome": "cancelled",
        "cancellations": 1,
        "in_flight": 0,
    }
    # the kernel and the session go on: the same agent's next run
    done = kernel.run_ok(
        "said.clear()\nSTEPS = 2\nprint(json.dumps([session.run_agent(agent.run('count')).output]))\n"
    )
    assert done.json_line() == ["done"]
    kernel.run_ok("session.close()")
    _assert_clean(kernel.kernel_stderr(), "the kernel's stderr")


@pytest.mark.timeout(300)
def test_an_awaited_run_is_not_stopped_by_an_interrupt_which_is_why(kernel: Kernel) -> None:
    """The characterization behind ``run_agent``: interrupting a cell that awaits the run
    (ipykernel issue #881) does not stop the server's call, which runs to its end."""
    kernel.run_ok(AGENT_CELL + "STEPS = 20  # 2 s\n")
    message_id = kernel.client.execute("await agent.run('count')\n")
    kernel.wait_for_output(message_id, "in flight")
    reply = kernel.interrupt(message_id)
    assert reply["content"]["status"] == "error"
    report = kernel.run_ok(REPORT).json_line()
    assert (report["name"], report["outcome"], report["cancellations"]) == ("slow_count", "ok", 0)
    kernel.run_ok("session.close()")
