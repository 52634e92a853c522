// The front end of mcp_notebook's AppView (mcp_notebook/widgets/_app.py): it draws an MCP Apps View
// and relays its messages, nothing more. The host (the answers to the View's JSON-RPC, the CSP, the
// visibility rules) lives in Python, in mcp_notebook.apps; this file must stay small and boring.
//
// Plain ESM for anywidget, no imports and no build: it ships inside the Python package, so a
// notebook works offline and nobody needs Node.
//
// What it guarantees, whatever the kernel or the View sends:
// - The View runs in an iframe with sandbox="allow-scripts" and never allow-same-origin: a srcdoc
//   frame with allow-same-origin would share the notebook's origin and could reach the kernel. Its
//   origin is opaque, so it cannot read the notebook's cookies, storage or DOM, open windows,
//   navigate the page or submit forms. The flags are a constant here, not a trait the kernel sets.
// - The HTML arrives from Python with the CSP meta already first in <head> (the kernel builds it).
// - Only messages whose source is this iframe's window are forwarded to the kernel, verbatim; the
//   kernel's messages are posted to that window alone ("*": an opaque origin has no name).
// - A View that navigates its frame away is stopped: only the page the kernel sent may talk.
// - A link the View asks to open is shown with its host in bold; only a click on "Open" opens it
//   (https only, noopener, noreferrer). The answer goes back through a trait, never through the
//   message channel a View could imitate.
// - A file the View asks to save is shown (name, type, size) with "Save" and "Refuse"; only a click
//   on "Save" saves it, as the browser's own download from this page (a Blob URL), never from the
//   View's frame. Its bytes come from the kernel in a custom message of its own (mcpnb_download,
//   sent before the question), kept here and never forwarded to the View; the answer goes back
//   through a trait.

const SANDBOX = "allow-scripts";
const MIN_HEIGHT = 40;
const MAX_HEIGHT = 4000;
const DOWNLOAD_KEY = "mcpnb_download";

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function clampHeight(value) {
  const height = Number(value);
  if (!Number.isFinite(height)) return 360;
  return Math.max(MIN_HEIGHT, Math.min(MAX_HEIGHT, Math.round(height)));
}

function httpsUrl(text) {
  try {
    const url = new URL(String(text));
    return url.protocol === "https:" && url.hostname ? url : null;
  } catch {
    return null;
  }
}

function isDownload(message) {
  return Boolean(message) && typeof message === "object" && DOWNLOAD_KEY in message;
}

function sizeText(bytes) {
  const size = Number(bytes) || 0;
  if (size < 1024) return `${size} B`;
  if (size < 1024 * 1024) return `${(size / 1024).toFixed(1)} KB`;
  return `${(size / (1024 * 1024)).toFixed(1)} MB`;
}

