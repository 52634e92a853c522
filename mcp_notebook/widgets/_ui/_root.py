"""One anywidget per panel: it draws a tree of virtual controls and relays what the user does.

The protocol (docs/panel-messages.md has it whole):

- The view, once drawn, says ``{"t": "hello", "view": id, "have": [versions]}``. The panel answers
  that view with the whole tree (``"t": "tree"``: every control's state by its id, the top's id,
  a sequence number) and, when the view's page lacks it, the renderer itself (``"code"``: the ES
  module and stylesheet in ``widgets/panel.js`` and ``panel.css``, loaded once per page).
- Then every change of a control becomes a ``"patch"``: the changed keys of the changed control,
  the controls that came into the tree (whole) and the ids that left it. Only what changed is
  sent: a log of 5,000 lines sends its rows, not its table.
- The view sends ``"set"`` (a value the user chose: ``value``, ``index``, ``selected_index``) and
  ``"event"`` (a click, a submit); they reach the control through ipywidgets' own handler, as
  a comm message would.

Why the renderer is not the anywidget's ``_esm``: every anywidget model stores its ``_esm`` in a
saved notebook, so a notebook with five panels would store the renderer five times. The ``_esm``
here is a loader of a few hundred bytes; the kernel, which has the package, sends the renderer.
A saved notebook read without a kernel shows the output's static snapshot instead
(:mod:`.._fallback`).
"""

from __future__ import annotations

import base64
import hashlib
import logging
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

import anywidget
import ipywidgets as W
import traitlets

from .._static import static_path
from ._comm import VirtualComm
from ._sparse import Sparse

__all__ = ["Panel"]

log = logging.getLogger("mcp_notebook.widgets")

#: What the view may set on a control: what a user can change, never the structure or the names.
_SETTABLE = frozenset({"value", "index", "selected_index"})
#: What a view's event may be (ipywidgets' own: a button's click, a text's submit).
_EVENTS = frozenset({"click", "submit"})
_MAX_CONTROLS = 20_000  # a tree larger than this is a bug in a panel, not a reason to hang the page

_BOOT = """
const KEY = "__mcpnbPanels";
function loaded(version) { return (globalThis[KEY] = globalThis[KEY] || {})[version]; }
const CSS = (globalThis[KEY + "Css"] = globalThis[KEY + "Css"] || {}); // shared by every panel
function style(el, version) {
  // the page's head, or the shadow root a host draws the view in (marimo does): CSS stops there
  const root = el.getRootNode();
  const where = root instanceof ShadowRoot ? root : document.head;
  const id = "mcpnb-css-" + version;
  if (!CSS[version] || where.querySelector("#" + id)) return;
  const sheet = document.createElement("style");
  sheet.id = id;
  sheet.textContent = CSS[version];
  where.append(sheet);
}
async function load(code) {
  const cache = (globalThis[KEY] = globalThis[KEY] || {});
  if (!cache[code.version]) {
    const url = URL.createObjectURL(new Blob([code.js], { type: "text/javascript" }));
    cache[code.version] = import(url).finally(() => URL.revokeObjectURL(url));
  }
  if (code.css) CSS[code.version] = code.css;
  return cache[code.version];
}
function render({ model, el }) {
  const view = Math.random().toString(36).slice(2);
  const queue = [];
  let mounted = null, gone = false;
  el.classList.add("mcpnb-panel");
  const note = document.createElement("div");
  note.className = "mcpnb-panel-wait";
  el.append(note);
  const timer = setTimeout(() => {
    if (!mounted) note.textContent = "This panel is drawn by its kernel: run the cell to see it live.";
  }, 8000);
  async function start(tree) {
    const module = await (tree.code ? load(tree.code) : loaded(tree.version));
    if (gone) return;
    style(el, tree.version);
    clearTimeout(timer);
    note.remove();
    mounted = module.mount({ model, el, view });
    mounted.receive(tree);
    for (const message of queue.splice(0)) mounted.receive(message);
  }
  function onMessage(message) {
    if (mounted) return mounted.receive(message);
    if (message && message.t === "tree" && message.for === view && !queue.started) {
      queue.started = true;
      start(message).catch((error) => { note.textContent = "The panel could not be drawn: " + error; });
    } else if (queue.started) queue.push(message);
  }
  model.on("msg:custom", onMessage);
  model.send({ t: "hello", view, have: Object.keys(globalThis[KEY] || {}) });
  return () => {
    gone = true;
    clearTimeout(timer);
    model.off("msg:custom", onMessage);
    if (mounted) mounted.dispose();
  };
}
export default { render };
"""


