"""Human in the loop: elicitation, URL consent and sampling dialogs, answered by clicking.

The demo server (a subprocess, both protocol eras: legacy JSON-RPC requests and modern
``input_required`` reach the same handler) asks through ``ask_user_name`` and ``summarize``; an
in-process legacy SDK server asks for URL consent. A test thread plays the user: it finds the dialog
(``dialogs.open_dialogs``), fills it in and clicks, while the test's thread waits in the call.

Inside a real kernel (jupyter_client, no browser) a cell blocked in ``session.call_tool`` gets its
answer through comm messages, as a browser would send them; the wait loop that makes that possible
is also tested alone with a simulated kernel.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import pytest

pytest.importorskip("ipywidgets")

import ipywidgets as W
from mcp.server.mcpserver import Context, MCPServer

import mcp_notebook
from mcp_notebook import McpError
from mcp_notebook.notebook import Session, _uipoll
from mcp_notebook.widgets._dialogs import Dialog, NotebookDialogs, RootsList, RootsWidget

from .conftest import demo_server
from .panel_comms import PanelsOverComms
from .test_kernel import Kernel
from .test_kernel import kernel as kernel  # the real-kernel fixture
from .widget_helpers import HOSTILE
from .widget_helpers import assert_escaped as _assert_escaped
from .widget_helpers import markup as _markup
from .widget_helpers import wait_for as _wait_for

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

DEMO = demo_server()


def _controls(widget: Any) -> list[Any]:
    found = [widget] if hasattr(widget, "disabled") else []
    for child in getattr(widget, "children", ()):
        found.extend(_controls(child))
    return found


class User:
    """A thread that answers the next dialog with ``act(dialog)``."""

    def __init__(self, dialogs: NotebookDialogs, act: Callable[[Dialog], Any]) -> None:
        self.dialogs = dialogs
        self.act = act
        self.seen: list[Dialog] = []
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            _wait_for(lambda: self.dialogs.open_dialogs, 15, "a dialog to open")
            dialog = self.dialogs.open_dialogs[0]
            self.seen.append(dialog)
            self.act(dialog)
        except BaseException as exc:
            self.error = exc

    def done(self) -> Dialog:
        self._thread.join(15)
        if self.error is not None:
            raise self.error
        assert self.seen, "no dialog was answered"
        return self.seen[0]


@pytest.fixture
def shown() -> list[Any]:
    return []


@pytest.fixture
def dialogs(shown: list[Any]) -> NotebookDialogs:
    return NotebookDialogs("demo", output=shown.append)


@contextlib.contextmanager
def _demo(dialogs: NotebookDialogs, protocol: str = "auto") -> Iterator[Session]:
    session = mcp_notebook.connect(DEMO, show_progress=False, dialogs=dialogs, protocol=protocol)
    try:
        yield session
    finally:
        session.close()


def _fill_and_accept(name: str) -> Callable[[Dialog], None]:
    def act(dialog: Dialog) -> None:
        dialog.form.set_value({"name": name})  # type: ignore[attr-defined]
        dialog.accept_button.click()  # type: ignore[attr-defined]

    return act


# --- elicitation: form --------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_elicitation_accept_sends_the_form(dialogs: NotebookDialogs, shown: list[Any], protocol: str) -> None:
    with _demo(dialogs, protocol) as session:
        assert session.model.era == ("modern" if protocol == "auto" else "legacy")
        assert session.dialogs is dialogs

        def act(dialog: Dialog) -> None:
            assert dialog.kind == "elicitation"
            dialog.accept_button.click()  # type: ignore[attr-defined]  # empty required name: refused
            assert not dialog.answered
            assert "name" in dialog.problems.value
            _fill_and_accept("Ada")(dialog)

        user = User(dialogs, act)
        result = session.call_tool("ask_user_name", {"greeting": "Hi"})
        dialog = user.done()
    assert result.text == "Hi, Ada! Nice to meet you."
    assert shown == [dialog.widget]
    assert {"mcpnb-dialog", "mcpnb-elicitation"} <= set(dialog.widget._dom_classes)
    assert "Hi! What is your name?" in _markup(dialog.widget)
    assert dialog.result == {"action": "accept", "content": {"name": "Ada"}}
    assert "Accepted" in dialog.answer.value
    assert "Ada" in dialog.answer.value
    assert all(control.disabled for control in _controls(dialog.buttons))
    assert all(control.disabled for control in _controls(dialog.body) if isinstance(control, W.Text))
    assert dialogs.open_dialogs == []
    assert _uipoll.dialogs_open() == 0


@pytest.mark.parametrize(
    ("button", "answer"),
    [("decline_button", "you don't have to tell me your name"), ("cancel_button", "cancelled")],
)
def test_elicitation_decline_and_cancel(dialogs: NotebookDialogs, button: str, answer: str) -> None:
    with _demo(dialogs) as session:
        user = User(dialogs, lambda dialog: getattr(dialog, button).click())
        result = session.call_tool("ask_user_name")
        dialog = user.done()
    assert answer in result.text
    assert dialog.result == {"action": "decline" if button == "decline_button" else "cancel"}
    assert "mcpnb-decline" in dialog.decline_button._dom_classes  # type: ignore[attr-defined]
    assert "mcpnb-cancel-dialog" in dialog.cancel_button._dom_classes  # type: ignore[attr-defined]


def test_elicitation_from_an_async_call(dialogs: NotebookDialogs) -> None:
    with _demo(dialogs) as session:
        user = User(dialogs, _fill_and_accept("Grace"))
        result = asyncio.run(session.acall_tool("ask_user_name"))
        user.done()
    assert "Grace" in result.text


def _run_handler(handler: Callable[[dict[str, Any]], Any], params: dict[str, Any], **kw: Any) -> Any:
    """Run an async handler on its own event loop, in this thread."""

    async def main() -> Any:
        if "timeout" in kw:
            with anyio.fail_after(kw["timeout"]):
                return await handler(params)
        return await handler(params)

    return anyio.run(main)


def test_elicitation_dialog_escapes_the_server_and_prefills_defaults(dialogs: NotebookDialogs) -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": HOSTILE, "description": HOSTILE, "default": "Lin"},
            "age": {"type": "integer", "default": 7},
        },
        "required": ["name"],
    }
    params = {"message": f"Who are you? {HOSTILE}", "requestedSchema": schema}
    user = User(dialogs, lambda dialog: dialog.accept_button.click())  # type: ignore[attr-defined]
    dialogs.session_name = f"server {HOSTILE}"
    result = _run_handler(dialogs.elicit, params)
    dialog = user.done()
    assert result == {"action": "accept", "content": {"name": "Lin", "age": 7}}
    markup = _markup(dialog.widget)
    _assert_escaped(markup)
    assert "Who are you? &lt;img src=x" in markup
    assert "server &lt;img" in markup


def test_a_dialog_the_server_stops_waiting_for_says_so(dialogs: NotebookDialogs) -> None:
    params = {"message": "hello?", "requestedSchema": {"type": "object", "properties": {}}}
    with pytest.raises(TimeoutError):
        _run_handler(dialogs.elicit, params, timeout=0.3)
    (dialog,) = dialogs.history
    assert dialog.answered
    assert "stopped waiting" in dialog.answer.value
    assert all(control.disabled for control in _controls(dialog.buttons))
    assert dialogs.open_dialogs == []
    assert _uipoll.dialogs_open() == 0


def test_on_open_callbacks_see_each_dialog(dialogs: NotebookDialogs) -> None:
    opened: list[Dialog] = []

    def answer(dialog: Dialog) -> None:
        opened.append(dialog)
        dialog.decline_button.click()  # type: ignore[attr-defined]  # clicked on the engine thread

    undo = dialogs.on_open(answer)
    with _demo(dialogs) as session:
        assert "you don't have to" in session.call_tool("ask_user_name").text
        undo()
        user = User(dialogs, lambda dialog: dialog.cancel_button.click())  # type: ignore[attr-defined]
        assert "cancelled" in session.call_tool("ask_user_name").text
        user.done()
    assert len(opened) == 1


# --- elicitation: URL ---------------------------------------------------------------------------


def _url_server() -> Any:
    server = MCPServer("url asker")

    @server.tool()
    async def open_page(ctx: Context, url: str) -> str:
        answer = await ctx.elicit_url(f"Please sign in {HOSTILE}", url, "sign-in-1")
        return f"action={answer.action}"

    return server


@pytest.fixture
def url_session(dialogs: NotebookDialogs) -> Iterator[Session]:
    # The SDK's in-process server can ask for URL consent in the legacy era only.
    session = mcp_notebook.connect(_url_server(), protocol="legacy", show_progress=False, dialogs=dialogs)
    try:
        yield session
    finally:
        session.close()


def test_url_consent_shows_the_full_domain_and_opens_nothing_by_itself(
    dialogs: NotebookDialogs, url_session: Session
) -> None:
    url = "https://accounts.example.com.evil.test/login?next=/home&x=1"
    before: dict[str, str] = {}

    def act(dialog: Dialog) -> None:
        before["markup"] = _markup(dialog.widget)
        dialog.open_button.click()  # type: ignore[attr-defined]

    user = User(dialogs, act)
    result = url_session.call_tool("open_page", {"url": url})
    dialog = user.done()
    assert result.text == "action=accept"
    assert dialog.kind == "url"
    assert "mcpnb-url-consent" in dialog.widget._dom_classes
    assert "mcpnb-open" in dialog.open_button._dom_classes  # type: ignore[attr-defined]
    assert "mcpnb-refuse" in dialog.refuse_button._dom_classes  # type: ignore[attr-defined]
    markup = before["markup"]
    assert (
        'https://<b class="mcpnb-url-host" style="font-size:1.1em">accounts.example.com.evil.test</b>'
        in markup
    )
    assert "/login?next=/home&amp;x=1" in markup
    assert "<a " not in markup  # no link before consent
    _assert_escaped(markup)
    assert "Please sign in &lt;img" in markup
    assert "sign-in-1" in markup
    link = dialog.answer.value
    escaped = url.replace("&", "&amp;")
    assert f'<a href="{escaped}" target="_blank" rel="noopener noreferrer"' in link


def test_url_consent_link_after_open_and_refuse(dialogs: NotebookDialogs, url_session: Session) -> None:
    url = "https://login.example.org/start?id=42"
    user = User(dialogs, lambda dialog: dialog.open_button.click())  # type: ignore[attr-defined]
    assert url_session.call_tool("open_page", {"url": url}).text == "action=accept"
    assert '<a href="https://login.example.org/start?id=42" target="_blank"' in user.done().answer.value

    user = User(dialogs, lambda dialog: dialog.refuse_button.click())  # type: ignore[attr-defined]
    assert url_session.call_tool("open_page", {"url": url}).text == "action=decline"
    assert "<a " not in user.done().answer.value


@pytest.mark.parametrize(
    "url",
    ["http://plain.example.com/", "javascript:alert(1)", "https://a b.example/", 'https://x.example/"><b>'],
)
def test_url_consent_never_links_unsafe_addresses(dialogs: NotebookDialogs, url: str) -> None:
    def act(dialog: Dialog) -> None:
        assert dialog.open_button.disabled  # type: ignore[attr-defined]
        dialog.refuse_button.click()  # type: ignore[attr-defined]

    user = User(dialogs, act)
    result = _run_handler(dialogs.elicit, {"mode": "url", "url": url, "message": "go", "elicitationId": "1"})
    dialog = user.done()
    assert result == {"action": "decline"}
    assert "href" not in _markup(dialog.widget)


# --- sampling -----------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_sampling_reply_written_by_the_user_reaches_the_tool(dialogs: NotebookDialogs, protocol: str) -> None:
    seen: dict[str, str] = {}

    def act(dialog: Dialog) -> None:
        seen["markup"] = _markup(dialog.widget)
        dialog.reply.value = "A short summary."  # type: ignore[attr-defined]
        dialog.send_button.click()  # type: ignore[attr-defined]

    with _demo(dialogs, protocol) as session:
        user = User(dialogs, act)
        result = session.call_tool("summarize", {"text": f"Some long text {HOSTILE}", "max_words": 5})
        dialog = user.done()
    assert result.text == "A short summary."
    assert "mcpnb-sampling" in dialog.widget._dom_classes
    assert "mcpnb-sampling-reply" in dialog.reply._dom_classes  # type: ignore[attr-defined]
    assert "mcpnb-sampling-send" in dialog.send_button._dom_classes  # type: ignore[attr-defined]
    assert "mcpnb-sampling-reject" in dialog.reject_button._dom_classes  # type: ignore[attr-defined]
    markup = seen["markup"]
    assert "Summarize the following text in at most 5 words" in markup
    assert "You are a concise assistant" in markup
    assert "maxTokens 64" in markup
    assert "user" in markup
    _assert_escaped(markup)
    assert dialog.result is not None
    assert dialog.result["model"] == "notebook-user"


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_sampling_reject_gives_the_server_an_error(dialogs: NotebookDialogs, protocol: str) -> None:
    with _demo(dialogs, protocol) as session:
        user = User(dialogs, lambda dialog: dialog.reject_button.click())  # type: ignore[attr-defined]
        with pytest.raises(McpError, match="rejected") as caught:
            session.call_tool("summarize", {"text": "x"})
        dialog = user.done()
    # Legacy: the server got the JSON-RPC error (code -1) and failed the call with it. Modern
    # input_required has no error channel back to the server: the caller gets the error.
    assert caught.value.kind == ("server" if protocol == "legacy" else "cancelled")
    assert dialog.error is not None
    assert dialog.error.code == -1
    assert "Rejected" in dialog.answer.value


def test_a_sampler_drafts_the_reply_or_answers_alone(dialogs: NotebookDialogs) -> None:
    def draft(params: dict[str, Any]) -> str:
        return f"draft for {len(params['messages'])} message(s)"

    dialogs.sampler = draft
    with _demo(dialogs) as session:
        drafted: dict[str, str] = {}

        def act(dialog: Dialog) -> None:
            drafted["text"] = dialog.reply.value  # type: ignore[attr-defined]
            dialog.send_button.click()  # type: ignore[attr-defined]

        user = User(dialogs, act)
        assert session.call_tool("summarize", {"text": "x"}).text == "draft for 1 message(s)"
        assert user.done().result["model"] == "draft"  # type: ignore[index]
        assert drafted["text"] == "draft for 1 message(s)"

        async def model(params: dict[str, Any]) -> dict[str, Any]:
            return {"role": "assistant", "content": {"type": "text", "text": "auto"}, "model": "m1"}

        dialogs.sampler = model
        dialogs.auto_sample = True
        shown_before = len(dialogs.history)
        assert session.call_tool("summarize", {"text": "x"}).text == "auto"
        assert len(dialogs.history) == shown_before  # no dialog


# --- installing the dialogs ---------------------------------------------------------------------


def _declared(session: Session) -> dict[str, Any]:
    """What the handlers make the client declare (the tasks and ui extensions are declared always)."""
    era = session.client.era or "legacy"
    caps = session.client.connection._handlers.capabilities(era)
    always = {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
    if era == "modern":
        always["io.modelcontextprotocol/tasks"] = {}
    assert caps["extensions"] == always
    return {key: value for key, value in caps.items() if key != "extensions"}


def test_outside_a_kernel_no_dialogs_are_installed() -> None:
    with mcp_notebook.connect(DEMO, show_progress=False) as session:
        assert session.dialogs is None
        assert _declared(session) == {}
        assert session._ui_call is None


def test_inside_a_kernel_dialogs_are_installed_unless_a_handler_is_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import IPython  # noqa: F401  # a kernel has IPython loaded

    monkeypatch.setattr(_uipoll, "in_kernel", lambda: True)
    with mcp_notebook.connect(DEMO, show_progress=False) as session:
        assert isinstance(session.dialogs, NotebookDialogs)
        assert session.dialogs.session_name == "mcp-notebook-demo"
        assert set(_declared(session)) == {"elicitation", "sampling"}
    with mcp_notebook.connect(DEMO, show_progress=False, dialogs=False) as session:
        assert session.dialogs is None
        assert _declared(session) == {}

    def mine(params: dict[str, Any]) -> dict[str, Any]:
        return {"name": "from my handler"}

    with mcp_notebook.connect(DEMO, show_progress=False, elicitation=mine) as session:
        assert isinstance(session.dialogs, NotebookDialogs)  # for sampling only
        assert "from my handler" in session.call_tool("ask_user_name").text
        assert (
            session.client.connection._handlers._by_method["sampling/createMessage"] == session.dialogs.sample
        )


# --- waiting in a blocked cell ------------------------------------------------------------------


def test_the_wait_loop_polls_ui_events_only_while_a_dialog_is_open(
    dialogs: NotebookDialogs, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A simulated kernel: the "UI events" the poll handles are the user's clicks.

    Without the poll nothing would ever click (the test's thread is the only one, and it waits in
    the call), so the call returning proves the clicks went through the poll.
    """
    polls: list[int] = []

    @contextlib.contextmanager
    def fake_poller() -> Iterator[Callable[[int], None]]:
        def poll(limit: int) -> None:
            polls.append(_uipoll.dialogs_open())
            if dialogs.open_dialogs and len(polls) >= 3:  # a few polls later, the click arrives
                _fill_and_accept("Poll")(dialogs.open_dialogs[0])

        yield poll

    monkeypatch.setattr(_uipoll, "ui_poller", fake_poller)
    with _demo(dialogs) as session:
        engine = session._engine
        quick = engine.portal.start_task_soon(session.client.call_tool, "add", {"a": 1, "b": 2})
        assert _uipoll.wait(quick).structured_content == {"result": 3.0}
        assert polls == []  # no dialog, no polling
        slow = engine.portal.start_task_soon(session.client.call_tool, "ask_user_name")
        began = time.monotonic()
        assert "Poll" in _uipoll.wait(slow).text
        assert time.monotonic() - began < 5
    assert len(polls) >= 3
    assert all(count >= 1 for count in polls)


