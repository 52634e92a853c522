"""Mirroring a client into a session's model: state, lists, tasks, log and notifications.

A :class:`Mirror` is told by the client (on the engine thread, synchronously with each change) and
updates the traitlets model widgets and frames read, so a notebook shows what the server does
without anyone asking. It knows the client and the model only, never the session (issue #27).

Log messages and notifications go through ``model.append``, which only adds to a bounded deque
and marks it for publishing (``_model.py``): the notification loop never waits for a widget or an
observer, however many messages a server sends.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..protocol._errors import McpError
from ._session_tasks import task_row

if TYPE_CHECKING:
    from ..client import Client
    from ..client._live import Event
    from ..client._results import Tool
    from ..client._task_handles import TaskHandle
    from ._model import SessionModel

__all__ = ["Mirror"]

logger = logging.getLogger("mcp_notebook.notebook")

_MAX_TASK_ROWS = 1000  # rows in model.tasks, as the client keeps at most 1000 task handles


class Mirror:
    """Keeps ``model`` following ``client``; :meth:`attach` subscribes it to the client's changes."""

    def __init__(self, client: Client, model: SessionModel) -> None:
        self.client = client
        self.model = model

    def attach(self) -> None:
        """Hear the client's state changes, events and task changes (on the engine thread)."""
        self.client.connection.on_state_change(self.on_state)
        self.client.on_event(self.on_event)
        self.client.on_task(self.on_task)

    async def refresh_lists(self) -> None:
        """Fetch the server's lists into the model (on the engine)."""
        capabilities = self.client.server_capabilities
        fetches: list[tuple[str, Callable[[], Awaitable[Sequence[Any]]], str]] = [
            ("tools", self.client.list_tools, "tools"),
            ("resources", self.client.list_resources, "resources"),
            ("resource_templates", self.client.list_resource_templates, "resources"),
            ("prompts", self.client.list_prompts, "prompts"),
        ]
        fetched: dict[str, Any] = {}
        for trait, fetch, capability in fetches:
            if capability in capabilities:
                try:
                    fetched[trait] = list(await fetch())
                except McpError as exc:
                    logger.info("could not list %s: %s", trait, exc)
        # Shown even if a change notice raced the fetch (the cache then re-fetches by itself).
        self.model.update(**fetched)

    def on_state(self, state: str) -> None:
        # Called on the engine thread, synchronously with the transition.
        values: dict[str, Any] = {"status": state, "reconnects": self.client.stats.reconnects}
        reason = self.client.closed_reason or self.client.last_error
        if state == "ready":
            values.update(self.connection_values())
        elif state in ("reconnecting", "closed") and reason is not None and reason.kind != "closed":
            values["last_error"] = reason.message
        self.model.update(**values)

    def connection_values(self) -> dict[str, Any]:
        client = self.client
        # What the status panel shows: a secret the server echoes in its name, version or
        # instructions is masked here (protocol/_secrets); the client keeps them as sent.
        secrets = client.connection.secrets
        return {
            "era": client.era,
            "protocol_version": client.protocol_version,
            "server_info": secrets.mask_value(client.server_info),
            "capabilities": client.server_capabilities,
            "instructions": secrets.mask_value(client.instructions),
        }

    def sync_connection(self) -> None:
        self.model.update(status=self.client.status, **self.connection_values())

    def sync_lists(self) -> None:
        client = self.client
        values = {
            # The model lists what the user (and a model) may call: no app-only tools (MCP Apps).
            "tools": _visible(client.cached_tools),
            "resources": client.cached_resources,
            "resource_templates": client.cached_resource_templates,
            "prompts": client.cached_prompts,
        }
        self.model.update(**{k: list(v) for k, v in values.items() if v is not None})

    async def on_event(self, event: Event) -> None:
        if event.kind in ("request_start", "request"):
            self.model.update(in_flight=self.client.stats.in_flight)
        elif event.kind == "cache_refresh" and event.data.get("stored"):
            self.sync_lists()
        elif event.kind == "unchecked_call":
            # The client's warning, where a notebook shows what happened (the log view and frame):
            # a call that went unchecked must not pass for one that was checked.
            message = f"tools/call {event.data.get('tool')!r} went unchecked: {event.data.get('reason')}"
            entry = {"time": event.time, "level": "warning", "logger": "mcp_notebook.client", "data": message}
            self.model.append("log", entry)

    def on_task(self, handle: TaskHandle) -> None:
        # On the engine thread, after every change to any task: its row, replaced in a new list.
        if not handle.task_id:
            return  # a "task" the server ran at once: it is in the history, not a task
        row = task_row(handle)
        rows = list(self.model.tasks)
        for index, existing in enumerate(rows):
            if existing["task_id"] == handle.task_id:
                rows[index] = row
                break
        else:
            rows.append(row)
            if len(rows) > _MAX_TASK_ROWS:  # the oldest finished rows go first
                done = {i for i, r in enumerate(rows) if r["done"]}
                dropped = set(sorted(done)[: len(rows) - _MAX_TASK_ROWS])
                rows = [r for i, r in enumerate(rows) if i not in dropped]
        self.model.update(tasks=rows)

    async def follow_notifications(self) -> None:
        # The rows are what the log view shows: a secret the server echoes is masked in them
        # (protocol/_secrets); the client's own listeners still get the server's messages as sent.
        secrets = self.client.connection.secrets
        async with self.client.notifications(maxsize=10_000) as queue:
            async for notification in queue:
                params = secrets.mask_value(notification.params or {})
                if notification.method == "notifications/message":
                    entry = {
                        "time": time.time(),
                        "level": params.get("level"),
                        "logger": params.get("logger"),
                        "data": params.get("data"),
                    }
                    self.model.append("log", entry)
                else:
                    entry = {"time": time.time(), "method": notification.method, "params": params}
                    self.model.append("notifications", entry)


def _visible(tools: list[Tool] | None) -> list[Tool] | None:
    """``tools`` without the ones only an MCP App's View may call (None stays None)."""
    return None if tools is None else [tool for tool in tools if not tool.app_only]
