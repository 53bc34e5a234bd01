// Gecko viewer, run mode (`gecko view RUN_DIR`): a run directory's tasks table, and one task's GATS attempts side by
// side with what changed between them, the feedback in between, the real execution, the official verdict and the
// ground truth. Routes: #/ tasks (#/?q=&status=&group=&gats=&sort=&desc=1 keeps the table's filters and order),
// #/t/<key> one task. While the run is still going, the table is fetched again every few seconds.

import { app, badge, enc, getJson, h, pretty, setCrumbs, showError } from "./dom.js";

const TABLE_PAGE = 500; // rows added to the table at a time (filtering and sorting run over every task)
const REFRESH_MS = 5000; // how often a running run's table is fetched again
const COLUMNS = [
  ["key", "Task"], ["group", "Group"], ["status", "Status"], ["score", "Score", true], ["attempts", "Attempts", true],
  ["tokens", "Tokens", true], ["cost_usd", "Cost $", true], ["seconds", "Seconds", true], ["reason", "Reason"],
];
const STATUS_FILTERS = { "": "any", passed: "passed (score 1)", failed: "failed (score < 1)", untested: "untested",
  errored: "errored" };
const GATS_FILTERS = { "": "any", retried: "retried (a turn had 2+ attempts)", recovered: "retried and passed",
  first: "every turn at the first attempt" };
const collator = new Intl.Collator(undefined, { numeric: true });

let refreshTimer = null;

const fixed = (value, digits) => (value === null || value === undefined ? "—" : Number(value).toFixed(digits));
const compact = (value) => {
  const line = JSON.stringify(value);
  return line.length <= 160 ? line : pretty(value);
};
const scoreText = (score) => (score === null || score === undefined ? "—" : String(Math.round(score * 1000) / 1000));

function tableFilters() {
  const params = new URLSearchParams(window.location.hash.split("?")[1] || "");
  const get = (name) => params.get(name) || "";
  return { q: get("q"), status: get("status"), group: get("group"), gats: get("gats"), sort: get("sort") || "key",
    desc: get("desc") === "1" };
}

function matches(row, f, needle) {
  if (needle && !row.key.toLowerCase().includes(needle) && !(row.reason || "").toLowerCase().includes(needle)) return false;
  if (f.group && row.group !== f.group) return false;
  if (f.status === "passed" && !(row.status === "done" && row.score >= 1)) return false;
  if (f.status === "failed" && !(row.status === "done" && row.score !== null && row.score < 1)) return false;
  if ((f.status === "untested" || f.status === "errored") && row.status !== f.status) return false;
  const retried = row.attempts > row.turns;
  if (f.gats === "retried" && !retried) return false;
  if (f.gats === "recovered" && !(retried && row.status === "done" && row.score >= 1)) return false;
  if (f.gats === "first" && retried) return false;
  return true;
}

function sortRows(rows, column, desc) {
  const numeric = COLUMNS.some(([key, , num]) => key === column && num);
  const value = (row) => row[column];
  rows.sort((a, b) => {
    const x = value(a);
    const y = value(b);
    if (x === null || x === undefined) return y === null || y === undefined ? 0 : 1; // blanks last either way
    if (y === null || y === undefined) return -1;
    const order = numeric ? x - y : collator.compare(String(x), String(y));
    return desc ? -order : order;
  });
  return rows;
}

function taskRow(row) {
  return h("tr", { dataset: { key: row.key } },
    h("td", {}, h("a", { href: `#/t/${enc(row.key)}` }, row.key)), h("td", {}, row.group), h("td", {}, badge(row.status)),
    h("td", { class: `num${row.score === null ? "" : row.score >= 1 ? " pass" : " fail"}` }, scoreText(row.score)),
    h("td", { class: "num" }, row.turns > 1 ? `${row.attempts} / ${row.turns} turns` : String(row.attempts)),
    h("td", { class: "num" }, String(row.tokens)), h("td", { class: "num" }, fixed(row.cost_usd, 4)),
    h("td", { class: "num" }, fixed(row.seconds, 2)), h("td", { class: "muted" }, row.reason || ""));
}

