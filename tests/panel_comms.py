"""The browser's side of our panels, played over a kernel's comms (for kernel tests without a browser).

A panel is one anywidget (mcp_notebook/widgets/_ui/_root.py): its view says ``hello`` and is sent
the panel's whole tree, then patches; what a user does goes back as ``set`` and ``event``. This
plays that view for every panel the kernel opens, from the messages a test reads off IOPub, so a
test can find a control by its model and CSS class and type into it or click it, exactly as the
page would (the same messages, on the same comm).
"""

from __future__ import annotations

from typing import Any

PANEL = "mcp_notebook.widgets._ui._root.Panel"


class PanelsOverComms:
    """Feed it every IOPub message (:meth:`saw`); it answers each panel's opening with a hello."""

    def __init__(self, client: Any, view: str = "kernel-test") -> None:
        self.client = client
        self.view = view
        self.panels: dict[str, dict[str, dict[str, Any]]] = {}  # panel id -> control id -> state
        self.tops: dict[str, str] = {}  # panel id -> its top control's id
        self.displayed: list[str] = []  # the widget views displayed, in order (model ids)
        self.versions: list[str] = []  # the renderers this "page" was sent (not sent again)

    def saw(self, message: dict[str, Any]) -> None:
        kind = message["msg_type"]
        content = message["content"]
        if kind == "comm_open":
            state = content.get("data", {}).get("state", {})
            if state.get("_anywidget_id") == PANEL:
                self.panels.setdefault(content["comm_id"], {})
                hello = {"t": "hello", "view": self.view, "have": self.versions}
                self._send(content["comm_id"], hello)
        elif kind == "comm_msg" and content["comm_id"] in self.panels:
            data = content.get("data", {})
            if data.get("method") == "custom":
                self._apply(content["comm_id"], data.get("content") or {})
        elif kind == "display_data":
            view = content["data"].get("application/vnd.jupyter.widget-view+json")
            if view:
                self.displayed.append(view["model_id"])

    def _apply(self, panel: str, update: dict[str, Any]) -> None:
        controls = self.panels[panel]
        if update.get("t") == "tree" and update.get("for") == self.view:
            self.tops[panel] = update["top"]
            if update.get("code") and update["version"] not in self.versions:
                self.versions.append(update["version"])
            controls.clear()
            controls.update({key: dict(state) for key, state in update["models"].items()})
        elif update.get("t") == "patch":
            for key, state in (update.get("add") or {}).items():
                controls[key] = dict(state)
            for key, change in (update.get("set") or {}).items():
                controls.setdefault(key, {}).update(change)
            for key in update.get("drop") or ():
                controls.pop(key, None)

    def find(self, model: str, css: str) -> tuple[str, str] | None:
        """(panel id, control id) of a control of ``model`` (``"ButtonModel"``) with class ``css``."""
        for panel, controls in self.panels.items():
            for key, state in controls.items():
                if state.get("_model_name") == model and css in state.get("_dom_classes", ()):
                    return panel, key
        return None

    def panel_of(self, model: str, css: str) -> str | None:
        found = self.find(model, css)
        return found[0] if found else None

    def set(self, where: tuple[str, str], **state: Any) -> None:
        """Type or choose, as the page does (``value="Ada"``)."""
        self._send(where[0], {"t": "set", "id": where[1], "state": state})

    def click(self, where: tuple[str, str], event: str = "click") -> None:
        self._send(where[0], {"t": "event", "id": where[1], "event": event})

    def _send(self, panel: str, content: dict[str, Any]) -> None:
        data = {"method": "custom", "content": content}
        self.client.shell_channel.send(self.client.session.msg("comm_msg", {"comm_id": panel, "data": data}))