def test_blocking_calls_wait_through_the_ui_loop_only_on_a_kernels_main_thread(
    dialogs: NotebookDialogs, monkeypatch: pytest.MonkeyPatch
) -> None:
    waited: list[str] = []
    real_wait = _uipoll.wait

    def recording_wait(future: Any) -> Any:
        waited.append(threading.current_thread().name)
        return real_wait(future)

    monkeypatch.setattr(_uipoll, "wait", recording_wait)
    with _demo(dialogs) as session:
        assert session._ui_call is _uipoll.call
        session.call_tool("add", {"a": 1, "b": 1})
        assert waited == []  # not in a kernel: Engine.call
        monkeypatch.setattr(_uipoll, "in_kernel", lambda: True)
        session.call_tool("add", {"a": 1, "b": 1})
        assert waited == [threading.main_thread().name]
        other = threading.Thread(target=lambda: session.call_tool("add", {"a": 1, "b": 1}))
        other.start()
        other.join(10)
        assert len(waited) == 1  # another thread does not block the kernel: it waits plainly


# --- roots --------------------------------------------------------------------------------------


def test_roots_list_is_edited_by_its_widget(tmp_path: Any) -> None:
    roots = RootsList([str(tmp_path)])
    with mcp_notebook.connect(DEMO, show_progress=False, roots=roots) as session:
        assert "roots" in _declared(session)
        widget = session.roots_widget()
        assert isinstance(widget, RootsWidget)
        assert "mcpnb-roots" in widget._dom_classes
        assert tmp_path.as_uri() in widget.listing.value
        widget.uri.value = "file:///srv/shared"
        widget.add_button.click()
        answer = session._engine.call(session.client.connection._handlers.answer, "roots/list", {})
        assert [r["uri"] for r in answer["roots"]] == [tmp_path.as_uri(), "file:///srv/shared"]
        assert "file:///srv/shared" in widget.listing.value
        widget.remove_select.value = tmp_path.as_uri()
        widget.remove_button.click()
        assert [r["uri"] for r in roots.roots] == ["file:///srv/shared"]
        widget.uri.value = ""
        widget.add_button.click()  # an empty path is the current directory: still a valid root
        widget.close()
    with mcp_notebook.connect(DEMO, show_progress=False, roots=[f"file:///x/{HOSTILE}"]) as session:
        widget = session.roots_widget()
        assert not hasattr(widget, "roots") or widget.roots is None
        _assert_escaped(widget.listing.value)
        assert "fixed" in widget.note.value


