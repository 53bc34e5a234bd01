// Gecko viewer: a read-only single page (no framework, nothing from outside), in one of two modes (<body data-mode>).
// live (Gecko's /ui), over Gecko's session endpoints: #/ sessions, #/s/<id> one session (#/s/<id>/v/<n> with
// version n selected). run (`gecko view RUN_DIR`): run.js. Every value from the server is put into the page as
// text (textContent), never parsed as HTML.

import {
  app, badge, enc, getJson, h, labelsOf, ms, pretty, sessionLink, setCrumbs, shortId, showError, when,
} from "./dom.js";
import { routeRun } from "./run.js";

const HISTORY_PAGE = 1000; // calls fetched per request of the timeline (rows only; a call's body is built when opened)
const LIST_PAGE = 50; // sessions per page of the listing
const STATUSES = ["new", "ok", "rejected", "success", "failed", "unjudged"];

/* ---------------------------------------------------------------- sessions list */

function listFilters() {
  const params = new URLSearchParams(window.location.hash.split("?")[1] || "");
  return { label: params.get("label") || "", toolkit: params.get("toolkit") || "", status: params.get("status") || "" };
}

async function renderList() {
  setCrumbs(h("span", {}, "Sessions"));
  const filters = listFilters();
  const form = h("form", { class: "filters", id: "filters" },
    h("label", {}, "Label ", h("input", { name: "label", placeholder: "run=demo", value: filters.label })),
    h("label", {}, "Toolkit ", h("input", { name: "toolkit", placeholder: "toolkit", value: filters.toolkit })),
    h("label", {}, "Status ", h("select", { name: "status" },
      h("option", { value: "" }, "any"),
      STATUSES.map((s) => h("option", { value: s, selected: s === filters.status }, s)))),
    h("button", { type: "submit" }, "Filter"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const query = new URLSearchParams();
    for (const key of ["label", "toolkit", "status"]) if (data.get(key)) query.set(key, String(data.get(key)).trim());
    window.location.hash = `#/?${query}`;
  });
  const body = h("tbody");
  const summary = h("p", { class: "muted", id: "list-summary" });
  const more = h("button", { type: "button", id: "more", hidden: true }, "Older sessions");
  const table = h("table", { class: "sessions", id: "sessions" },
    h("thead", {}, h("tr", {}, ["Session", "Created", "Status", "Calls", "Version", "Labels", "Toolkits", "Forked from"]
      .map((t) => h("th", {}, t)))), body);
  app.replaceChildren(h("h1", {}, "Sessions"), form, summary, table, more);
  let cursor = null;
  let shown = 0;
  const load = async () => {
    const query = new URLSearchParams({ limit: String(LIST_PAGE) });
    if (filters.label) query.append("label", filters.label);
    if (filters.toolkit) query.set("toolkit", filters.toolkit);
    if (filters.status) query.set("status", filters.status);
    if (cursor) query.set("cursor", cursor);
    more.disabled = true;
    const page = await getJson(`/sessions?${query}`);
    for (const s of page.sessions) {
      body.append(h("tr", { dataset: { session: s.session_id } },
        h("td", {}, sessionLink(s.session_id)), h("td", {}, when(s.created)), h("td", {}, badge(s.status)),
        h("td", { class: "num" }, s.calls), h("td", { class: "num" }, s.version), h("td", {}, labelsOf(s.labels)),
        h("td", {}, s.toolkits.join(", ")), h("td", {}, s.parent ? sessionLink(s.parent) : "")));
    }
    shown += page.sessions.length;
    if (page.total !== null && page.total !== undefined) summary.dataset.total = page.total;
    const total = summary.dataset.total;
    summary.textContent = shown === 0 ? "No sessions match." :
      `${shown}${total ? ` of ${total}` : ""} session${shown === 1 ? "" : "s"}, newest first.`;
    cursor = page.next_cursor;
    more.hidden = !cursor;
    more.disabled = false;
  };
  more.addEventListener("click", () => load().catch((error) => showError(summary, error)));
  await load();
}

/* ---------------------------------------------------------------- one session */

function verdictLine(verdict) {
  if (!verdict) return h("span", { class: "muted" }, "not judged");
  if (verdict.success === null || verdict.success === undefined) {
    return h("span", { class: "error" }, `judge failed: ${verdict.error || verdict.status}`);
  }
  const items = verdict.items || [];
  const passed = items.filter((i) => i.status === "success").length;
  return h("span", {}, badge(verdict.success ? "success" : "failed"), ` ${passed}/${items.length} items`);
}