function runFacts(run) {
  const counts = {};
  for (const row of run.tasks) counts[row.status] = (counts[row.status] || 0) + 1;
  return h("dl", { class: "facts", id: "run-facts" },
    h("dt", {}, "Run"), h("dd", {}, run.name, " ", run.running ? badge("running") : badge("finished")),
    h("dt", {}, "Benchmark"), h("dd", {}, run.benchmark),
    h("dt", {}, "Model"), h("dd", {}, run.model),
    h("dt", {}, "GATS retries"), h("dd", {}, run.max_retries === null ? "—" : String(run.max_retries)),
    h("dt", {}, "Started"), h("dd", {}, run.started_utc || "—"),
    h("dt", {}, "Tasks"), h("dd", {}, Object.entries(counts).map(([status, n]) => `${n} ${status}`).join(", ") || "none yet"),
    h("dt", {}, "Accuracy"), h("dd", {}, run.accuracy === null ? "—" : `${(run.accuracy * 100).toFixed(1)}% of done tasks`),
    h("dt", {}, "Directory"), h("dd", { class: "muted" }, run.path));
}

async function renderTasks() {
  setCrumbs(h("span", {}, "Tasks"));
  const f = tableFilters();
  let run = await getJson("/run");
  const groups = [...new Set(run.tasks.map((row) => row.group))].sort(collator.compare);
  const select = (name, options, value) => h("select", { name },
    Object.entries(options).map(([v, text]) => h("option", { value: v, selected: v === value }, text)));
  const form = h("form", { class: "filters", id: "task-filters" },
    h("label", {}, "Task or reason ", h("input", { name: "q", type: "search", value: f.q, placeholder: "simple_python_1" })),
    h("label", {}, "Outcome ", select("status", STATUS_FILTERS, f.status)),
    h("label", {}, "Group ", select("group", Object.fromEntries([["", "any"], ...groups.map((g) => [g, g])]), f.group)),
    h("label", {}, "GATS ", select("gats", GATS_FILTERS, f.gats)));
  const summary = h("p", { class: "muted", id: "tasks-summary" });
  const head = h("tr");
  const body = h("tbody");
  const more = h("button", { type: "button", id: "more-tasks", hidden: true }, "More tasks");
  const facts = h("div", {}, runFacts(run));
  app.replaceChildren(h("h1", {}, "Run ", h("code", {}, run.name)), facts, form, summary,
    h("table", { class: "sessions", id: "tasks" }, h("thead", {}, head), body), more);
  let shown = [];
  let drawn = 0;
  const drawMore = () => {
    const rows = document.createDocumentFragment();
    for (const row of shown.slice(drawn, drawn + TABLE_PAGE)) rows.append(taskRow(row));
    body.append(rows);
    drawn = Math.min(shown.length, drawn + TABLE_PAGE);
    more.hidden = drawn >= shown.length;
    more.textContent = `${Math.min(TABLE_PAGE, shown.length - drawn)} more tasks`;
    summary.textContent = shown.length === run.tasks.length
      ? `${run.tasks.length} task${run.tasks.length === 1 ? "" : "s"}${drawn < shown.length ? `, first ${drawn} shown` : ""}.`
      : `${shown.length} of ${run.tasks.length} tasks match${drawn < shown.length ? `, first ${drawn} shown` : ""}.`;
  };
  const draw = () => {
    const needle = f.q.trim().toLowerCase();
    shown = sortRows(run.tasks.filter((row) => matches(row, f, needle)), f.sort, f.desc);
    head.replaceChildren(...COLUMNS.map(([key, title, num]) => h("th", {
      class: num ? "num sortable" : "sortable", dataset: { column: key },
      "aria-sort": key === f.sort ? (f.desc ? "descending" : "ascending") : null,
      onclick: () => {
        f.desc = f.sort === key ? !f.desc : false;
        f.sort = key;
        remember();
        draw();
      },
    }, title, key === f.sort ? (f.desc ? " ▼" : " ▲") : "")));
    body.replaceChildren();
    drawn = 0;
    drawMore();
  };
  const remember = () => {
    const query = new URLSearchParams();
    for (const key of ["q", "status", "group", "gats"]) if (f[key]) query.set(key, f[key]);
    if (f.sort !== "key") query.set("sort", f.sort);
    if (f.desc) query.set("desc", "1");
    const hash = `#/${query.toString() ? `?${query}` : ""}`;
    if (window.location.hash !== hash) window.history.replaceState(null, "", hash); // no hashchange: no refetch
  };
  form.addEventListener("submit", (event) => event.preventDefault());
  form.addEventListener("input", (event) => {
    const { name, value } = event.target;
    if (!(name in f)) return;
    f[name] = value;
    remember();
    draw();
  });
  more.addEventListener("click", drawMore);
  draw();
  if (run.running) {
    const refresh = async () => {
      try {
        run = await getJson("/run");
        facts.replaceChildren(runFacts(run));
        const keep = drawn;
        draw();
        while (drawn < Math.min(keep, shown.length)) drawMore();
      } catch (error) {
        showError(summary, error);
      }
      if (run.running && document.body.contains(body)) refreshTimer = window.setTimeout(refresh, REFRESH_MS);
    };
    refreshTimer = window.setTimeout(refresh, REFRESH_MS);
  }
}

