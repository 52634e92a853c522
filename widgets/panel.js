// The renderer of mcp_notebook's panels (mcp_notebook/widgets/_ui): one anywidget per panel draws a
// tree of controls whose Python objects are ipywidgets' own, on virtual comms. This module is sent
// by the kernel to the panel's small loader (the anywidget's _esm) and loaded once per page.
//
// Plain ESM, no imports, no build: it ships inside the Python package, so a notebook works offline
// and nobody needs Node. Every string a server sent reaches here already escaped by the kernel
// (HTML values are our panels' markup); text goes in through textContent, never as markup.
//
// The messages: docs/panel-messages.md. In short: "tree" (every control by id), then "patch"
// (changed keys, controls added, ids dropped); the view sends "set" (a value the user chose) and
// "event" (a click, a submit).

// Font Awesome names (ipywidgets' icons) as plain symbols every font has; an unknown one is left out.
const ICONS = {
  play: "▶", stop: "■", refresh: "↻", "sync-alt": "↻", redo: "↻", undo: "↺", times: "✕",
  close: "✕", check: "✓", plus: "+", minus: "−", pause: "❚❚", download: "↓", upload: "↑",
  "chevron-left": "‹", "chevron-right": "›", "arrow-left": "←", "arrow-right": "→",
  "paper-plane": "➤", reply: "↩", "external-link-alt": "↗", list: "☰", table: "▦", ban: "⊘",
};
const LAYOUT_KEYS = [
  "width", "height", "min_width", "max_width", "min_height", "max_height", "display", "visibility",
  "margin", "padding", "flex", "flex_flow", "align_items", "align_content", "align_self",
  "justify_content", "justify_items", "overflow", "overflow_x", "overflow_y", "border", "border_top",
  "border_right", "border_bottom", "border_left", "grid_area", "grid_template_columns",
  "grid_template_rows", "grid_gap", "object_fit", "order", "top", "left", "bottom", "right",
];
const STYLE_KEYS = {
  button_color: "backgroundColor", font_weight: "fontWeight", font_size: "fontSize",
  text_color: "color", background: "background", font_family: "fontFamily", font_style: "fontStyle",
  text_decoration: "textDecoration", bar_color: null, handle_color: null, description_width: null,
};
const SETTLE_MS = 150; // typing is sent at most this often; an event sends what is pending first
const IMAGE_TYPES = new Set(["png", "jpeg", "jpg", "gif", "webp", "bmp"]);
const AUDIO_TYPES = new Set(["mp3", "mpeg", "wav", "ogg", "webm", "aac", "flac"]);

const camel = (key) => key.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
const ref = (value) => (typeof value === "string" && value.startsWith("IPY_MODEL_") ? value.slice(10) : null);
const text = (value) => (value === undefined || value === null ? "" : String(value));

function el(tag, className, content) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (content !== undefined) node.textContent = content;
  return node;
}

// A state holds only what differs from ipywidgets' defaults: these are ipywidgets' own.
function maxDefault(state) {
  return String(state._model_name).startsWith("Float") ? 10 : 100;
}

function b64(value) {
  return value && typeof value === "object" && typeof value.b64 === "string" ? value.b64 : "";
}