function treeNode(node, current) {
  const attempt = node.labels && node.labels.attempt !== undefined ? `attempt ${node.labels.attempt}` : null;
  const head = h("div", { class: `node${node.session_id === current ? " current" : ""}`, dataset: { session: node.session_id } },
    sessionLink(node.session_id, attempt || (node.parent ? shortId(node.session_id) : "base " + shortId(node.session_id))),
    " ", badge(node.status), " ", h("span", { class: "muted" }, `${node.calls} calls`),
    node.fork_version !== null && node.fork_version !== undefined ? h("span", { class: "muted" }, ` · from v${node.fork_version}`) : null,
    " ", verdictLine(node.verdict));
  const parts = [head];
  if (node.note) {
    parts.push(h("details", { class: "note" }, h("summary", {}, "feedback given to this attempt"), h("pre", {}, node.note)));
  }
  if (node.verdict && (node.verdict.items || []).length) {
    parts.push(h("ul", { class: "items" }, node.verdict.items.map((item) =>
      h("li", {}, badge(item.status), " ", item.description || item.id, item.reasoning ? h("span", { class: "muted" }, ` — ${item.reasoning}`) : null))));
  }
  const children = (node.children || []).map((child) => treeNode(child, current));
  if (node.truncated) children.push(h("li", { class: "muted" }, "more forks not shown"));
  return h("li", {}, parts, children.length ? h("ul", {}, children) : null);
}

function usageCells(usage) {
  if (!usage || !usage.length) return "";
  const roles = {};
  for (const record of usage) {
    const role = (roles[record.role] ||= { calls: 0, tokens: 0, cost: 0, cached: 0 });
    role.calls += 1;
    role.tokens += (record.input_tokens || 0) + (record.output_tokens || 0);
    role.cost += record.cost_usd || 0;
    role.cached += record.cached ? 1 : 0;
  }
  return Object.entries(roles).map(([role, u]) =>
    h("span", { class: "usage" }, `${role}: ${u.tokens} tok${u.cached ? `, ${u.cached} cached` : ""}${u.cost ? `, $${u.cost.toFixed(4)}` : ""}`));
}

function callOutcome(entry) {
  if (entry.tool === "#judge") return entry.verdict ? badge(entry.verdict.success ? "success" : "failed") : badge("error");
  return badge(entry.status === undefined ? "—" : entry.status);
}

function callDetails(entry) {
  const parts = [];
  if (entry.tool === "#judge") {
    if (entry.task) parts.push(h("p", {}, h("b", {}, "Task: "), entry.task));
    if (entry.agent_response) parts.push(h("p", {}, h("b", {}, "Answer: "), entry.agent_response));
    if (entry.error) parts.push(h("p", { class: "error" }, entry.error));
    if (entry.verdict) parts.push(h("ul", { class: "items" }, (entry.verdict.items || []).map((item) =>
      h("li", {}, badge(item.status), " ", item.description || item.id, item.reasoning ? h("span", { class: "muted" }, ` — ${item.reasoning}`) : null))));
    return parts;
  }
  if (entry.arguments !== undefined) parts.push(h("h4", {}, "Arguments"), h("pre", {}, pretty(entry.arguments)));
  if (entry.validation) {
    parts.push(h("p", {}, h("b", {}, "Validation: "), Object.entries(entry.validation).map(([k, v]) => `${k}: ${v}`).join(" · ")));
  }
  if (entry.errors && entry.errors.length) {
    parts.push(h("h4", {}, "Errors"), h("ul", { class: "errors" }, entry.errors.map((e) =>
      h("li", {}, e.pointer ? h("code", {}, e.pointer) : null, e.pointer ? " " : null, e.message || pretty(e)))));
  }
  if (entry.response !== undefined) parts.push(h("h4", {}, "Response"), h("pre", {}, pretty(entry.response)));
  if (entry.engines) parts.push(h("p", {}, h("b", {}, "Engines: "), pretty(entry.engines).replace(/\s+/g, " ")));
  if (entry.timings_ms) {
    parts.push(h("p", {}, h("b", {}, "Timings: "), Object.entries(entry.timings_ms).map(([k, v]) => `${k} ${ms(v)}`).join(" · ")));
  }
  const usage = usageCells(entry.usage);
  if (usage) parts.push(h("p", {}, h("b", {}, "LLM usage: "), usage));
  const extra = Object.fromEntries(Object.entries(entry).filter(([k]) => !["tool", "at", "arguments", "validation",
    "errors", "response", "engines", "timings_ms", "usage", "status", "access", "state_version"].includes(k)));
  if (Object.keys(extra).length) parts.push(h("h4", {}, "Other fields"), h("pre", {}, pretty(extra)));
  return parts;
}

