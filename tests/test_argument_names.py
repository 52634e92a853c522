"""Names checked before sending, with suggestions (issue #29, item 5).

Against real servers: the demo (Python SDK, whose schemas let extra keys pass) and a fastmcp server
(tests/servers/names_server.py, whose schemas forbid them). An unknown argument is refused with the
closest parameter where the schema forbids extras or the call is wrong anyway, and warned about
where the schema lets it pass; an unknown tool is refused before sending when the tool list is
known. The core, the notebook Session and ``%mcp call`` say it in the same words
(:func:`~mcp_notebook.client._arguments.unknown_arguments` / ``unknown_tool``).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import pytest

from mcp_notebook import Client, McpError
from mcp_notebook.client._arguments import unknown_arguments, unknown_tool
from mcp_notebook.protocol._errors import INVALID_PARAMS

from .conftest import demo_server, python_server

NAMES = python_server("names_server.py")


def test_the_words_are_one_function() -> None:
    assert unknown_arguments("add", ["bb"], ["a", "b"]) == (
        "tool 'add' has no argument 'bb'; did you mean 'b'? (arguments: a, b)"
    )
    assert (
        unknown_arguments("add", ["x", "y"], ["a", "b"])
        == "tool 'add' has no arguments 'x', 'y' (arguments: a, b)"
    )
    assert unknown_arguments("t", ["regoin", "limt"], ["region", "limit"]) == (
        "tool 't' has no arguments 'regoin', 'limt'; did you mean 'region' for 'regoin', 'limit' for 'limt'? "
        "(arguments: limit, region)"
    )
    assert unknown_arguments("now", ["x"], []) == "tool 'now' takes no arguments, got 'x'"
    assert unknown_tool("sales_record", ["add", "sales_records"], "demo") == (
        "no tool 'sales_record' on 'demo'; did you mean 'sales_records'? (tools: add, sales_records)"
    )


@pytest.mark.anyio
@pytest.mark.usefixtures("no_leaked_processes")
async def test_the_core_names_wrong_names_on_the_sdk_demo(anyio_backend: str) -> None:
    async with Client(demo_server(), timeout=20) as client:
        # required ones missing and unknown ones given: both said, the unknown ones first
        with pytest.raises(McpError) as caught:
            await client.call_tool("add", {"x": 1, "y": 2})
        assert caught.value.kind == "invalid"
        assert caught.value.code == INVALID_PARAMS
        message = caught.value.message
        assert message.startswith("tool 'add' has no arguments 'x', 'y' (arguments: a, b)"), message
        assert "'a' is a required property" in message
        assert "nothing was sent" in message
        # a misspelt optional argument: the schema lets it pass, so it is sent, with a warning
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            result = await client.call_tool("sales_records", {"regoin": "north", "limit": 2})
        assert len(result.structured_content["result"]) == 2  # sent: the server ignored the key
        (warning,) = [w for w in seen if "regoin" in str(w.message)]
        assert issubclass(warning.category, UserWarning)
        assert str(warning.message).startswith(
            "tool 'sales_records' has no argument 'regoin'; did you mean 'region'? (arguments: limit, region)"
        )
        # good names: no warning at all
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            await client.call_tool("add", {"a": 1, "b": 2})
        assert not seen, [str(w.message) for w in seen]
        # an unknown tool: refused before sending, with the closest names
        with pytest.raises(McpError) as caught:
            await client.call_tool("sales_record", {})
        assert caught.value.kind == "invalid"
        assert caught.value.message.startswith(
            "no tool 'sales_record'; did you mean 'sales_records'? (tools: "
        )
        assert "nothing was sent" in caught.value.message
        # validate=False still sends it as it is: the server's own answer comes back
        result = await client.call_tool("sales_record", {}, validate=False)
        assert result.is_error


@pytest.mark.anyio
@pytest.mark.usefixtures("no_leaked_processes")
async def test_an_unknown_tool_is_refused_on_the_first_call_too(anyio_backend: str) -> None:
    """No list cached yet: the call fetches it (as it does to validate) and refuses from it."""
    async with Client(demo_server(), timeout=20) as client:
        with pytest.raises(McpError) as caught:
            await client.call_tool("ad", {"a": 1, "b": 2})
        assert "did you mean 'add" in caught.value.message


@pytest.mark.anyio
@pytest.mark.usefixtures("no_leaked_processes")
async def test_the_core_refuses_an_unknown_name_a_fastmcp_schema_forbids(anyio_backend: str) -> None:
    async with Client(NAMES, timeout=20) as client:
        tool = {t.name: t for t in await client.list_tools()}["lookup"]
        assert tool.input_schema.get("additionalProperties") is False
        with pytest.raises(McpError) as caught:
            await client.call_tool("lookup", {"city": "Oslo", "unitz": "si"})
        assert caught.value.message == (
            "tool 'lookup' has no argument 'unitz'; did you mean 'units'? (arguments: city, units); "
            "nothing was sent (pass validate=False to send anyway)"
        )
        result = await client.call_tool("lookup", {"city": "Oslo", "units": "si"})
        assert result.text == "Oslo in si"


@pytest.fixture
def session() -> Iterator[object]:
    import mcp_notebook

    opened = mcp_notebook.connect(demo_server(), show_progress=False)
    try:
        yield opened
    finally:
        opened.close()


@pytest.mark.usefixtures("no_leaked_processes")
def test_the_notebook_session_says_the_same(session: object) -> None:
    with pytest.raises(McpError) as caught:
        session.call_tool("add", {"x": 1, "y": 2})  # type: ignore[attr-defined]
    assert "tool 'add' has no arguments 'x', 'y' (arguments: a, b)" in caught.value.message
    with pytest.raises(McpError) as caught:
        session.call_tool("sales_record")  # type: ignore[attr-defined]
    assert "did you mean 'sales_records'?" in caught.value.message
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        session.call_tool("sales_records", {"limit": 1, "regoin": "north"})  # type: ignore[attr-defined]
    assert any("did you mean 'region'?" in str(w.message) for w in seen), [str(w.message) for w in seen]


@pytest.mark.usefixtures("no_leaked_processes")
def test_the_magics_say_it_in_the_same_words(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("IPython")
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "mcp_notebook")
    shell.run_line_magic("mcp", "connect names -- " + " ".join(NAMES))
    try:
        capsys.readouterr()
        result = shell.run_cell("%mcp call lookup city=Oslo unitz=si", store_history=False)
        assert not result.success
        out, err = capsys.readouterr()
        expected = unknown_arguments("lookup", ["unitz"], ["city", "units"])
        assert f"mcp call: {expected}" in out + err
    finally:
        shell.run_line_magic("mcp", "disconnect names")


@pytest.mark.anyio
@pytest.mark.usefixtures("no_leaked_processes")
async def test_a_tool_added_a_moment_ago_is_asked_for_not_refused(anyio_backend: str) -> None:
    """A fresh list without the name is fetched once more before the name is refused."""
    async with Client(demo_server(), timeout=20) as client:
        for attempt in range(5):
            await client.list_tools()  # cached and fresh
            added = f"shout{attempt}"
            await client.call_tool("add_tool", {"name": added})
            result = await client.call_tool(added, {"text": "hi"})
            assert not result.is_error, result.text


@pytest.mark.anyio
@pytest.mark.usefixtures("no_leaked_processes")
async def test_a_tool_the_cached_list_lacks_is_asked_for_before_refusing(anyio_backend: str) -> None:
    """The fastmcp server adds a tool without telling the client: the cached list, fresh as far
    as the client knows, lacks it, and the call asks for the list again before refusing."""
    async with Client(NAMES, timeout=20) as client:
        await client.list_tools()
        assert (await client.call_tool("grow", {"name": "quiet"})).text == "added quiet"
        assert client.cached_tools is not None
        assert "quiet" not in {tool.name for tool in client.cached_tools}  # nobody said
        assert (await client.call_tool("quiet", {"text": "hi"})).text == "hi"
