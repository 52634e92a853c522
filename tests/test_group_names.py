"""Group tool names are unambiguous (issue #35, item 11), with two real stdio servers.

Server ``a`` lists a tool ``b.c`` and server ``a.b`` a tool ``c``: with the separator ``.`` both
listed as ``a.b.c``, and ``a``'s tool could be called by no listed name. Such a group is refused
when it forms, naming both servers and a separator that works; with that separator every listed
name calls the tool it lists.
"""

from __future__ import annotations

import anyio
import pytest

from mcp_notebook import ClientGroup
from tests.conftest import python_server
from tests.raises import raises_mcp

pytestmark = pytest.mark.anyio

HANG_GUARD = 120


def servers() -> dict[str, list[str]]:
    """``a`` with the tool ``b.c``, ``a.b`` with the tool ``c`` (each also lists ``fail``); a call
    answers ``<server>:<tool>``, so the test sees which server ran it."""
    return {
        "a": python_server("list_bounds_server.py", "--tools", "b.c", "--label", "a"),
        "a.b": python_server("list_bounds_server.py", "--tools", "c", "--label", "a.b"),
    }


def test_nested_server_names_are_refused_naming_both():
    with pytest.raises(ValueError, match=r"servers 'a' and 'a\.b' cannot share a group") as info:
        ClientGroup(servers())
    message = str(info.value)
    assert "a.b.TOOL would name both" in message
    assert "separator='/'" in message  # what to do instead


def test_names_that_meet_through_a_longer_separator_are_refused():
    # "a"'s tool "_t" and "a_"'s tool "t" would both list as "a___t".
    with pytest.raises(ValueError, match=r"servers 'a' and 'a_' cannot share a group with separator '__'"):
        ClientGroup({"a": "cmd-a", "a_": "cmd-b"}, separator="__")
    ClientGroup({"a": "cmd-a", "a_": "cmd-b"}, separator=".")  # with "." they never meet


def test_the_notebook_group_is_refused_too(no_leaked_processes):
    from mcp_notebook.notebook import Group

    with pytest.raises(ValueError, match=r"servers 'a' and 'a\.b'"):
        Group(servers(), register=False, show_progress=False)


async def test_every_listed_name_calls_the_tool_it_lists(no_leaked_processes):
    async with ClientGroup(servers(), separator="/", timeout=30) as group:
        with anyio.fail_after(HANG_GUARD):
            listed = [tool.name for tool in await group.list_tools()]
            assert sorted(listed) == ["a.b/c", "a.b/fail", "a/b.c", "a/fail"]
            assert len(set(listed)) == len(listed)
            for name in ("a/b.c", "a.b/c"):
                server, _, tool = name.partition("/")
                assert (await group.call_tool(name, {})).text == f"{server}:{tool}"


def many_tools() -> dict[str, list[str]]:
    """Two servers with more tools than an error lists (a dozen), so a list of tools would be cut."""
    return {
        "sales": python_server("list_bounds_server.py", "--items", "20", "--label", "sales"),
        "weather": python_server("list_bounds_server.py", "--items", "20", "--label", "weather"),
    }


async def test_an_unknown_server_in_server_tool_is_named_with_the_servers(no_leaked_processes):
    """#37, item 4: ``SERVER.TOOL`` whose SERVER is not in the group says so and lists the
    servers, instead of listing the tools alphabetically, cut after a dozen."""
    async with ClientGroup(many_tools(), timeout=30) as group:
        with anyio.fail_after(HANG_GUARD):
            assert len(await group.list_tools()) == 40
            with raises_mcp("invalid") as caught:
                await group.call_tool("wether.tool_1", {})
    message = caught.value.message
    assert message.startswith("no server named 'wether' in this group (for 'wether.tool_1')"), message
    assert "did you mean 'weather'?" in message
    assert "(servers: sales, weather)" in message
    assert "tools:" not in message


def test_the_notebook_group_names_the_unknown_server_too(no_leaked_processes):
    from mcp_notebook.notebook import Group

    group = Group(many_tools(), register=False, show_progress=False, timeout=30)
    try:
        with raises_mcp(
            "invalid", match=r"no server named 'sale' in this group .*\(servers: sales, weather\)"
        ):
            group.call_tool("sale.tool_1", {})
    finally:
        group.close()