export function mount({ model, el: host, view }) {
  const root = el("div", "mcpnb-ui");
  host.append(root);
  let states = new Map(); // id -> state (only keys that differ from ipywidgets' defaults, plus names)
  let nodes = new Map(); // id -> { el, inner, draw }
  let users = new Map(); // layout/style id -> Set of control ids drawn with it
  let top = null;
  let seq = -1;
  const pending = new Map(); // id -> { state, timer }: values typed, not sent yet

  // --- talking to the kernel ---------------------------------------------------------------
  function flush(id) {
    const entry = pending.get(id);
    if (!entry) return;
    clearTimeout(entry.timer);
    pending.delete(id);
    model.send({ t: "set", id, state: entry.state });
  }
  function flushAll() { for (const id of [...pending.keys()]) flush(id); }
  function set(id, state, settle) {
    const now = states.get(id);
    if (now) Object.assign(now, state);
    const entry = pending.get(id) || { state: {}, timer: null };
    Object.assign(entry.state, state);
    clearTimeout(entry.timer);
    pending.set(id, entry);
    if (settle) entry.timer = setTimeout(() => flush(id), SETTLE_MS);
    else flush(id);
  }
  function event(id, name) {
    flushAll();
    model.send({ t: "event", id, event: name });
  }

  // --- the tree ------------------------------------------------------------------------------
  function receive(message) {
    if (!message || typeof message !== "object") return;
    if (message.t === "tree") {
      if (message.for !== view && seq >= 0) return; // another view's hello: this one is current
      states = new Map(Object.entries(message.models || {}));
      for (const entry of nodes.values()) entry.el.remove();
      nodes = new Map();
      users = new Map();
      top = message.top;
      seq = message.seq;
      root.replaceChildren();
      const drawn = element(top);
      if (drawn) root.append(drawn);
      return;
    }
    if (seq < 0 || typeof message.seq !== "number" || message.seq <= seq) return;
    seq = message.seq;
    if (message.t !== "patch") return;
    for (const [id, state] of Object.entries(message.add || {})) states.set(id, state);
    for (const [id, change] of Object.entries(message.set || {})) {
      const state = states.get(id);
      if (!state) continue;
      Object.assign(state, change);
      redraw(id, change);
    }
    for (const id of message.drop || []) {
      const entry = nodes.get(id);
      if (entry) entry.el.remove();
      nodes.delete(id);
      states.delete(id);
    }
  }

  function redraw(id, change) {
    const entry = nodes.get(id);
    if (entry) {
      if ("_dom_classes" in change || "tooltip" in change || "layout" in change || "style" in change) dress(id, entry);
      entry.draw(change);
    }
    const drawnWith = users.get(id); // a layout or a style: the controls that use it
    if (drawnWith) for (const user of drawnWith) { const e = nodes.get(user); if (e) dress(user, e); }
  }

  function element(id) {
    if (!id) return null;
    const existing = nodes.get(id);
    if (existing) return existing.el;
    const state = states.get(id);
    if (!state) return null;
    const maker = MAKERS[state._model_name] || unsupported;
    const entry = maker(id, state);
    nodes.set(id, entry);
    dress(id, entry);
    entry.draw(state);
    return entry.el;
  }

  function use(owner, part) {
    if (!part) return null;
    if (!users.has(part)) users.set(part, new Set());
    users.get(part).add(owner);
    return states.get(part) || null;
  }

  // The outer element's classes, tooltip, layout and style: from the control and its layout/style.
  function dress(id, entry) {
    const state = states.get(id) || {};
    const classes = ["mcpnb-ui-w", entry.kind, ...(state._dom_classes || [])];
    entry.el.className = classes.join(" ");
    if (state.tooltip) entry.el.title = text(state.tooltip);
    else entry.el.removeAttribute("title");
    const layout = use(id, ref(state.layout));
    entry.el.removeAttribute("style");
    if (layout) for (const key of LAYOUT_KEYS) if (layout[key]) entry.el.style[camel(key)] = layout[key];
    const style = use(id, ref(state.style));
    const target = entry.styled || entry.el;
    if (style) {
      for (const [key, property] of Object.entries(STYLE_KEYS)) {
        if (property && style[key]) target.style[property] = style[key];
      }
      if (style.description_width && entry.label) entry.label.style.width = style.description_width;
    }
  }

  function place(parent, ids) {
    const wanted = ids.map((value) => element(ref(value))).filter(Boolean);
    wanted.forEach((child, index) => {
      if (parent.children[index] !== child) parent.insertBefore(child, parent.children[index] || null);
    });
    while (parent.children.length > wanted.length) parent.lastElementChild.remove();
  }

  function describe(entry, state) {
    if (!entry.label) return;
    entry.label.textContent = text(state.description);
    entry.label.style.display = state.description ? "" : "none";
  }

  // --- one maker per control -----------------------------------------------------------------
  function box(id, state) {
    const node = el("div");
    const horizontal = state._model_name === "HBoxModel";
    return {
      el: node,
      kind: horizontal ? "mcpnb-ui-hbox" : "mcpnb-ui-vbox",
      draw: (change) => { if ("children" in change) place(node, states.get(id).children || []); },
    };
  }

  function tab(id) {
    const node = el("div");
    const bar = el("div", "mcpnb-ui-tabbar");
    bar.setAttribute("role", "tablist");
    const panels = el("div", "mcpnb-ui-tabpanels");
    node.append(bar, panels);
    const draw = () => {
      const state = states.get(id);
      const children = state.children || [];
      const titles = state.titles || [];
      const chosen = state.selected_index === undefined ? 0 : state.selected_index;
      bar.replaceChildren(...children.map((_, index) => {
        const button = el("button", "mcpnb-ui-tabtitle", text(titles[index]) || `${index + 1}`);
        button.setAttribute("role", "tab");
        button.setAttribute("aria-selected", String(index === chosen));
        button.addEventListener("click", () => { set(id, { selected_index: index }); draw(); });
        return button;
      }));
      place(panels, children);
      [...panels.children].forEach((child, index) => { child.hidden = index !== chosen; });
    };
    return { el: node, kind: "mcpnb-ui-tab", draw };
  }

  function accordion(id) {
    const node = el("div");
    const draw = () => {
      const state = states.get(id);
      const children = state.children || [];
      const titles = state.titles || [];
      const chosen = state.selected_index === undefined ? null : state.selected_index;
      const sections = children.map((child, index) => {
        const section = el("div", "mcpnb-ui-section");
        const head = el("button", "mcpnb-ui-sectiontitle", `${index === chosen ? "▾" : "▸"} ${text(titles[index])}`);
        head.addEventListener("click", () => { set(id, { selected_index: index === chosen ? null : index }); draw(); });
        section.append(head);
        const body = element(ref(child));
        if (body) { body.hidden = index !== chosen; section.append(body); }
        return section;
      });
      node.replaceChildren(...sections);
    };
    return { el: node, kind: "mcpnb-ui-accordion", draw };
  }

  function html(id) {
    const node = el("div");
    const label = el("label", "mcpnb-ui-description");
    const content = el("div", "mcpnb-ui-content");
    node.append(label, content);
    const entry = { el: node, kind: "mcpnb-ui-html", label, draw: null };
    entry.draw = (change) => {
      const state = states.get(id);
      if ("value" in change) content.innerHTML = text(state.value); // our panels' markup, escaped
      describe(entry, state);
    };
    return entry;
  }

  function label(id) {
    const node = el("div");
    return { el: node, kind: "mcpnb-ui-label", draw: () => { node.textContent = text(states.get(id).value); } };
  }

  function caption(icon, words) {
    const glyph = ICONS[icon] || "";
    return glyph && words ? `${glyph} ${words}` : glyph || words;
  }

  function copy(words) {
    // the page's own clipboard (a secure page: https or localhost); else the words are selected
    // in a scratch field and copied the old way, which works in more places
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(words).catch(() => {});
    const field = el("textarea");
    field.value = words;
    document.body.append(field);
    field.select();
    try { document.execCommand("copy"); } finally { field.remove(); }
  }

  function button(id) {
    const node = el("button");
    node.type = "button";
    node.addEventListener("click", () => {
      const words = states.get(id).copy_text; // a copy button's text (widgets/_sign_in.py)
      if (typeof words === "string" && words) copy(words);
      event(id, "click");
    });
    const entry = { el: node, kind: "mcpnb-ui-button", styled: node, draw: null };
    entry.draw = () => {
      const state = states.get(id);
      node.textContent = caption(state.icon, text(state.description));
      node.disabled = Boolean(state.disabled);
      node.dataset.style = text(state.button_style);
    };
    return entry;
  }

  function toggle(id) {
    const node = el("button");
    node.type = "button";
    node.addEventListener("click", () => set(id, { value: !states.get(id).value }));
    const entry = { el: node, kind: "mcpnb-ui-toggle", draw: null };
    entry.draw = () => {
      const state = states.get(id);
      node.textContent = caption(state.icon, text(state.description));
      node.disabled = Boolean(state.disabled);
      node.setAttribute("aria-pressed", String(Boolean(state.value)));
      node.dataset.style = text(state.button_style);
    };
    return entry;
  }

  function textual(id, state) {
    const kind = state._model_name;
    const node = el("div");
    const labelled = el("label", "mcpnb-ui-description");
    const input = kind === "TextareaModel" ? el("textarea") : el("input");
    if (kind === "PasswordModel") input.type = "password";
    else if (kind !== "TextareaModel") input.type = "text";
    let list = null;
    if (kind === "ComboboxModel") {
      list = el("datalist");
      list.id = `mcpnb-${view}-${id}`;
      input.setAttribute("list", list.id);
    }
    node.append(labelled, input);
    if (list) node.append(list);
    const settle = () => states.get(id).continuous_update !== false;
    input.addEventListener("input", () => { if (settle()) set(id, { value: input.value }, true); });
    input.addEventListener("change", () => set(id, { value: input.value }));
    if (kind !== "TextareaModel") {
      input.addEventListener("keydown", (e) => { if (e.key === "Enter") { set(id, { value: input.value }); event(id, "submit"); } });
    }
    const entry = { el: node, kind: "mcpnb-ui-text", label: labelled, draw: null };
    entry.draw = () => {
      const now = states.get(id);
      const value = text(now.value);
      if (input.value !== value && !pending.has(id)) input.value = value;
      input.placeholder = text(now.placeholder);
      input.disabled = Boolean(now.disabled);
      if (kind === "TextareaModel" && now.rows) input.rows = now.rows;
      if (list) list.replaceChildren(...(now.options || []).map((option) => { const o = el("option"); o.value = text(option); return o; }));
      describe(entry, now);
    };
    return entry;
  }

  function checkbox(id) {
    const node = el("label");
    const input = el("input");
    input.type = "checkbox";
    const words = el("span");
    node.append(input, words);
    input.addEventListener("change", () => set(id, { value: input.checked }));
    return {
      el: node,
      kind: "mcpnb-ui-checkbox",
      draw: () => {
        const state = states.get(id);
        input.checked = Boolean(state.value);
        input.disabled = Boolean(state.disabled);
        words.textContent = text(state.description);
      },
    };
  }

  function choice(id, state) {
    const kind = state._model_name;
    const node = el("div");
    const labelled = el("label", "mcpnb-ui-description");
    node.append(labelled);
    const entry = { el: node, kind: "mcpnb-ui-choice", label: labelled, draw: null };
    if (kind === "RadioButtonsModel" || kind === "ToggleButtonsModel") {
      const group = el("div", "mcpnb-ui-group");
      group.setAttribute("role", "radiogroup");
      node.append(group);
      entry.draw = () => {
        const now = states.get(id);
        const labels = now._options_labels || [];
        group.replaceChildren(...labels.map((words, index) => {
          const picked = index === now.index;
          if (kind === "ToggleButtonsModel") {
            const option = el("button", "mcpnb-ui-option", text(words));
            option.type = "button";
            option.disabled = Boolean(now.disabled);
            option.setAttribute("aria-pressed", String(picked));
            option.addEventListener("click", () => { set(id, { index }); entry.draw(); });
            return option;
          }
          const option = el("label", "mcpnb-ui-option");
          const radio = el("input");
          radio.type = "radio";
          radio.name = `mcpnb-${view}-${id}`;
          radio.checked = picked;
          radio.disabled = Boolean(now.disabled);
          radio.addEventListener("change", () => set(id, { index }));
          option.append(radio, el("span", "", text(words)));
          return option;
        }));
        describe(entry, now);
      };
      return entry;
    }
    const select = el("select");
    const multiple = kind === "SelectMultipleModel";
    select.multiple = multiple;
    node.append(select);
    select.addEventListener("change", () => {
      if (multiple) set(id, { index: [...select.selectedOptions].map((o) => Number(o.value)) });
      else set(id, { index: select.selectedIndex < 0 ? null : Number(select.value) });
    });
    entry.draw = () => {
      const now = states.get(id);
      const labels = now._options_labels || [];
      if (select.options.length !== labels.length || labels.some((l, i) => select.options[i].textContent !== l)) {
        select.replaceChildren(...labels.map((words, index) => { const o = el("option", "", text(words)); o.value = String(index); return o; }));
      }
      const chosen = multiple ? new Set(now.index || []) : null;
      if (multiple) [...select.options].forEach((o, i) => { o.selected = chosen.has(i); });
      else select.selectedIndex = now.index === undefined || now.index === null ? -1 : now.index;
      if (kind !== "DropdownModel") select.size = now.rows || 5;
      select.disabled = Boolean(now.disabled);
      describe(entry, now);
    };
    return entry;
  }

  function slider(id) {
    const node = el("div");
    const labelled = el("label", "mcpnb-ui-description");
    const input = el("input");
    input.type = "range";
    const readout = el("span", "mcpnb-ui-readout");
    node.append(labelled, input, readout);
    input.addEventListener("input", () => { readout.textContent = input.value; set(id, { value: Number(input.value) }, true); });
    input.addEventListener("change", () => set(id, { value: Number(input.value) }));
    const entry = { el: node, kind: "mcpnb-ui-slider", label: labelled, draw: null };
    entry.draw = () => {
      const now = states.get(id);
      input.min = text(now.min ?? 0);
      input.max = text(now.max ?? maxDefault(now));
      input.step = text(now.step ?? (now._model_name === "FloatSliderModel" ? 0.1 : 1));
      if (!pending.has(id)) input.value = text(now.value ?? 0);
      input.disabled = Boolean(now.disabled);
      readout.textContent = now.readout === false ? "" : input.value;
      describe(entry, now);
    };
    return entry;
  }

  function progress(id) {
    const node = el("div");
    const labelled = el("label", "mcpnb-ui-description");
    const bar = el("progress");
    node.append(labelled, bar);
    const entry = { el: node, kind: "mcpnb-ui-progress", label: labelled, draw: null };
    entry.draw = () => {
      const now = states.get(id);
      const low = Number(now.min ?? 0);
      bar.max = Math.max(Number(now.max ?? maxDefault(now)) - low, 0);
      bar.value = Math.max(Number(now.value ?? 0) - low, 0);
      bar.dataset.style = text(now.bar_style);
      describe(entry, now);
    };
    return entry;
  }

  function media(id, state) {
    const audio = state._model_name === "AudioModel";
    const node = audio ? el("audio") : el("img");
    return {
      el: node,
      kind: audio ? "mcpnb-ui-audio" : "mcpnb-ui-image",
      draw: () => {
        const now = states.get(id);
        const format = text(now.format || (audio ? "mp3" : "png")).toLowerCase();
        const data = b64(now.value);
        const allowed = audio ? AUDIO_TYPES : IMAGE_TYPES;
        if (!allowed.has(format) || !data) { node.removeAttribute("src"); return; }
        node.src = `data:${audio ? "audio" : "image"}/${format === "jpg" ? "jpeg" : format};base64,${data}`;
        if (audio) { node.controls = now.controls !== false; node.loop = Boolean(now.loop); }
        else { if (now.width) node.width = Number(now.width) || 0; if (now.height) node.height = Number(now.height) || 0; }
      },
    };
  }

  function output(id) {
    const node = el("div");
    return {
      el: node,
      kind: "mcpnb-ui-output",
      draw: () => {
        const items = states.get(id).outputs || [];
        node.replaceChildren(...items.map((item) => {
          if (!item || typeof item !== "object") return el("span");
          if (item.output_type === "stream") return el("pre", "mcpnb-ui-stream", text(item.text));
          const data = item.data || {};
          if (typeof data["text/html"] === "string") { const d = el("div"); d.innerHTML = data["text/html"]; return d; }
          if (typeof data["image/png"] === "string") { const i = el("img"); i.src = `data:image/png;base64,${data["image/png"]}`; return i; }
          return el("pre", "mcpnb-ui-stream", text(data["text/plain"]));
        }));
      },
    };
  }

  function unsupported(id, state) {
    const node = el("span", "", `[${text(state._model_name)} is not drawn here]`);
    return { el: node, kind: "mcpnb-ui-unsupported", draw: () => {} };
  }

  const MAKERS = {
    BoxModel: box, VBoxModel: box, HBoxModel: box, GridBoxModel: box,
    TabModel: tab, AccordionModel: accordion,
    HTMLModel: html, HTMLMathModel: html, LabelModel: label,
    ButtonModel: button, ToggleButtonModel: toggle,
    TextModel: textual, PasswordModel: textual, TextareaModel: textual, ComboboxModel: textual,
    CheckboxModel: checkbox,
    DropdownModel: choice, SelectModel: choice, SelectMultipleModel: choice, RadioButtonsModel: choice,
    ToggleButtonsModel: choice,
    IntSliderModel: slider, FloatSliderModel: slider,
    IntProgressModel: progress, FloatProgressModel: progress,
    ImageModel: media, AudioModel: media,
    OutputModel: output,
    LayoutModel: (id) => ({ el: el("span"), kind: "mcpnb-ui-layout", draw: () => {} }),
  };

  return {
    receive,
    dispose() {
      flushAll();
      root.remove();
    },
  };
}