function timelineRow(entry, index, start) {
  const fallback = entry.engines && (entry.engines.fallback || (entry.engines.state && entry.engines.state.fallback));
  const details = h("details", { class: "call", dataset: { index: String(index), tool: entry.tool || "" } });
  const summary = h("summary", {},
    h("span", { class: "idx" }, `#${index + 1}`),
    h("span", { class: "at" }, entry.at && start ? `+${(entry.at - start).toFixed(2)}s` : ""),
    h("span", { class: "tool" }, entry.tool || "?"), callOutcome(entry),
    entry.validation ? h("span", { class: "muted" }, `syntactic ${entry.validation.syntactic || "—"}, semantic ${entry.validation.semantic || "—"}`) : null,
    entry.errors && entry.errors.length ? h("span", { class: "error" }, `${entry.errors.length} error${entry.errors.length > 1 ? "s" : ""}`) : null,
    fallback ? h("span", { class: "warn" }, `fallback: ${fallback}`) : null,
    entry.state_version !== undefined ? h("span", { class: "muted" }, `v${entry.state_version}`) : null,
    entry.timings_ms ? h("span", { class: "muted" }, ms(entry.timings_ms.total ?? entry.timings_ms.judge)) : null,
    usageCells(entry.usage));
  details.append(summary);
  // The body is built when first opened: a session of thousands of calls renders its rows only.
  details.addEventListener("toggle", () => {
    if (details.open && details.childElementCount === 1) details.append(h("div", { class: "body" }, callDetails(entry)));
  });
  return details;
}

async function renderTimeline(target, sessionId) {
  const list = h("div", { class: "timeline", id: "timeline" });
  const status = h("p", { class: "muted" });
  const more = h("button", { type: "button", hidden: true }, "More calls");
  target.replaceChildren(list, status, more);
  let offset = 0;
  let start = null;
  const load = async () => {
    more.disabled = true;
    const page = await getJson(`/sessions/${enc(sessionId)}/history?limit=${HISTORY_PAGE}&offset=${offset}`);
    const rows = document.createDocumentFragment();
    page.calls.forEach((entry, i) => {
      if (start === null) start = entry.at;
      rows.append(timelineRow(entry, offset + i, start));
    });
    list.append(rows);
    offset += page.calls.length;
    status.textContent = offset ? `${offset} entries` : "No calls yet.";
    more.hidden = page.calls.length < HISTORY_PAGE;
    more.disabled = false;
  };
  more.addEventListener("click", () => load().catch((error) => showError(status, error)));
  await load();
}

function diffList(patch) {
  if (!patch.length) return h("p", { class: "muted" }, "No change.");
  return h("ul", { class: "diff", id: "diff" }, patch.map((op) =>
    h("li", { class: `op-${op.op}` }, h("b", {}, op.op), " ", h("code", {}, op.path),
      op.from !== undefined ? ` from ${op.from}` : null,
      op.value !== undefined ? h("pre", {}, pretty(op.value)) : null)));
}

async function renderState(target, session, version) {
  const picker = h("select", { id: "version", "aria-label": "State version" });
  for (let v = session.version; v >= 0; v -= 1) picker.append(h("option", { value: String(v), selected: v === version }, `version ${v}`));
  picker.addEventListener("change", () => {
    window.location.hash = `#/s/${enc(session.session_id)}/v/${picker.value}`;
  });
  const diffBox = h("div", {});
  const stateBox = h("div", {});
  target.replaceChildren(h("p", {}, "State at ", picker), h("div", { class: "split" },
    h("section", {}, h("h3", {}, version > 0 ? `What version ${version} changed` : "Version 0"), diffBox),
    h("section", {}, h("h3", {}, `State at version ${version}`), stateBox)));
  try {
    const state = await getJson(`/sessions/${enc(session.session_id)}/state?version=${version}`);
    stateBox.append(h("pre", { id: "state" }, pretty(state.state)));
  } catch (error) {
    showError(stateBox, error);
  }
  if (version === 0) {
    diffBox.append(h("p", { class: "muted" }, session.config.forked_from
      ? `The state the session was forked with (from version ${session.config.fork_version} of its parent).`
      : "The initial state."));
    return;
  }
  try {
    diffBox.append(diffList((await getJson(`/sessions/${enc(session.session_id)}/diff?version=${version}`)).patch));
  } catch (error) {
    showError(diffBox, error);
  }
}