def _renderer() -> dict[str, str]:
    """The renderer's source and its version (a hash: a changed file is a new module).

    Read again when a file changed: a developer editing ``widgets/panel.js`` or ``panel.css``
    sees the edit in the next view (re-run the cell, or reload the page), with no build step.
    """
    paths = (static_path("panel.js"), static_path("panel.css"))
    return _read_renderer(*((str(p), p.stat().st_mtime_ns) for p in paths))


@lru_cache(maxsize=4)  # a few edits of a developer
def _read_renderer(js: tuple[str, int], css: tuple[str, int]) -> dict[str, str]:
    code = Path(js[0]).read_text(encoding="utf-8")
    style = Path(css[0]).read_text(encoding="utf-8")
    version = hashlib.sha256((code + style).encode()).hexdigest()[:16]
    return {"version": version, "js": code, "css": style}


def _encode(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        return {"b64": base64.b64encode(bytes(value)).decode("ascii")}
    return value


def _state_of(control: Any) -> dict[str, Any]:
    """A control's state as the view needs it: only what differs from the defaults, plus its names."""
    state: dict[str, Any] = control.get_state(drop_defaults=True)
    state["_model_name"] = control._model_name
    return {key: _encode(value) for key, value in state.items()}


def _with_buffers(state: dict[str, Any], paths: Any, buffers: Any) -> dict[str, Any]:
    """ipywidgets' update with its binary parts put back (as base64) where they were cut out."""
    if not paths or not buffers:
        return state
    for path, buffer in zip(paths, buffers, strict=False):
        target: Any = state
        for part in path[:-1]:
            target = target[part]
        target[path[-1]] = _encode(buffer)
    return state


def _linked(control: Any) -> list[Any]:
    """The controls ``control`` shows: its children, layout, style, any control among its traits."""
    found: list[Any] = []
    for name in control.keys:
        value = getattr(control, name, None)
        if isinstance(value, W.Widget):
            found.append(value)
        elif isinstance(value, tuple | list):
            found.extend(item for item in value if isinstance(item, W.Widget))
    return found


class _SparseLayout(Sparse, W.Layout):
    """The panels' one real ``Layout``, opened (and stored) sparse: not a kilobyte of defaults
    in every saved notebook."""


_layout_lock = threading.Lock()
_layout: list[_SparseLayout] = []


def _shared_layout() -> _SparseLayout:
    """One layout for every panel (it never changes), made again if it was closed."""
    with _layout_lock:
        if not _layout or _layout[0].comm is None:
            _layout[:] = [_SparseLayout()]
        return _layout[0]


#: marimo's view: the renderer itself, drawn at once from the tree it was opened with (``_tree``).
_MARIMO_RENDER = """
export default {
  render({ model, el }) {
    const view = Math.random().toString(36).slice(2);
    el.classList.add("mcpnb-panel");
    const drawn = mount({ model, el, view });
    const first = model.get("_tree");
    if (first && first.top) drawn.receive({ t: "tree", for: view, ...first });
    const receive = (message) => drawn.receive(message);
    model.on("msg:custom", receive);
    model.send({ t: "hello", view, have: [] }); // a tree that is current, once the kernel is free
    return () => { model.off("msg:custom", receive); drawn.dispose(); };
  },
};
"""


def _marimo() -> bool:
    """True when the panel is made for marimo (in one of its cells, or its formatter)."""
    from ...notebook._host import front_end

    return front_end() == "marimo"


class Panel(anywidget.AnyWidget):
    """The anywidget of one tree of virtual controls (``top`` and all it holds).

    In Jupyter its ``_esm`` is the small loader and the view asks for the tree (the kernel's
    message pump answers even while a cell waits in a call). marimo handles a view's messages only
    between cells, so a panel shown during a blocking call (its progress bar, a dialog) would wait
    for the call to end: there the panel is opened with the renderer as its ``_esm`` and the tree in
    ``_tree``, and draws at once (marimo keeps no widget state in a saved notebook, so nothing
    grows). Its view still says hello, for a tree that is current once the cell ends.
    """

    _esm = _BOOT
    _tree = traitlets.Dict().tag(sync=True)

    def __init__(self, top: Any) -> None:
        self._top = top
        self._lock = threading.RLock()
        self._shown: dict[str, Any] = {}
        self._seq = 0
        self._retrack()  # before the comm opens: marimo's view is opened with the tree
        first: dict[str, Any] = {}
        if _marimo():
            renderer = _renderer()
            self._esm = renderer["js"] + _MARIMO_RENDER  # read by anywidget's __init__
            self._css = renderer["css"]
            first = {**(self.tree() or {}), "seq": 0}
        super().__init__(layout=_shared_layout(), _tree=first)
        self.on_msg(self._from_view)

    @property
    def top(self) -> Any:
        return self._top

    # --- the tree ---------------------------------------------------------------------------

    def _retrack(self) -> tuple[dict[str, Any], list[str]]:
        """Follow the tree again; return the controls that came into it (their state) and the ids
        that left it. Only virtual controls are drawn; any other widget is left out of the tree."""
        reached: dict[str, Any] = {}
        todo = [self._top]
        while todo and len(reached) < _MAX_CONTROLS:
            control = todo.pop()
            comm = getattr(control, "comm", None)
            if not isinstance(comm, VirtualComm) or comm.comm_id in reached:  # only ours are drawn
                continue
            reached[comm.comm_id] = control
            todo.extend(_linked(control))
        added = {key: control for key, control in reached.items() if key not in self._shown}
        left = [key for key in self._shown if key not in reached]
        for key in left:
            comm = getattr(self._shown[key], "comm", None)
            if comm is not None:
                comm.hidden_from(self)
        for control in added.values():
            control.comm.shown_by(self)
        self._shown = reached
        return {key: _state_of(control) for key, control in added.items()}, left

    def _post(self, message: dict[str, Any]) -> None:
        if self.comm is None:
            return
        self._seq += 1
        message["seq"] = self._seq
        self.send(message)

    def _control_sent(self, model_id: str, data: Any, buffers: Any) -> None:
        """What ipywidgets sends for a control in this tree: a state update becomes a patch."""
        if not isinstance(data, dict):
            return
        method = data.get("method")
        with self._lock:
            if model_id not in self._shown:
                return
            if method == "custom":
                self._post({"t": "custom", "id": model_id, "content": data.get("content")})
                return
            if method != "update":  # "echo_update": the view that changed it shows it already
                return
            state = _with_buffers(dict(data.get("state") or {}), data.get("buffer_paths"), buffers)
            message: dict[str, Any] = {
                "t": "patch",
                "set": {model_id: {k: _encode(v) for k, v in state.items()}},
            }
            if any(key in ("children", "layout", "style") for key in state):
                added, left = self._retrack()
                if added:
                    message["add"] = added
                if left:
                    message["drop"] = left
            self._post(message)

    def _control_closed(self, model_id: str) -> None:
        with self._lock:
            if model_id == getattr(self._top.comm, "comm_id", None) or self._top.comm is None:
                self._release()
                self.close()
                return
            if model_id in self._shown:
                self._shown.pop(model_id)
                self._post({"t": "patch", "drop": [model_id]})

    def _release(self) -> None:
        for control in self._shown.values():
            comm = getattr(control, "comm", None)
            if comm is not None:
                comm.hidden_from(self)
        self._shown = {}

    # --- the view ---------------------------------------------------------------------------

    def _from_view(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        kind = content.get("t")
        if kind == "hello":
            self._hello(content)
            return
        with self._lock:
            control = self._shown.get(str(content.get("id")))
        if control is None or control.comm is None:
            return
        if kind == "set":
            state = content.get("state")
            if isinstance(state, dict) and state and set(state) <= _SETTABLE:
                control.comm.handle({"method": "update", "state": state, "buffer_paths": []})
        elif kind == "event":
            event = content.get("event")
            if event in _EVENTS:
                control.comm.handle({"method": "custom", "content": {"event": event}})

    def tree(self) -> dict[str, Any] | None:
        """What a view is drawn from now: ``top`` (the top control's id) and ``models`` (every
        control's state by id); None once the top is closed."""
        with self._lock:
            top = getattr(self._top.comm, "comm_id", None)
            if top is None:
                return None
            return {"top": top, "models": {key: _state_of(c) for key, c in self._shown.items()}}

    def _hello(self, content: dict[str, Any]) -> None:
        renderer = _renderer()
        have = content.get("have")
        with self._lock:
            tree = self.tree()
            if tree is None:
                return
            message: dict[str, Any] = {
                "t": "tree",
                "for": content.get("view"),
                **tree,
                "version": renderer["version"],
            }
            if not isinstance(have, list) or renderer["version"] not in have:
                message["code"] = renderer
            self._post(message)

    def close(self) -> None:
        with self._lock:
            self._release()
        super().close()