/* ---------------------------------------------------------------- one task */

const callText = (call) => `${call.name}(${call.arguments === undefined ? "" : JSON.stringify(call.arguments)})`;

function callItem(call) {
  const outcome = call.ok === true ? badge("accepted") : call.ok === false ? badge("rejected") : null;
  const errors = (call.errors || []).map((e) => h("li", {}, e.pointer ? h("code", {}, e.pointer) : null,
    e.pointer ? " " : null, e.message || pretty(e)));
  return h("li", { class: "call", dataset: { ok: String(call.ok) } },
    h("code", {}, callText(call)), " ", outcome,
    call.status ? h("span", { class: "muted" }, ` HTTP ${call.status}`) : null,
    call.error_kind ? h("span", { class: "error" }, ` ${call.error_kind}`) : null,
    errors.length ? h("ul", { class: "errors" }, errors) : null,
    call.result !== undefined && call.result !== null
      ? h("details", {}, h("summary", {}, "result"), h("pre", {}, typeof call.result === "string" ? call.result : pretty(call.result)))
      : null);
}

function callList(calls) {
  return calls && calls.length ? h("ol", { class: "calls" }, calls.map(callItem)) : h("p", { class: "muted" }, "No call.");
}

function attemptCard(attempt) {
  const verdict = attempt.verdict;
  const latency = attempt.latency_s && (attempt.latency_s.total ?? attempt.latency_s);
  const usage = Object.entries(attempt.usage_by_role || {}).map(([role, u]) =>
    `${role}: ${(u.input_tokens || 0) + (u.output_tokens || 0)} tok${u.cost_usd ? `, $${Number(u.cost_usd).toFixed(4)}` : ""}`);
  return h("div", { class: `attempt${attempt.best ? " best" : ""}`, dataset: { index: String(attempt.index), status: attempt.status } },
    h("h3", {}, `Attempt ${attempt.index}`, " ", badge(attempt.status), attempt.best ? h("span", { class: "label" }, "chosen") : null),
    verdict ? h("p", {}, "Judge: ", verdict.success ? badge("success") : badge("failed"),
      verdict.score !== undefined && verdict.score !== null ? ` score ${scoreText(verdict.score)}` : "",
      verdict.engine ? h("span", { class: "muted" }, ` (${verdict.engine})`) : null) : null,
    (verdict && verdict.remaining && verdict.remaining.length) || (attempt.remaining && attempt.remaining.length)
      ? h("div", {}, h("h4", {}, "Still to do"), h("ul", { class: "items" },
        (verdict ? verdict.remaining : attempt.remaining).map((item) => h("li", {}, item))))
      : null,
    attempt.error ? h("p", { class: "error" }, attempt.error) : null,
    h("h4", {}, "Calls"), callList(attempt.calls),
    attempt.final_text ? h("p", {}, h("b", {}, "Answer: "), attempt.final_text) : null,
    h("p", { class: "muted" }, [latency !== undefined && latency !== null ? `${fixed(latency, 3)} s` : null, ...usage]
      .filter(Boolean).join(" · ")));
}

