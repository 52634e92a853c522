"""One deadline and one bound for a whole list (issue #35, item 6), against a real stdio server.

``tests/servers/list_bounds_server.py`` pages without end (``--forever``), slowly or with many
items a page. ``list_tools(timeout=...)`` and the other lists must end by one deadline for all
pages, or at ``max_list_items`` items, with an McpError saying which; the pages read are neither
returned nor cached as if they were the whole list.
"""

from __future__ import annotations

import anyio
import pytest

from mcp_notebook import Client
from tests.conftest import python_server
from tests.raises import raises_mcp

pytestmark = pytest.mark.anyio

#: Only stops a hang: the walk under test ends far sooner (its own deadline, or its item bound).
HANG_GUARD = 120
LISTS = ["list_tools", "list_resources", "list_resource_templates", "list_prompts"]


def server(*args: str) -> list[str]:
    return python_server("list_bounds_server.py", *args)


@pytest.mark.parametrize("listing", LISTS)
async def test_pages_without_end_meet_one_deadline(listing, no_leaked_processes):
    # 50 ms a page, forever: with a timeout per page the walk went on (1,000 pages, 50 s here).
    async with Client(server("--forever", "--page", "2", "--delay", "0.05"), timeout=30) as client:
        whole_list = r"deadline of 1s for the whole list passed after \d+ page"
        with anyio.fail_after(HANG_GUARD), raises_mcp("timeout", match=whole_list) as info:
            await getattr(client, listing)(timeout=1)
        assert "incomplete" in info.value.message
        assert info.value.data["pages"] >= 1
        kind = listing.removeprefix("list_")
        assert client.freshness(kind).fetched_at is None  # nothing cached as the list
        assert getattr(client, f"cached_{kind}") is None


async def test_many_items_a_page_meet_the_item_bound(no_leaked_processes):
    # 500 tools a page, forever: the walk kept every page until memory ran out.
    async with Client(server("--forever", "--page", "500"), max_list_items=2_000) as client:
        with anyio.fail_after(HANG_GUARD), raises_mcp("protocol", match=r"more than 2,000 items") as info:
            await client.list_tools()
        assert "refused, not cut short" in info.value.message
        assert client.cached_tools is None
        with anyio.fail_after(HANG_GUARD), raises_mcp("protocol", match="max_list_items"):
            await client.list_prompts()


async def test_a_list_within_both_bounds_is_whole(no_leaked_processes):
    # 2,000 items in pages of 300: exactly the bound, every page, in order.
    async with Client(server("--items", "2000", "--page", "300"), max_list_items=2_000) as client:
        with anyio.fail_after(HANG_GUARD):
            tools = await client.list_tools(timeout=30)
        assert [t.name for t in tools] == [f"tool_{i}" for i in range(2000)]
        assert client.cached_tools is not None
        assert len(client.cached_tools) == 2000


def test_max_list_items_is_validated_like_the_other_options():
    with pytest.raises(ValueError, match="max_list_items"):
        Client(server(), max_list_items=0)
    with pytest.raises(TypeError, match="max_list_items"):
        Client(server(), max_list_items=1.5)


@pytest.mark.timeout(HANG_GUARD)  # only stops a hang: four lists of pages without end took 200 s
def test_a_notebook_session_lists_through_the_same_bounds(no_leaked_processes):
    import mcp_notebook

    forever = server("--forever", "--page", "2", "--delay", "0.05")
    session = mcp_notebook.connect(forever, timeout=1, show_progress=False)
    try:
        # The lists fetched when the session opened ended by the deadline: none shown as whole.
        assert session.model.tools == []
        assert session.client.cached_tools is None
        with raises_mcp("timeout", match="for the whole list passed"):
            session.list_tools()
        with raises_mcp("timeout", match="for the whole list passed"):
            session.list_prompts()
    finally:
        session.close()