function render({ model, el: host }) {
  const root = el("div", "mcpnb-app");
  root.style.cssText = "border:1px solid #d0d7de;border-radius:4px;overflow:hidden;width:100%";
  const bar = el("div", "mcpnb-app-bar");
  bar.style.cssText = "display:flex;gap:0.6em;align-items:center;padding:2px 8px;font-size:12px;" +
    "background:#f6f8fa;border-bottom:1px solid #d0d7de;font-family:var(--jp-ui-font-family,sans-serif)";
  const badge = el("span", "mcpnb-app-status");
  const title = el("span", "mcpnb-app-title");
  title.style.cssText = "color:#57606a;overflow:hidden;text-overflow:ellipsis;white-space:nowrap";
  bar.append(badge, title);
  const problem = el("div", "mcpnb-app-error");
  problem.style.cssText = "color:#b00020;padding:4px 8px;white-space:pre-wrap;display:none";
  const consent = el("div", "mcpnb-app-link");
  consent.style.cssText = "padding:6px 8px;border-bottom:1px solid #d0d7de;background:#fff8c5;display:none";
  const saving = el("div", "mcpnb-app-download");
  saving.style.cssText = consent.style.cssText;
  const stage = el("div", "mcpnb-app-stage");
  root.append(bar, consent, saving, problem, stage);
  host.append(root);

  let frame = null;
  // The bytes the kernel sent for the pending Save / Refuse question: { id, buffers }. Each drawn
  // view keeps its own copy (anywidget hands each render its own model object) until answered.
  let offered = null;

  function drawStatus() {
    const status = String(model.get("status") || "loading");
    badge.textContent = status;
    badge.className = `mcpnb-app-status mcpnb-app-${status}`;
    const colours = { ready: "#1b873f", error: "#b00020", closed: "#57606a", loading: "#9a6700" };
    badge.style.cssText = `font-weight:bold;color:${colours[status] || "#57606a"}`;
    title.textContent = `${model.get("tool") || ""}  ${model.get("resource_uri") || ""}`;
    const error = model.get("error");
    problem.textContent = error ? String(error) : "";
    problem.style.display = error ? "block" : "none";
    if (status === "closed" && frame) {
      frame.remove();
      frame = null;
    }
  }

  function drawFrame() {
    if (frame) {
      frame.remove();
      frame = null;
    }
    const html = model.get("srcdoc");
    if (!html || model.get("status") === "closed") return;
    frame = document.createElement("iframe");
    frame.className = "mcpnb-app-frame";
    // The attributes are set before the frame is attached: they apply when it navigates.
    frame.setAttribute("sandbox", SANDBOX);
    frame.setAttribute("allow", String(model.get("allow") || ""));
    frame.setAttribute("referrerpolicy", "no-referrer");
    frame.setAttribute("title", `MCP App ${model.get("tool") || ""}`);
    frame.style.cssText = "display:block;width:100%;border:0";
    frame.style.height = `${clampHeight(model.get("height"))}px`;
    frame.srcdoc = String(html);
    // A View may navigate its own frame (no sandbox flag forbids it): the page that would load
    // there is not the View, carries no CSP of ours and must not speak to the host. The first load
    // is the View; any later one means it left, and the frame is stopped.
    let loads = 0;
    const current = frame;
    current.addEventListener("load", () => {
      loads += 1;
      if (loads > 1 && frame === current) {
        frame.remove();
        frame = null;
        problem.textContent = "The app left its page, so it was stopped.";
        problem.style.display = "block";
      }
    });
    stage.append(frame);
  }

  function drawHeight() {
    if (frame) frame.style.height = `${clampHeight(model.get("height"))}px`;
  }

  function drawConsent() {
    consent.replaceChildren();
    const request = model.get("link_request");
    const url = request ? httpsUrl(request.url) : null;
    if (!request) {
      consent.style.display = "none";
      return;
    }
    consent.style.display = "block";
    const answer = (open) => {
      if (open && url) window.open(url.href, "_blank", "noopener,noreferrer");
      model.set("link_answer", { id: request.id, open: Boolean(open && url) });
      model.save_changes();
    };
    const text = el("div", "mcpnb-app-link-text");
    text.append(el("span", "", "The app asks to open "));
    const address = el("span", "mcpnb-app-link-url");
    if (url) {
      address.append(
        el("span", "", `${url.protocol}//`),
        el("b", "mcpnb-app-link-host", url.host),
        el("span", "", `${url.pathname}${url.search}${url.hash}`),
      );
    } else {
      address.textContent = String(request.url);
    }
    text.append(address);
    const buttons = el("div", "mcpnb-app-link-buttons");
    const open = el("button", "mcpnb-app-link-open", "Open");
    open.disabled = !url;
    open.addEventListener("click", () => answer(true));
    const refuse = el("button", "mcpnb-app-link-refuse", "Refuse");
    refuse.addEventListener("click", () => answer(false));
    buttons.append(open, refuse);
    consent.append(text, buttons);
  }

  function saveInBrowser(buffer, name) {
    // octet-stream: the browser saves the bytes under the name, it never opens or renders them.
    const url = URL.createObjectURL(new Blob([buffer], { type: "application/octet-stream" }));
    const link = el("a", "mcpnb-app-download-link");
    link.href = url;
    link.download = String(name);
    link.rel = "noopener";
    link.style.display = "none";
    host.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000); // the download has long started by then
  }

  function drawDownload() {
    saving.replaceChildren();
    const request = model.get("download_request");
    if (!request || !Array.isArray(request.files)) {
      offered = null;
      saving.style.display = "none";
      return;
    }
    saving.style.display = "block";
    const bytes = offered && offered.id === request.id ? offered.buffers : null;
    const answer = (save) => {
      if (save && bytes) request.files.forEach((file, i) => saveInBrowser(bytes[i], file.name));
      model.set("download_answer", { id: request.id, save: Boolean(save && bytes) });
      model.save_changes();
    };
    saving.append(el("div", "mcpnb-app-download-text", "The app asks to save:"));
    const list = el("ul", "mcpnb-app-download-files");
    list.style.cssText = "margin:2px 0;padding-left:1.4em";
    for (const file of request.files) {
      const item = el("li", "mcpnb-app-download-file");
      item.append(
        el("b", "mcpnb-app-download-name", String(file.name)),
        el("span", "mcpnb-app-download-type", ` ${String(file.type)}, `),
        el("span", "mcpnb-app-download-size", sizeText(file.size)),
      );
      list.append(item);
    }
    saving.append(list);
    if (!bytes) saving.append(el("div", "mcpnb-app-download-missing", "The file did not reach this page."));
    const buttons = el("div", "mcpnb-app-download-buttons");
    const save = el("button", "mcpnb-app-download-save", "Save");
    save.disabled = !bytes;
    save.addEventListener("click", () => answer(true));
    const refuse = el("button", "mcpnb-app-download-refuse", "Refuse");
    refuse.addEventListener("click", () => answer(false));
    buttons.append(save, refuse);
    saving.append(buttons);
  }

  function fromView(event) {
    if (!frame || event.source !== frame.contentWindow) return;
    try {
      model.send(event.data);
    } catch (error) {
      console.warn("mcp_notebook: a message of the app could not be sent to the kernel", error);
    }
  }

  function toView(message, buffers) {
    if (isDownload(message)) {
      offered = { id: message[DOWNLOAD_KEY], buffers: buffers || [] }; // for this page, never the View
      return;
    }
    if (frame && frame.contentWindow) frame.contentWindow.postMessage(message, "*");
  }

  const watched = [
    ["change:status change:error change:tool change:resource_uri", drawStatus],
    ["change:srcdoc change:allow", drawFrame],
    ["change:height", drawHeight],
    ["change:link_request", drawConsent],
    ["change:download_request", drawDownload],
    ["msg:custom", toView],
  ];
  // One event name per call: a model may not split "a b" the way Backbone does.
  for (const [events, handler] of watched) for (const name of events.split(" ")) model.on(name, handler);
  window.addEventListener("message", fromView);
  drawStatus();
  drawConsent();
  drawDownload();
  drawFrame();

  return () => {
    window.removeEventListener("message", fromView);
    for (const [events, handler] of watched) for (const name of events.split(" ")) model.off(name, handler);
    if (frame) frame.remove();
    frame = null;
  };
}

export default { render };
