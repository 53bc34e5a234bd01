// Gecko viewer: what the live sessions view (app.js) and the run view (run.js) share. Every value from the server
// is put into the page as text (textContent), never parsed as HTML.

export const app = document.getElementById("app");
export const crumbs = document.getElementById("crumbs");

/** An element with attributes (on* values are listeners) and children (strings become text nodes). */
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export class HttpError extends Error {
  constructor(status, detail) {
    super(detail);
    this.status = status;
  }
}

export async function getJson(path) {
  const reply = await fetch(path, { headers: { accept: "application/json" }, credentials: "same-origin" });
  if (reply.status === 401) {
    window.location.assign("/ui/login");
    throw new HttpError(401, "sign in first");
  }
  const text = await reply.text();
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (!reply.ok) throw new HttpError(reply.status, (body && (body.detail || body.title)) || `HTTP ${reply.status}`);
  return body;
}

export const enc = encodeURIComponent;
export const shortId = (id) => (id && id.length > 13 ? id.slice(0, 8) + "…" : id || "");
export const when = (seconds) => (seconds ? new Date(seconds * 1000).toISOString().replace("T", " ").slice(0, 19) : "");
export const ms = (value) => (value === undefined || value === null ? "" : `${Number(value).toFixed(value < 10 ? 2 : 0)} ms`);
export const pretty = (value) => JSON.stringify(value, null, 2);
export const badge = (status) => h("span", { class: `badge st-${String(status).replace(/[^a-z0-9]/gi, "")}` }, String(status));
export const sessionLink = (id, text) => h("a", { href: `#/s/${enc(id)}`, title: id }, text || shortId(id));
export const labelsOf = (labels) =>
  Object.entries(labels || {}).map(([k, v]) => h("span", { class: "label" }, `${k}=${v}`));

export function showError(target, error) {
  target.replaceChildren(h("p", { class: "error", role: "alert" }, `Could not load: ${error.message}`));
}

export function setCrumbs(...parts) {
  crumbs.replaceChildren(...parts.flatMap((part) => [h("span", { class: "sep" }, "/"), part]));
}