function changeItem(change) {
  const number = `#${change.index + 1} `;
  const ok = (change.ok || []).map((v) => (v === true ? "accepted" : v === false ? "rejected" : "—"));
  const acceptance = ok.length === 2 && ok[0] !== ok[1] ? h("span", { class: "muted" }, ` (${ok[0]} → ${ok[1]})`) : null;
  if (change.kind === "changed") {
    return h("li", { class: "kind-changed" }, number, h("code", {}, change.name), " arguments changed:", acceptance,
      h("ul", {}, Object.entries(change.arguments).map(([name, [before, after]]) =>
        h("li", {}, h("code", {}, name || "(arguments)"), ": ", h("code", { class: "before" }, JSON.stringify(before) ?? "—"),
          " → ", h("code", { class: "after" }, JSON.stringify(after) ?? "—")))));
  }
  if (change.kind === "replaced") {
    return h("li", { class: "kind-replaced" }, number, h("code", {}, change.name[0]), " → ", h("code", {}, change.name[1]), acceptance);
  }
  if (change.kind === "same") return h("li", { class: "kind-same muted" }, number, h("code", {}, change.name), " unchanged", acceptance);
  return h("li", { class: `kind-${change.kind}` }, number, `${change.kind}: `, h("code", {}, change.name));
}

function between(from, changes, next) {
  return h("div", { class: "between", dataset: { from: String(from) } },
    h("h4", {}, `${from} → ${next.index}: what changed`),
    h("ul", { class: "changes" }, changes.length ? changes.map(changeItem) : h("li", { class: "muted" }, "no call in either")),
    next.feedback
      ? h("details", { class: "feedback", open: true }, h("summary", {}, `Feedback given to attempt ${next.index}`), h("pre", {}, next.feedback))
      : h("p", { class: "muted" }, "No feedback recorded."));
}

function turnSection(turn, count) {
  const strip = h("div", { class: "attempts" });
  turn.attempts.forEach((attempt, i) => {
    if (i > 0) strip.append(between(turn.attempts[i - 1].index, turn.changes[i - 1] || [], attempt));
    strip.append(attemptCard(attempt));
  });
  const real = turn.real;
  const divergence = turn.divergence;
  return h("section", { class: "turn", dataset: { turn: String(turn.index) } },
    h("h2", {}, count > 1 ? `Turn ${Number(turn.index) + 1}` : "Attempts", " ", turn.status ? badge(turn.status) : null,
      turn.at_message !== null && turn.at_message !== undefined ? h("span", { class: "muted" }, ` before message ${turn.at_message}`) : null),
    turn.checklist && turn.checklist.length
      ? h("details", {}, h("summary", {}, `Checklist (${turn.checklist.length})`), h("ul", { class: "items" }, turn.checklist.map((c) => h("li", {}, c))))
      : null,
    turn.checklist_error ? h("p", { class: "error" }, `checklist: ${turn.checklist_error}`) : null,
    turn.error ? h("p", { class: "error" }, turn.error) : null,
    turn.attempts.length ? strip : h("p", { class: "muted" }, "No attempt recorded."),
    real ? h("div", { class: "real" }, h("h3", {}, "Real execution", real.agent ? h("span", { class: "muted" }, ` (${real.agent})`) : null),
      callList(real.calls), real.final_text ? h("p", {}, h("b", {}, "Answer: "), real.final_text) : null,
      divergence ? h("p", { class: divergence.diverged ? "warn" : "muted" },
        `${divergence.matched}/${divergence.planned} planned calls executed as planned${divergence.diverged ? " (diverged)" : ""}`) : null)
      : null);
}

