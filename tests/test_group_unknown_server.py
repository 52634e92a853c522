"""A group's ``SERVER.TOOL`` with a server the group has not names that server (issue #37).

It used to say "no tool 'nosuch.add'" and list a dozen tools alphabetically, all of another
server, which hid the mistake; it now names the server and the group's servers, as ``%mcp call``
does. Resolving a name needs no connection, so the servers are never started.
"""

from __future__ import annotations

from mcp_notebook.client._client_group import ClientGroup

from .conftest import demo_server
from .raises import raises_mcp

NOSUCH = r"^no server named 'nosuch' \(for 'nosuch\.add'\) \(servers: demo, sales\)$"
DMEO = r"no server named 'dmeo' \(for 'dmeo\.add'\); did you mean 'demo'\?"


def test_an_unknown_server_is_named_with_the_groups_servers() -> None:
    group = ClientGroup({"demo": demo_server(), "sales": demo_server()})
    with raises_mcp("invalid", match=NOSUCH):
        group.resolve("nosuch.add")
    with raises_mcp("invalid", match=DMEO) as info:
        group.resolve("dmeo.add")
    assert "tools:" not in str(info.value)
    with raises_mcp("invalid", match="no tool 'nope' .*name tools SERVER.TOOL"):
        group.resolve("nope")  # a bare name stays a tool name