function checklistSection(session, tree) {
  const lists = session.checklists || [];
  const verdictOf = (node) => (node.session_id === session.session_id ? node.verdict : null) ||
    (node.children || []).map(verdictOf).find(Boolean);
  const verdict = verdictOf(tree.root);
  const judged = Object.fromEntries(((verdict && verdict.items) || []).map((item) => [item.id, item]));
  if (!lists.length && !verdict) return h("p", { class: "muted" }, "No checklist made and no verdict in this session.");
  const items = lists.length ? lists[lists.length - 1].items : (verdict.items || []);
  return h("div", {},
    lists.length ? h("p", { class: "muted" }, `Task: ${lists[lists.length - 1].task || "—"} (${lists[lists.length - 1].engine || "?"})`) : null,
    h("table", { class: "checklist", id: "checklist" }, h("thead", {}, h("tr", {}, h("th", {}, "Item"), h("th", {}, "Verdict"), h("th", {}, "Reasoning"))),
      h("tbody", {}, items.map((item) => {
        const result = judged[item.id] || {};
        return h("tr", {}, h("td", {}, item.description || item.id), h("td", {}, result.status ? badge(result.status) : h("span", { class: "muted" }, "—")),
          h("td", { class: "muted" }, result.reasoning || ""));
      }))));
}

async function renderSession(sessionId, version) {
  setCrumbs(h("a", { href: "#/" }, "Sessions"), h("span", { title: sessionId }, shortId(sessionId)));
  const [session, tree] = await Promise.all([getJson(`/sessions/${enc(sessionId)}`), getJson(`/sessions/${enc(sessionId)}/tree`)]);
  const config = session.config || {};
  const selected = version === null ? session.version : Math.min(Math.max(version, 0), session.version);
  const timeline = h("div", {});
  const state = h("div", {});
  app.replaceChildren(...[
    h("h1", {}, "Session ", h("code", {}, sessionId)),
    h("dl", { class: "facts", id: "facts" },
      h("dt", {}, "Status"), h("dd", {}, badge(session.status)),
      h("dt", {}, "Created"), h("dd", {}, when(session.created)),
      h("dt", {}, "Calls"), h("dd", {}, String(session.calls)),
      h("dt", {}, "Version"), h("dd", {}, String(session.version)),
      h("dt", {}, "Toolkits"), h("dd", {}, (config.toolkits || []).join(", ") || "—"),
      h("dt", {}, "Mode"), h("dd", {}, config.mode || "simulate"),
      h("dt", {}, "Labels"), h("dd", {}, labelsOf(config.labels)),
      config.forked_from ? [h("dt", {}, "Forked from"), h("dd", {}, sessionLink(config.forked_from), ` at version ${config.fork_version ?? "?"}`)] : null),
    config.note ? h("section", {}, h("h2", {}, "Note"), h("pre", { class: "note" }, config.note)) : null,
    h("section", { id: "tree" }, h("h2", {}, "Fork tree"), h("ul", { class: "tree" }, treeNode(tree.root, sessionId))),
    h("section", {}, h("h2", {}, "Checklist"), checklistSection(session, tree)),
    h("section", {}, h("h2", {}, "Calls"), timeline),
    h("section", { id: "states" }, h("h2", {}, "State"), state)].filter(Boolean));
  await Promise.all([renderTimeline(timeline, sessionId), renderState(state, session, selected)]);
}

/* ---------------------------------------------------------------- router */

async function route() {
  const hash = window.location.hash.replace(/^#/, "") || "/";
  const session = hash.match(/^\/s\/([^/?]+)(?:\/v\/(\d+))?/);
  document.body.dataset.ready = "";
  try {
    if (document.body.dataset.mode === "run") await routeRun(hash);
    else if (session) await renderSession(decodeURIComponent(session[1]), session[2] === undefined ? null : Number(session[2]));
    else await renderList();
  } catch (error) {
    showError(app, error);
  }
  document.body.dataset.ready = "1"; // tests wait for this
}

window.addEventListener("hashchange", route);
route();