function officialSection(official) {
  if (!official) return h("p", { class: "muted" }, "No official verdict recorded for this task.");
  let head;
  if (official.valid !== undefined) {
    head = h("p", {}, official.valid === true ? badge("passed") : official.valid === false ? badge("failed") : badge("unknown"),
      official.error_type ? ` ${official.error_type}` : "", h("span", { class: "muted" }, ` (${official.checker})`));
  } else {
    head = h("p", {}, "Reward ", h("b", {}, scoreText(official.reward)), " ", official.reward >= 1 ? badge("passed") : badge("failed"),
      h("span", { class: "muted" }, ` (${official.checker})`));
  }
  const rest = Object.fromEntries(Object.entries(official).filter(([k]) => !["valid", "error_type", "checker", "reward"].includes(k)));
  return h("div", {}, head, Object.keys(rest).length ? h("pre", {}, pretty(rest)) : null);
}

function conversation(real) {
  return h("section", { id: "real" }, h("h2", {}, "Conversation as it ran", real.termination_reason
    ? h("span", { class: "muted" }, ` (ended: ${real.termination_reason})`) : null),
  h("ol", { class: "messages" }, (real.messages || []).map((m) => h("li", { class: `msg role-${m.role}` },
    h("b", {}, m.role), " ", m.content || "", Array.isArray(m.tool_calls)
      ? h("ul", { class: "tool-calls" }, m.tool_calls.map((call) => h("li", {}, h("code", {}, callText(call)))))
      : null))));
}

async function renderTask(key) {
  setCrumbs(h("a", { href: "#/" }, "Tasks"), h("span", {}, key));
  const task = await getJson(`/run/tasks/${enc(key)}`);
  const attempts = task.turns.reduce((n, t) => n + t.attempts.length, 0);
  app.replaceChildren(...[
    h("h1", {}, "Task ", h("code", {}, key)),
    h("dl", { class: "facts", id: "task-facts" },
      h("dt", {}, "Status"), h("dd", {}, badge(task.status)),
      h("dt", {}, "Score"), h("dd", {}, scoreText(task.score)),
      h("dt", {}, "Group"), h("dd", {}, task.group),
      h("dt", {}, "Attempts"), h("dd", {}, `${attempts}${task.turns.length > 1 ? ` over ${task.turns.length} turns` : ""}`),
      h("dt", {}, "Tokens, cost"), h("dd", {}, `${task.tokens} tokens, $${fixed(task.cost_usd, 4)}`),
      h("dt", {}, "Time"), h("dd", {}, `${fixed(task.seconds, 2)} s${task.finished_utc ? `, finished ${task.finished_utc}` : ""}`),
      task.reason ? [h("dt", {}, "Reason"), h("dd", { class: "error" }, task.reason)] : null),
    task.details_error ? h("p", { class: "error" }, `Benchmark details unavailable: ${task.details_error}`) : null,
    h("div", { class: "split" },
      h("section", { id: "official" }, h("h2", {}, "Official verdict"), officialSection(task.official)),
      h("section", { id: "ground-truth" }, h("h2", {}, "Ground truth"), task.ground_truth === null || task.ground_truth === undefined
        ? h("p", { class: "muted" }, "Not available for this task.") : h("pre", {}, compact(task.ground_truth)))),
    task.answer !== null && task.answer !== undefined
      ? h("section", { id: "answer" }, h("h2", {}, "Answer as scored"), h("pre", {}, typeof task.answer === "string" ? task.answer : compact(task.answer)))
      : null,
    task.turns.length ? null : h("p", { class: "muted" }, `No GATS attempts recorded${task.trace_error ? `: ${task.trace_error}` : "."}`),
    ...task.turns.map((turn) => turnSection(turn, task.turns.length)),
    task.real ? conversation(task.real) : null].filter(Boolean));
}

/** Show the run view for `hash` (without its leading #). */
export async function routeRun(hash) {
  if (refreshTimer !== null) window.clearTimeout(refreshTimer);
  refreshTimer = null;
  const task = hash.match(/^\/t\/(.+)$/);
  if (task) await renderTask(decodeURIComponent(task[1]));
  else await renderTasks();
}
