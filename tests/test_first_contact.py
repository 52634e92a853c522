"""What a newcomer meets first, said plainly by the core (issue #29, item 10).

- A server that declares no resources or prompts: the core's list methods answer ``[]`` instead of
  passing on "method not found"; a server that declared the list and fails still raises.
- A URL typed inside a list, as if it were a command, is named as a URL.
- A server that prints its usage and exits: the error quotes its last stdout and stderr lines,
  escaped, with the env values we gave it masked.
"""

from __future__ import annotations

import textwrap

import pytest

from mcp_notebook.client import Client

from .conftest import PYTHON, python_server
from .raises import raises_mcp

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaked_processes")]

SECRET = "s3cret-token-value"


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_lists_a_server_does_not_offer_are_empty(protocol: str) -> None:
    async with Client(python_server("tools_only_server.py"), protocol=protocol) as client:
        assert set(client.server_capabilities) == {"tools"}
        assert [tool.name for tool in await client.list_tools()] == ["add"]
        assert await client.list_resources() == []
        assert await client.list_resource_templates() == []
        assert await client.list_prompts() == []
        assert await client.list_prompts(refresh=True) == []


async def test_a_declared_list_that_fails_still_raises() -> None:
    async with Client(python_server("tools_only_server.py", "--broken-prompts"), protocol="legacy") as client:
        assert "prompts" in client.server_capabilities
        with raises_mcp("server"):
            await client.list_prompts()
        assert await client.list_resources() == []


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/mcp", "HTTPS://example.invalid/mcp"])
def test_a_url_inside_a_list_is_named_as_a_url(url: str) -> None:
    expected = "is a server URL, not a command: pass the URL as a string"
    with pytest.raises(ValueError, match=expected) as caught:
        Client([url])
    assert "not found" not in str(caught.value)
    assert repr(url) in str(caught.value)


#: Prints its usage on stdout (with the token it was given, and a terminal escape) and exits 0.
USAGE_EXIT_0 = textwrap.dedent(
    """
    import os, sys
    print("usage: my-server [--db PATH]")
    print("  token in use: " + os.environ["TOKEN"])
    print("\\x1b]0;owned\\x07 the title")
    sys.exit(0)
    """
)
#: argparse's way: a usage line on stdout from the program, its error on stderr, exit 2.
USAGE_EXIT_2 = textwrap.dedent(
    """
    import os, sys
    print("my-server 1.2: run with --db PATH")
    sys.stderr.write("usage: my-server [-h] --db DB\\n")
    sys.stderr.write("my-server: error: --db is required (token " + os.environ["TOKEN"] + ")\\n")
    sys.exit(2)
    """
)


async def test_a_server_that_prints_usage_and_exits_0_is_quoted() -> None:
    with raises_mcp("transport") as caught:
        async with Client([PYTHON, "-c", USAGE_EXIT_0], env={"TOKEN": SECRET}, protocol="legacy"):
            pass
    message = caught.value.message
    assert "exited with code 0" in message, message
    assert "its last stdout lines:\n  usage: my-server [--db PATH]\n" in message, message
    assert "token in use: ***" in message, message
    assert "\\x1b]0;owned\\x07 the title" in message, message  # escaped, never raw
    assert SECRET not in message
    assert "\x1b" not in message


async def test_a_server_that_exits_2_quotes_stdout_and_stderr() -> None:
    with raises_mcp("transport") as caught:
        async with Client([PYTHON, "-c", USAGE_EXIT_2], env={"TOKEN": SECRET}, protocol="legacy"):
            pass
    message = caught.value.message
    assert "exited with code 2" in message, message
    assert "its last stdout lines:\n  my-server 1.2: run with --db PATH" in message, message
    assert "its last stderr lines:\n  usage: my-server [-h] --db DB\n" in message, message
    assert "--db is required (token ***)" in message, message
    assert SECRET not in message


async def test_quoted_lines_are_bounded() -> None:
    script = "[print(f'line {i}') for i in range(50)]; print('x' * 100000)"
    with raises_mcp("transport") as caught:
        async with Client([PYTHON, "-c", script], protocol="legacy"):
            pass
    message = caught.value.message
    assert "line 49" in message, message
    assert "line 45" not in message, message
    assert "x" * 500 + "..." in message
    assert len(message) < 2000, len(message)


def test_the_notebook_layer_says_the_same() -> None:
    import mcp_notebook

    with raises_mcp("transport") as caught:
        mcp_notebook.connect([PYTHON, "-c", USAGE_EXIT_0], env={"TOKEN": SECRET}, show_progress=False)
    assert "its last stdout lines:\n  usage: my-server [--db PATH]" in str(caught.value)
    assert SECRET not in str(caught.value)
    with mcp_notebook.connect(python_server("tools_only_server.py"), show_progress=False) as session:
        assert session.client.server_capabilities.keys() == {"tools"}
        assert session.model.resources == []
        assert session.model.prompts == []