# --- a real kernel ------------------------------------------------------------------------------


@pytest.mark.parametrize("cell", ["sync", "async"])
def test_a_blocked_cell_gets_its_answer_through_comm_messages(kernel: Kernel, cell: str) -> None:
    """A cell waits in ``session.call_tool``; a "browser" types a name and clicks Accept over comms.

    A second cell queued meanwhile runs after the first, in order (the wait loop handles only the
    widget messages and leaves the rest to the kernel).
    """
    from queue import Empty

    kernel.run_ok(
        "import json\n"
        "import mcp_notebook\n"
        f"session = mcp_notebook.connect({DEMO!r}, show_progress=False)\n"
        "print(json.dumps({'dialogs': session.dialogs is not None}))\n"
    )
    client = kernel.client
    call = (
        "session.call_tool('ask_user_name')"
        if cell == "sync"
        else "await session.acall_tool('ask_user_name')"
    )
    asking = client.execute(f"answer = {call}\nprint(json.dumps({{'text': answer.text}}))\n")
    page = PanelsOverComms(client)
    deadline = time.monotonic() + 30
    accept = field = None
    while time.monotonic() < deadline:
        try:
            message = client.get_iopub_msg(timeout=1)
        except Empty:
            continue
        page.saw(message)
        accept = page.find("ButtonModel", "mcpnb-accept")
        field = page.find("TextModel", "mcpnb-input")
        if accept and field and page.displayed:
            break
    else:
        raise AssertionError("the dialog was not displayed in the running cell")
    assert accept is not None
    assert field is not None
    dialog = page.panel_of("VBoxModel", "mcpnb-elicitation")
    assert dialog in page.displayed, "the dialog was displayed in the cell that is running"

    queued = client.execute("print(json.dumps({'queued': True}))\n")
    time.sleep(0.3)
    page.set(field, value="Ada")
    page.click(accept)
    replies: list[dict[str, Any]] = []
    deadline = time.monotonic() + 30
    while len(replies) < 2 and time.monotonic() < deadline:
        with contextlib.suppress(Empty):
            replies.append(client.get_shell_msg(timeout=1))
    assert [r["parent_header"]["msg_id"] for r in replies] == [asking, queued]
    assert [r["content"]["status"] for r in replies] == ["ok", "ok"]
    printed: dict[str, str] = {}
    deadline = time.monotonic() + 10
    while len(printed) < 2 and time.monotonic() < deadline:
        with contextlib.suppress(Empty):
            message = client.get_iopub_msg(timeout=1)
            if message["msg_type"] == "stream" and message["content"]["name"] == "stdout":
                printed[message["parent_header"]["msg_id"]] = message["content"]["text"]
    assert "Hello, Ada!" in printed.get(asking, ""), printed
    assert '"queued": true' in printed.get(queued, ""), printed
    kernel.run_ok("session.close()\n")
    stderr = kernel.kernel_stderr()
    assert "Traceback" not in stderr, stderr
    assert "Invalid Message" not in stderr, stderr


def test_in_plain_python_the_session_module_does_not_import_widgets() -> None:
    import subprocess

    code = (
        "import sys, mcp_notebook\n"
        f"s = mcp_notebook.connect({DEMO!r}, show_progress=False)\n"
        "print('ipywidgets' in sys.modules, s.dialogs)\n"
        "s.close()\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "False None"
