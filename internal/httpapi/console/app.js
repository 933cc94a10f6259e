// The agcore console: a single page over the HTTP API, with no build step.
// Everything the server sends is inserted as text (textContent), never as
// markup, so a model's or a tool's output cannot run script here.

const TOKEN_KEY = "agcore.token";
const main = document.getElementById("main");
const status = document.getElementById("status");
const signout = document.getElementById("signout");
const schedulesNav = document.getElementById("nav-schedules");

let leave = () => {}; // stops what the current page runs (streams, timers)

// el builds an element: attributes (on* are listeners), then children
// (strings become text nodes).
function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(typeof c === "string" || typeof c === "number" ? String(c) : c);
  }
  return e;
}

function announce(text) { status.textContent = text; }

function token() { return sessionStorage.getItem(TOKEN_KEY) || ""; }

class Unauthorized extends Error {}

// api calls the API with the stored token; a 401 sends the user to the
// sign-in form.
async function api(method, path, body, accept) {
  const headers = {};
  if (token()) headers.Authorization = "Bearer " + token();
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (accept) headers.Accept = accept;
  const resp = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (resp.status === 401) throw new Unauthorized("the token was refused");
  if (accept === "text/event-stream" && resp.ok) return resp;
  const text = await resp.text();
  const data = text ? JSON.parse(text) : null;
  if (!resp.ok) throw new Error((data && data.error && data.error.message) || resp.statusText);
  return data;
}

// sse reads a text/event-stream response, calling on(type, data) per event.
async function sse(resp, on) {
  const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let end;
    while ((end = buf.indexOf("\n\n")) >= 0) {
      const frame = buf.slice(0, end);
      buf = buf.slice(end + 2);
      let type = "message", data = "";
      for (const line of frame.split("\n")) {
        if (line.startsWith("event: ")) type = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
      }
      if (data) on(type, JSON.parse(data));
    }
  }
}

function fmtCost(c) { return (c || 0).toFixed(4); }
function fmtTime(t) { return t ? new Date(t).toLocaleString() : "—"; }
function textOf(content) {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  return content.filter((p) => p.type === "text").map((p) => p.text).join("");
}

// markdown renders a small Markdown subset as elements: fenced code,
// headings, lists, paragraphs, inline code and bold.
function markdown(src) {
  const out = el("div", { class: "md" });
  const lines = src.split("\n");
  let para = [], list = null;
  const flush = () => {
    if (para.length) out.append(el("p", {}, inline(para.join(" "))));
    para = [];
    list = null;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith("```")) {
      flush();
      const code = [];
      for (i++; i < lines.length && !lines[i].startsWith("```"); i++) code.push(lines[i]);
      out.append(el("pre", {}, el("code", { text: code.join("\n") })));
      continue;
    }
    const h = /^(#{1,4})\s+(.*)$/.exec(line);
    if (h) { flush(); out.append(el("h" + Math.min(6, h[1].length + 2), {}, inline(h[2]))); continue; }
    const li = /^\s*(?:[-*]|\d+\.)\s+(.*)$/.exec(line);
    if (li) {
      if (para.length) flush();
      if (!list) { list = el("ul"); out.append(list); }
      list.append(el("li", {}, inline(li[1])));
      continue;
    }
    if (line.trim() === "") { flush(); continue; }
    list = null;
    para.push(line);
  }
  flush();
  return out;
}

function inline(s) {
  const parts = [];
  const re = /(`[^`]+`|\*\*[^*]+\*\*)/g;
  let last = 0, m;
  while ((m = re.exec(s))) {
    if (m.index > last) parts.push(s.slice(last, m.index));
    const t = m[0];
    parts.push(t.startsWith("`") ? el("code", { text: t.slice(1, -1) }) : el("strong", { text: t.slice(2, -2) }));
    last = m.index + t.length;
  }
  if (last < s.length) parts.push(s.slice(last));
  return parts;
}

function prettyArgs(args) {
  try { return JSON.stringify(JSON.parse(args), null, 2); } catch { return args || ""; }
}

// toolBox is a collapsible tool call; setProgress shows how far it has
// got while it runs, setResult fills in its result.
function toolBox(name, id, args) {
  const running = el("em", { class: "progress", text: "running…" });
  const result = el("div", { class: "result" }, running);
  const summary = el("summary", {}, `${name} `, el("span", { class: "call-id", text: id }));
  const box = el("details", { class: "tool", "data-call": id }, summary,
    el("div", {}, el("strong", { text: "Arguments" })), el("pre", {}, el("code", { text: prettyArgs(args) })),
    el("div", {}, el("strong", { text: "Result" })), result);
  box.setProgress = (message, progress, total) => {
    const amount = total > 0 ? `${progress} of ${total}` : `${progress}`;
    running.textContent = `running… ${amount}${message ? " · " + message : ""}`;
  };
  box.setResult = (content, isError) => {
    result.replaceChildren(resultView(name, content || ""));
    if (isError) {
      box.classList.add("error");
      summary.append(" ", el("span", { class: "badge error", text: "error" }));
    }
  };
  return box;
}

// resultView shows a result; the diff edit_file reports is coloured.
function resultView(name, content) {
  const pre = el("pre", { class: name === "edit_file" ? "diff" : "" });
  if (name !== "edit_file") { pre.append(el("code", { text: content })); return pre; }
  for (const line of content.split("\n")) {
    const cls = line.startsWith("+") && !line.startsWith("+++") ? "add" : line.startsWith("-") && !line.startsWith("---") ? "del" : "";
    pre.append(el("span", { class: cls, text: line + "\n" }));
  }
  return pre;
}

function setNav(page) {
  for (const a of document.querySelectorAll(".top nav a")) {
    if (a.getAttribute("href") === "#/" + page) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
}

function show(title, ...children) {
  document.title = title + " · agcore console";
  main.replaceChildren(...children);
}

function errorBox(err) { return el("div", { class: "error-box", role: "alert", text: String(err.message || err) }); }

// ---- sign in ----

function loginPage(message) {
  setNav("");
  signout.hidden = true;
  const input = el("input", { id: "token", type: "password", autocomplete: "current-password", required: true });
  const form = el("form", { class: "login", onsubmit: async (e) => {
    e.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, input.value);
    route();
  } },
  el("h1", { text: "Sign in" }),
  message ? errorBox(message) : null,
  el("p", { text: "Enter the bearer token agcore serve was started with (--token). It is kept in this tab's session storage only." }),
  el("div", { class: "row" }, el("div", {}, el("label", { for: "token", text: "API token" }), input)),
  el("button", { type: "submit", id: "signin", text: "Sign in" }));
  show("Sign in", form);
  input.focus();
}

// ---- sessions ----

// webURL returns u when it is an http or https URL, else null: only those
// become links.
function webURL(u) {
  try {
    const p = new URL(u);
    return p.protocol === "https:" || p.protocol === "http:" ? p.href : null;
  } catch { return null; }
}

// authorizationsBanner shows the MCP servers that wait for a user to
// authorize agcore, each with its authorization URL, refreshed every two
// seconds while the page is open. It returns the banner and a stop
// function.
function authorizationsBanner() {
  const banner = el("section", { class: "approvals", id: "mcp-authorizations", "aria-label": "MCP servers waiting for authorization", "aria-live": "polite", hidden: true });
  let last = "";
  const draw = (list) => {
    const key = JSON.stringify(list.authorizations);
    if (key === last) return; // unchanged: keep the focus where it is
    last = key;
    banner.hidden = list.authorizations.length === 0;
    banner.replaceChildren(el("h2", { text: "MCP authorization needed" }), ...list.authorizations.map((a) => {
      const href = webURL(a.url);
      return el("div", { class: "authorization", "data-server": a.server },
        el("p", { text: `MCP server ${a.server} needs authorization.` }),
        href ? el("a", { href, target: "_blank", rel: "noopener noreferrer", text: a.url }) : el("code", { text: a.url }),
        el("p", { class: "meta", text: `Open it in a browser on the server's machine: the authorization comes back to ${a.redirect_url}` +
          (a.expires ? `, which waits until ${fmtTime(a.expires)}.` : ".") }));
    }));
  };
  const refresh = () => api("GET", "/v1/mcp/authorizations").then(draw).catch(() => {});
  refresh();
  const timer = setInterval(refresh, 2000);
  return [banner, () => clearInterval(timer)];
}

async function sessionsPage() {
  setNav("sessions");
  const list = await api("GET", "/v1/sessions?limit=1000");
  const [authorizations, stopAuthorizations] = authorizationsBanner();
  leave = stopAuthorizations;
  const search = el("input", { id: "filter", type: "search", placeholder: "session id or agent" });
  const which = el("select", { id: "which" },
    el("option", { value: "all", text: "All" }), el("option", { value: "active", text: "Active" }), el("option", { value: "inactive", text: "Inactive" }));
  const tbody = el("tbody");
  const rows = list.sessions.map((s) => {
    const tokens = s.usage ? s.usage.total_tokens : 0;
    const tr = el("tr", { "data-id": s.id },
      el("td", {}, el("a", { href: "#/session/" + encodeURIComponent(s.id), text: s.id })),
      el("td", { text: s.agent || "default" }),
      el("td", {}, el("span", { class: "badge" + (s.active ? " running" : ""), text: s.active ? "active" : "inactive" })),
      el("td", { class: "num", text: String(s.turns || 0) }),
      el("td", { class: "num", text: String(tokens) }),
      el("td", { class: "num hide-narrow", text: fmtCost(s.cost) }),
      el("td", { class: "hide-narrow", text: fmtTime(s.updated) }));
    tr.filterText = (s.id + " " + (s.agent || "default")).toLowerCase();
    tr.active = s.active;
    return tr;
  });
  const apply = () => {
    const q = search.value.trim().toLowerCase();
    let shown = 0;
    for (const tr of rows) {
      const ok = tr.filterText.includes(q) && (which.value === "all" || (which.value === "active") === tr.active);
      tr.hidden = !ok;
      if (ok) shown++;
    }
    count.textContent = `${shown} of ${rows.length} sessions`;
  };
  search.addEventListener("input", apply);
  which.addEventListener("change", apply);
  const count = el("p", { class: "meta", "aria-live": "polite" });
  tbody.append(...rows);
  const create = el("button", { type: "button", id: "new-session", text: "New session", onclick: async () => {
    try {
      const s = await api("POST", "/v1/sessions", {});
      location.hash = "#/session/" + encodeURIComponent(s.id);
    } catch (err) { main.prepend(errorBox(err)); }
  } });
  show("Sessions",
    el("h1", { text: "Sessions" }),
    authorizations,
    el("div", { class: "row" },
      el("div", {}, el("label", { for: "filter", text: "Search" }), search),
      el("div", {}, el("label", { for: "which", text: "Show" }), which),
      el("div", {}, create)),
    count,
    el("div", { class: "table-wrap" }, el("table", {},
      el("caption", { class: "visually-hidden", text: "Sessions" }),
      el("thead", {}, el("tr", {},
        el("th", { scope: "col", text: "Session" }), el("th", { scope: "col", text: "Agent" }), el("th", { scope: "col", text: "Status" }),
        el("th", { scope: "col", class: "num", text: "Turns" }), el("th", { scope: "col", class: "num", text: "Tokens" }),
        el("th", { scope: "col", class: "num hide-narrow", text: "Cost" }), el("th", { scope: "col", class: "hide-narrow", text: "Last activity" }))),
      tbody)));
  apply();
}

// ---- one session ----

async function sessionPage(id) {
  setNav("sessions");
  const path = "/v1/sessions/" + encodeURIComponent(id);
  const meta = el("p", { class: "meta", id: "session-meta" });
  const convo = el("div", { class: "conversation", id: "conversation", "aria-live": "polite" });
  const approvals = el("section", { class: "approvals", id: "approvals", "aria-label": "Pending approvals", hidden: true });
  const questions = el("section", { class: "approvals", id: "elicitations", "aria-label": "Questions of MCP servers", hidden: true });
  const input = el("textarea", { id: "message", required: true });
  const send = el("button", { type: "submit", id: "send", text: "Send" });
  const cancel = el("button", { type: "button", id: "cancel", class: "danger", text: "Cancel turn", disabled: true });
  const errors = el("div");
  const boxes = new Map(); // call id -> toolBox
  let live = null; // the streamed reply's text node
  let stopped = false;

  const refreshMeta = async () => {
    const st = await api("GET", path);
    meta.replaceChildren(
      el("span", { class: "badge" + (st.status === "running" ? " running" : ""), id: "session-status", text: st.status }),
      ` · agent ${st.agent} · turns: ${st.status === "running" ? st.turn + 1 : st.turn} · tokens: ${st.usage.total_tokens} · cost: ${fmtCost(st.cost)}`);
    cancel.disabled = st.status !== "running";
    return st;
  };

  const refreshApprovals = async () => {
    const list = await api("GET", path + "/approvals");
    approvals.hidden = list.approvals.length === 0;
    approvals.replaceChildren(el("h2", { text: "Pending approvals" }), ...list.approvals.map((p) => {
      const answer = (allow) => async () => {
        try {
          await api("POST", path + "/approvals/" + encodeURIComponent(p.call_id), { allow, reason: allow ? "" : "denied in the console" });
          announce(`${p.tool} ${allow ? "allowed" : "denied"}`);
          await refreshApprovals();
        } catch (err) { errors.replaceChildren(errorBox(err)); }
      };
      return el("div", { class: "approval", "data-call": p.call_id },
        el("span", {}, el("strong", { text: p.tool }), ` needs ${p.permission} permission: `, el("code", { text: p.arguments || "" })),
        el("button", { type: "button", class: "allow", "aria-label": `Allow ${p.tool}`, text: "Allow", onclick: answer(true) }),
        el("button", { type: "button", class: "deny secondary", "aria-label": `Deny ${p.tool}`, text: "Deny", onclick: answer(false) }));
    }));
  };

  // A question of an MCP server, as a form: every text is the server's,
  // set as text, never as markup.
  const questionForm = (q) => {
    const inputs = (q.fields || []).map((f) => {
      const id = "q-" + q.id + "-" + f.name;
      let input;
      if (f.enum && f.enum.length) {
        input = el("select", { id, name: f.name },
          f.required ? null : el("option", { value: "", text: "" }),
          ...f.enum.map((v) => el("option", { value: String(v), text: String(v), selected: v === f.default })));
      } else if (f.type === "boolean") {
        input = el("input", { id, name: f.name, type: "checkbox", checked: f.default === true });
      } else {
        input = el("input", { id, name: f.name, type: f.type === "integer" || f.type === "number" ? "number" : "text",
          value: f.default === undefined ? undefined : String(f.default), required: f.required });
      }
      const label = el("label", { for: id, text: (f.title || f.name) + (f.description ? " (" + f.description + ")" : "") + (f.required ? " *" : "") });
      return { f, input, row: el("div", { class: "field" }, label, input) };
    });
    const content = () => {
      const out = {};
      for (const { f, input } of inputs) {
        if (f.type === "boolean" && !(f.enum && f.enum.length)) { out[f.name] = input.checked; continue; }
        const v = input.value;
        if (v === "") continue;
        out[f.name] = f.type === "integer" ? parseInt(v, 10) : f.type === "number" ? parseFloat(v) : v;
      }
      return out;
    };
    const answer = (action) => async () => {
      try {
        await api("POST", path + "/elicitations/" + encodeURIComponent(q.id),
          action === "accept" && q.mode === "form" ? { action, content: content() } : { action });
        announce(`question of ${q.server}: ${action}`);
        await refreshQuestions();
      } catch (err) { errors.replaceChildren(errorBox(err)); }
    };
    return el("div", { class: "approval elicitation", "data-elicitation": q.id },
      el("p", {}, el("strong", { text: q.server }), " asks: ", el("span", { class: "question", text: q.message })),
      q.mode === "url" ? el("p", {}, "It asks you to open: ", el("code", { text: q.url || "" })) : null,
      ...inputs.map((i) => i.row),
      el("button", { type: "button", class: "accept", "aria-label": `Accept the question of ${q.server}`, text: "Accept", onclick: answer("accept") }),
      el("button", { type: "button", class: "decline secondary", "aria-label": `Decline the question of ${q.server}`, text: "Decline", onclick: answer("decline") }));
  };

  const refreshQuestions = async () => {
    const list = await api("GET", path + "/elicitations");
    questions.hidden = list.elicitations.length === 0;
    questions.replaceChildren(el("h2", { text: "Questions of MCP servers" }), ...list.elicitations.map(questionForm));
  };

  const renderHistory = async () => {
    const h = await api("GET", path + "/history");
    boxes.clear();
    convo.replaceChildren();
    for (const m of h.messages) {
      if (m.role === "tool") {
        const box = boxes.get(m.tool_call_id);
        const text = textOf(m.content);
        if (box) box.setResult(text, /^tool \S+ (failed|panicked|timed out)|^permission denied|^interrupted/.test(text));
        continue;
      }
      const body = el("div", { class: "msg " + m.role }, el("div", { class: "who", text: m.role }));
      const text = textOf(m.content);
      if (text) body.append(markdown(text));
      for (const c of m.tool_calls || []) {
        const box = toolBox(c.name, c.id, c.arguments);
        boxes.set(c.id, box);
        body.append(box);
      }
      convo.append(body);
    }
  };

  const onEvent = (type, ev) => {
    const d = ev.data || {};
    switch (type) {
      case "text_delta":
        if (!live) {
          live = el("div", { class: "live-text" });
          convo.append(el("div", { class: "msg assistant streaming" }, el("div", { class: "who", text: "assistant" }), live));
        }
        live.textContent += d.text;
        break;
      case "tool_started": {
        const box = toolBox(d.name, d.call_id, d.arguments);
        boxes.set(d.call_id, box);
        convo.append(el("div", { class: "msg assistant" }, box));
        live = null;
        break;
      }
      case "tool_progress": {
        const box = boxes.get(d.call_id);
        if (box) box.setProgress(d.message || "", d.progress || 0, d.total || 0);
        break;
      }
      case "tool_finished": {
        const box = boxes.get(d.call_id);
        if (box) box.setResult(d.content, d.is_error);
        break;
      }
      case "approval_pending":
        refreshApprovals().catch(() => {});
        announce(`${d.tool} needs approval`);
        break;
      case "elicitation_pending":
        refreshQuestions().catch(() => {});
        announce(`${d.server} asks a question`);
        break;
      case "elicitation_answered":
        refreshQuestions().catch(() => {});
        break;
      case "error":
        errors.replaceChildren(errorBox(new Error(d.message)));
        break;
      case "turn_started":
        refreshMeta().catch(() => {});
        break;
      case "turn_ended":
        announce("turn " + d.outcome);
        break;
    }
  };

  const form = el("form", { class: "send", onsubmit: async (e) => {
    e.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    input.value = "";
    send.disabled = true;
    cancel.disabled = false;
    errors.replaceChildren();
    convo.append(el("div", { class: "msg user" }, el("div", { class: "who", text: "user" }), markdown(text)));
    live = null;
    try {
      const resp = await api("POST", path + "/turns", { input: text }, "text/event-stream");
      await sse(resp, onEvent);
    } catch (err) {
      if (err instanceof Unauthorized) return loginPage(err.message);
      errors.replaceChildren(errorBox(err));
    }
    if (stopped) return;
    send.disabled = false;
    live = null;
    await renderHistory();
    await refreshMeta();
    await refreshApprovals();
    await refreshQuestions();
  } },
  el("label", { for: "message", text: "Message" }), input,
  el("div", { class: "buttons" }, send, cancel));

  cancel.addEventListener("click", async () => {
    try {
      await api("POST", path + "/cancel");
      announce("cancel requested");
    } catch (err) { errors.replaceChildren(errorBox(err)); }
  });

  show("Session " + id,
    el("h1", {}, "Session ", el("code", { text: id })),
    meta, el("p", { class: "links" }, el("a", { href: "#/sessions", text: "← All sessions" }), " · ",
      el("a", { href: "#/journal/" + encodeURIComponent(id), id: "journal-link", text: "Journal timeline" })),
    approvals, questions, convo, errors, form);
  await refreshMeta();
  await renderHistory();
  await refreshApprovals();
  await refreshQuestions();
  leave = () => { stopped = true; };
}

// ---- the journal as a timeline ----

// describe summarises a journal event in one line, as agcore sessions
// replay does; turns are numbered from 1.
function describe(type, d) {
  const turn = (t) => `turn ${(t || 0) + 1}`;
  switch (type) {
    case "activated": return `activation ${d.activation} on ${d.node || "local"}`;
    case "user_message": return `${turn(d.turn)}: ${textOf(d.message && d.message.content)}`;
    case "assistant_message": {
      const calls = (d.message.tool_calls || []).map((c) => c.name).join(", ");
      const text = textOf(d.message.content);
      return `${turn(d.turn)}${text ? ": " + text : ""}${calls ? " → " + calls : ""} · ${(d.usage || {}).total_tokens || 0} tokens`;
    }
    case "tool_call_started": return `${d.name} ${d.arguments} (${d.call_id})`;
    case "tool_result": return `${d.is_error ? "✗" : "✓"} ${d.name} (${d.call_id}): ${(d.content || "").slice(0, 120)}`;
    case "turn_completed": return `${turn(d.turn)} ${d.outcome}${d.reason ? ": " + d.reason : ""} · ${d.round_trips} round trips`;
    case "turn_cancelled": return `${turn(d.turn)} cancelled${d.reason ? ": " + d.reason : ""}`;
    case "approval_requested": return `${d.tool} (${d.call_id}) asks for approval${d.reason ? ": " + d.reason : ""}`;
    case "approval_granted": return `${d.call_id} granted by ${d.by}`;
    case "approval_denied": return `${d.call_id} denied by ${d.by}: ${d.reason}`;
    case "elicitation_requested": return `${d.server} asks${d.call_id ? " (" + d.call_id + ")" : ""}: ${d.message}${(d.fields || []).length ? " · fields " + d.fields.join(", ") : ""}`;
    case "elicitation_resolved": return `question ${d.id}: ${d.action} by ${d.by}${(d.fields || []).length ? " · fields " + d.fields.join(", ") : ""}${d.reason ? ": " + d.reason : ""}`;
    case "compacted": return `${d.kind} compaction: ${d.tokens_before} → ${d.tokens_after} tokens`;
    default: return JSON.stringify(d).slice(0, 160);
  }
}

async function journalPage(id) {
  setNav("sessions");
  const j = await api("GET", "/v1/sessions/" + encodeURIComponent(id) + "/journal");
  const list = el("ol", { class: "timeline", id: "timeline" }, ...j.entries.map((e) => el("li", { class: "entry " + e.type },
    el("span", { class: "when", text: new Date(e.at).toLocaleTimeString() }), " ",
    el("span", { class: "seq", text: "#" + e.seq }), " ",
    el("strong", { class: "type", text: e.type }), " ",
    el("span", { text: describe(e.type, e.data || {}) }),
    e.data && e.data.trace_id ? el("div", { class: "trace" }, "trace ", el("code", { text: e.data.trace_id }), " span ", el("code", { text: e.data.span_id })) : null)));
  show("Journal " + id,
    el("h1", {}, "Journal of ", el("code", { text: id })),
    el("p", {}, el("a", { href: "#/session/" + encodeURIComponent(id), text: "← Back to the session" })),
    el("p", { class: "meta", text: `${j.entries.length} entries, oldest first` }),
    list);
}

// ---- tools ----

async function toolsPage() {
  setNav("tools");
  const list = await api("GET", "/v1/tools");
  const num = (v) => el("td", { class: "num", text: String(v) });
  show("Tools",
    el("h1", { text: "Tools" }),
    el("p", { class: "meta", text: "Every tool agents may call, where it comes from, and its calls since the server started." }),
    el("div", { class: "table-wrap" }, el("table", { id: "tools" },
      el("caption", { class: "visually-hidden", text: "Tools and their statistics" }),
      el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "Tool" }), el("th", { scope: "col", text: "Source" }),
        el("th", { scope: "col", class: "num", text: "Calls" }), el("th", { scope: "col", class: "num", text: "Errors" }),
        el("th", { scope: "col", class: "num hide-narrow", text: "Timeouts" }), el("th", { scope: "col", class: "num hide-narrow", text: "Mean ms" }),
        el("th", { scope: "col", class: "num hide-narrow", text: "Max ms" }))),
      el("tbody", {}, ...list.tools.map((t) => el("tr", { "data-tool": t.name },
        el("td", {}, el("code", { text: t.name })), el("td", {}, el("span", { class: "badge", text: t.source })),
        num(t.calls), el("td", { class: "num" + (t.errors ? " error-text" : ""), text: String(t.errors) }),
        el("td", { class: "num hide-narrow", text: String(t.timeouts) }),
        el("td", { class: "num hide-narrow", text: t.mean_ms.toFixed(2) }), el("td", { class: "num hide-narrow", text: t.max_ms.toFixed(2) })))))));
}

// ---- usage ----

// usageRanges are the periods the Usage page offers: how far back, and the
// width of a bucket.
const usageRanges = [
  { id: "24h", label: "Last 24 hours, by hour", hours: 24, bucket: "1h" },
  { id: "7d-h", label: "Last 7 days, by hour", hours: 7 * 24, bucket: "1h" },
  { id: "7d", label: "Last 7 days, by day", hours: 7 * 24, bucket: "1d" },
  { id: "30d", label: "Last 30 days, by day", hours: 30 * 24, bucket: "1d" },
];

// usagePage charts the usage and cost over time that the server reads from
// the journals, and lists the totals by model since the server started.
async function usagePage() {
  setNav("usage");
  const byModel = el("tbody");
  const chart = el("div", { id: "usage-chart" });
  const data = el("tbody");
  const range = el("select", { id: "usage-range" },
    ...usageRanges.map((r) => el("option", { value: r.id, selected: r.id === "7d", text: r.label })));
  let history = null;
  const redraw = () => { if (history) chart.replaceChildren(usageChart(history, Math.max(300, chart.clientWidth || 640))); };
  const load = async () => {
    const r = usageRanges.find((x) => x.id === range.value);
    const since = new Date(Date.now() - r.hours * 3600 * 1000).toISOString().replace(/\.\d+Z$/, "Z");
    try {
      history = await api("GET", `/v1/usage/history?bucket=${r.bucket}&since=${encodeURIComponent(since)}`);
    } catch (err) {
      if (err instanceof Unauthorized) throw err;
      chart.replaceChildren(errorBox(err));
      return;
    }
    redraw();
    data.replaceChildren(...history.buckets.map((b) =>
      el("tr", { "data-start": b.start }, el("td", { text: bucketLabel(b.start, history.bucket, true) }),
        el("td", { class: "num", text: String(b.turns) }), el("td", { class: "num", text: String(b.usage.prompt_tokens) }),
        el("td", { class: "num", text: String(b.usage.completion_tokens) }), el("td", { class: "num", text: fmtCost(b.cost) }))));
    announce(`Usage of ${r.label.toLowerCase()} loaded`);
  };
  range.addEventListener("change", () => load().catch(() => {}));
  const snap = await api("GET", "/v1/usage");
  byModel.replaceChildren(...Object.entries(snap.models || {}).sort().map(([model, u]) =>
    el("tr", {}, el("td", { text: model }), el("td", { class: "num", text: String(u.calls) }),
      el("td", { class: "num", text: String(u.usage.prompt_tokens) }), el("td", { class: "num", text: String(u.usage.completion_tokens) }),
      el("td", { class: "num", text: fmtCost(u.cost) }))));
  const head = (...names) => el("thead", {}, el("tr", {}, ...names.map((n, i) =>
    el("th", { scope: "col", class: i ? "num" : undefined, text: n }))));
  show("Usage",
    el("h1", { text: "Usage and cost" }),
    el("p", { class: "meta", text: "Tokens, cost and turns over time, read from the journals of every session and sub-agent." }),
    el("div", { class: "row" }, el("div", {}, el("label", { for: "usage-range", text: "Period" }), range)),
    chart,
    el("details", { class: "chart-data" }, el("summary", { text: "The chart's data as a table" }),
      el("div", { class: "table-wrap" }, el("table", { id: "usage-data" },
        el("caption", { class: "visually-hidden", text: "Usage and cost by time" }),
        head("Time", "Turns", "Prompt tokens", "Completion tokens", "Cost"), data))),
    el("h2", { text: "By model, since the server started" }),
    el("div", { class: "table-wrap" }, el("table", {},
      el("caption", { class: "visually-hidden", text: "Usage by model" }),
      head("Model", "Calls", "Prompt tokens", "Completion tokens", "Cost"), byModel)));
  await load();
  window.addEventListener("resize", redraw);
  leave = () => window.removeEventListener("resize", redraw);
}

// bucketLabel names the bucket that starts at iso, in local time: a date for
// a day, an hour (with its date when long) for an hour.
function bucketLabel(iso, bucket, long) {
  const d = new Date(iso);
  const day = d.toLocaleDateString(undefined, { month: "short", day: "numeric" });
  if (bucket === "1d") return day;
  const hour = d.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
  return long || d.getHours() === 0 ? `${day} ${hour}` : hour;
}

// niceMax rounds v up to 1, 2 or 5 times a power of ten, so that the axis
// reads in round numbers.
function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

function fmtAxis(v, cost) {
  if (cost) return v >= 1 ? v.toFixed(2) : v.toPrecision(2).replace(/0+$/, "").replace(/\.$/, "");
  if (v >= 1e6) return (v / 1e6).toFixed(v % 1e6 ? 1 : 0) + "M";
  if (v >= 1e3) return (v / 1e3).toFixed(v % 1e3 ? 1 : 0) + "k";
  return String(v);
}

// usageChart draws a history as two bar charts in one SVG, width pixels
// wide: tokens per bucket (prompt and completion stacked) and cost per
// bucket, with the times below. Each bar carries its numbers in a <title>;
// the SVG's description sums the period up.
function usageChart(h, width) {
  const ns = "http://www.w3.org/2000/svg";
  const svgEl = (tag, attrs = {}, text) => {
    const e = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const b = h.buckets;
  const left = 56, right = 12, panel = 130, gap = 34, top = 26;
  const height = top + panel + gap + panel + 40;
  const plotW = width - left - right;
  const step = plotW / Math.max(1, b.length);
  const barW = Math.max(1, step * 0.8);
  const totals = b.reduce((a, x) => ({ prompt: a.prompt + x.usage.prompt_tokens, completion: a.completion + x.usage.completion_tokens,
    cost: a.cost + x.cost, turns: a.turns + x.turns }), { prompt: 0, completion: 0, cost: 0, turns: 0 });
  const svg = svgEl("svg", { class: "chart", width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
    "aria-labelledby": "usage-chart-title usage-chart-desc" });
  const from = bucketLabel(b[0].start, h.bucket, true), to = bucketLabel(b[b.length - 1].start, h.bucket, true);
  svg.append(svgEl("title", { id: "usage-chart-title" }, `Tokens and cost per ${h.bucket === "1d" ? "day" : "hour"}, ${from} to ${to}`),
    svgEl("desc", { id: "usage-chart-desc" }, `${b.length} buckets; in all ${totals.turns} turns, ${totals.prompt} prompt tokens, ` +
      `${totals.completion} completion tokens, cost ${fmtCost(totals.cost)}. The table below the chart lists every bucket.`));
  const drawPanel = (y0, title, max, cost) => {
    svg.append(svgEl("text", { x: left, y: y0 - 8, class: "chart-title" }, title));
    for (const f of [0, 0.5, 1]) {
      const y = y0 + panel - f * panel;
      svg.append(svgEl("line", { x1: left, x2: width - right, y1: y, y2: y, class: f ? "grid" : "axis" }),
        svgEl("text", { x: left - 6, y: y + 4, class: "tick", "text-anchor": "end" }, fmtAxis(max * f, cost)));
    }
  };
  const tokMax = niceMax(Math.max(...b.map((x) => x.usage.prompt_tokens + x.usage.completion_tokens)));
  const costMax = niceMax(Math.max(...b.map((x) => x.cost)));
  const costTop = top + panel + gap;
  drawPanel(top, "Tokens", tokMax, false);
  drawPanel(costTop, "Cost", costMax, true);
  b.forEach((x, i) => {
    const bx = left + i * step + (step - barW) / 2;
    const label = `${bucketLabel(x.start, h.bucket, true)}: ${x.turns} turns, ${x.usage.prompt_tokens} prompt and ` +
      `${x.usage.completion_tokens} completion tokens, cost ${fmtCost(x.cost)}`;
    const g = svgEl("g", { class: "bar", "data-start": x.start });
    g.append(svgEl("title", {}, label));
    const ph = (x.usage.prompt_tokens / tokMax) * panel, ch = (x.usage.completion_tokens / tokMax) * panel;
    if (ph > 0) g.append(svgEl("rect", { class: "prompt", x: bx, width: barW, y: top + panel - ph, height: ph }));
    if (ch > 0) g.append(svgEl("rect", { class: "completion", x: bx, width: barW, y: top + panel - ph - ch, height: ch }));
    const kh = (x.cost / costMax) * panel;
    if (kh > 0) g.append(svgEl("rect", { class: "cost", x: bx, width: barW, y: costTop + panel - kh, height: kh }));
    // An invisible full-height target, so that the title shows over empty
    // buckets too.
    g.append(svgEl("rect", { class: "hit", x: left + i * step, width: step, y: top, height: costTop + panel - top }));
    svg.append(g);
  });
  // Time labels: as many as fit, evenly spaced.
  const every = Math.max(1, Math.ceil(b.length / Math.max(1, Math.floor(plotW / 90))));
  for (let i = 0; i < b.length; i += every) {
    const x = left + i * step + step / 2;
    svg.append(svgEl("line", { x1: x, x2: x, y1: costTop + panel, y2: costTop + panel + 4, class: "axis" }),
      svgEl("text", { x, y: costTop + panel + 18, class: "tick", "text-anchor": "middle" }, bucketLabel(b[i].start, h.bucket, false)));
  }
  const legend = svgEl("g", { class: "legend", transform: `translate(${width - right - 135},${top - 20})` });
  legend.append(svgEl("rect", { class: "prompt", x: 0, y: 0, width: 10, height: 10 }), svgEl("text", { x: 14, y: 9, class: "tick" }, "prompt"),
    svgEl("rect", { class: "completion", x: 60, y: 0, width: 10, height: 10 }), svgEl("text", { x: 74, y: 9, class: "tick" }, "completion"));
  svg.append(legend);
  return svg;
}

// ---- actor tree ----

// sessionNode renders one session of the tree, its calls in flight and its
// sub-agents, nested.
function sessionNode(n) {
  const calls = [];
  if (n.model_call) calls.push(el("li", { class: "call" }, el("span", { class: "badge running", text: "model call" })));
  for (const c of n.tool_calls) {
    calls.push(el("li", { class: "call", "data-call": c.id }, el("span", { class: "badge running", text: "tool" }), " ",
      el("code", { text: c.name }), " ", el("span", { class: "call-id", text: c.id }),
      c.sub_agent ? el("span", {}, " → ", el("code", { text: c.sub_agent })) : null));
  }
  const facts = [n.agent ? "agent " + n.agent : "", n.state === "running" ? "turn " + (n.turn + 1) : "",
    n.queued ? n.queued + " queued" : "", n.approvals ? n.approvals + " awaiting approval" : "",
    "restarts " + n.restarts].filter(Boolean).join(" · ");
  return el("li", { class: "node", "data-session": n.id, "data-state": n.state },
    el("div", { class: "node-head" },
      el("a", { href: "#/session/" + encodeURIComponent(n.id) }, el("code", { text: n.id })), " ",
      el("span", { class: "badge " + (n.state === "running" ? "running" : n.state === "stopping" ? "error" : ""), text: n.state }),
      el("span", { class: "meta-inline", text: " " + facts })),
    calls.length ? el("ul", { class: "calls", "aria-label": "In flight in " + n.id }, ...calls) : null,
    n.sub_agents.length ? el("ul", { class: "tree", "aria-label": "Sub-agents of " + n.id }, ...n.sub_agents.map(sessionNode)) : null);
}

async function treePage() {
  setNav("tree");
  const body = el("div", { id: "tree" });
  const stamp = el("p", { class: "meta", "aria-live": "off" });
  const live = el("input", { id: "live", type: "checkbox", checked: true });
  let last = "";
  const draw = (t) => {
    stamp.textContent = "Snapshot at " + fmtTime(t.at) + (live.checked ? "; refreshed every 2 seconds." : "; refresh paused.");
    const key = JSON.stringify({ ...t, at: "" });
    if (key === last) return; // unchanged: keep the focus where it is
    last = key;
    const running = t.sessions.filter((s) => s.state === "running").length;
    body.replaceChildren(
      el("h2", { text: `Sessions (${t.sessions.length} active, ${running} running a turn)` }),
      t.sessions.length ? el("ul", { class: "tree", "aria-label": "Active sessions" }, ...t.sessions.map(sessionNode))
        : el("p", { text: "No session actor runs." }),
      el("h2", { text: "Services" }),
      el("div", { class: "table-wrap" }, el("table", { id: "services" },
        el("caption", { class: "visually-hidden", text: "Service actors" }),
        el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "Actor" }), el("th", { scope: "col", text: "State" }),
          el("th", { scope: "col", class: "num", text: "In flight" }), el("th", { scope: "col", class: "num", text: "Restarts" }))),
        el("tbody", {}, ...t.services.map((v) => el("tr", { "data-service": v.name },
          el("td", {}, el("code", { text: v.name })),
          el("td", {}, el("span", { class: "badge" + (v.state === "failed" || v.state === "backoff" ? " error" : ""), text: v.state }),
            v.error ? el("div", { class: "error-text", text: v.error }) : null),
          el("td", { class: "num", text: String(v.in_flight) }), el("td", { class: "num", text: String(v.restarts) })))))),
      el("h2", { text: `Passivated (${t.passivated.length}${t.passivated_more ? "+" : ""})` }),
      t.passivated.length ? el("ul", { class: "passivated", "aria-label": "Passivated sessions" },
        ...t.passivated.map((id) => el("li", { "data-session": id }, el("a", { href: "#/session/" + encodeURIComponent(id) }, el("code", { text: id })))))
        : el("p", { text: "None." }));
  };
  show("Actor tree",
    el("h1", { text: "Live actor tree" }),
    el("p", { class: "meta", text: "The runtime's supervision tree: sessions with their calls in flight and sub-agents, and the service actors, with restarts by their supervisor." }),
    el("div", { class: "row" }, el("div", { class: "check" }, el("label", { for: "live" }, live, " Refresh live"))),
    stamp, body);
  draw(await api("GET", "/v1/runtime/tree"));
  const timer = setInterval(() => {
    if (live.checked) api("GET", "/v1/runtime/tree").then(draw).catch((err) => body.replaceChildren(errorBox(err)));
  }, 2000);
  leave = () => clearInterval(timer);
}

// ---- schedules ----

// hasSchedules asks whether the server keeps schedules: the API answers
// 404 when it does not.
async function hasSchedules() {
  const headers = token() ? { Authorization: "Bearer " + token() } : {};
  const resp = await fetch("/v1/schedules", { headers });
  if (resp.status === 401) throw new Unauthorized("the token was refused");
  return resp.ok;
}

function lastFire(sc) {
  const f = sc.fires && sc.fires.length ? sc.fires[sc.fires.length - 1] : null;
  if (!f) return el("span", { text: "—" });
  const bad = f.outcome && f.outcome !== "completed";
  return el("span", { class: bad ? "error-text" : "" }, fmtTime(f.fired_at) + " · " + (f.outcome || f.status),
    f.session ? el("span", {}, " · ", el("a", { href: "#/session/" + encodeURIComponent(f.session) }, el("code", { text: f.session }))) : null);
}

async function schedulesPage() {
  setNav("schedules");
  if (!(await hasSchedules())) {
    show("Schedules", el("h1", { text: "Schedules" }), el("p", { text: "This server keeps no schedules (it runs without a data directory)." }));
    return;
  }
  const list = el("div", { id: "schedules" });
  const formError = el("div");
  const field = (id, label, attrs = {}) => el("div", {}, el("label", { for: id, text: label }), el("input", { id, name: id, ...attrs }));
  const load = async () => {
    const { schedules } = await api("GET", "/v1/schedules");
    const full = await Promise.all(schedules.map((sc) => api("GET", "/v1/schedules/" + encodeURIComponent(sc.id)).catch(() => sc)));
    list.replaceChildren(full.length === 0 ? el("p", { text: "No schedules yet." }) :
      el("div", { class: "table-wrap" }, el("table", {},
        el("caption", { class: "visually-hidden", text: "Schedules" }),
        el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "Schedule" }), el("th", { scope: "col", text: "When" }),
          el("th", { scope: "col", text: "State" }), el("th", { scope: "col", text: "Next fire" }),
          el("th", { scope: "col", class: "num hide-narrow", text: "Runs" }), el("th", { scope: "col", class: "hide-narrow", text: "Last fire" }),
          el("th", { scope: "col", text: "Actions" }))),
        el("tbody", {}, ...full.map((sc) => el("tr", { "data-schedule": sc.id },
          el("td", {}, el("code", { text: sc.id }), sc.name ? el("div", { class: "meta-inline", text: sc.name }) : null,
            el("div", { class: "prompt", text: sc.prompt })),
          el("td", {}, el("code", { text: sc.expr }), sc.time_zone ? " " + sc.time_zone : ""),
          el("td", {}, el("span", { class: "badge" + (sc.state === "active" ? " running" : ""), text: sc.state }),
            sc.end_reason ? el("div", { class: "meta-inline", text: sc.end_reason }) : null),
          el("td", { class: "next", text: sc.next_fire ? fmtTime(sc.next_fire) : "—" }),
          el("td", { class: "num hide-narrow", text: String(sc.runs) }),
          el("td", { class: "hide-narrow" }, lastFire(sc)),
          el("td", {}, el("button", { type: "button", class: "danger", "data-delete": sc.id, "aria-label": "Delete schedule " + sc.id,
            onclick: async (e) => {
              e.target.disabled = true;
              try {
                await api("DELETE", "/v1/schedules/" + encodeURIComponent(sc.id));
                announce("Schedule " + sc.id + " deleted");
                await load();
              } catch (err) { e.target.disabled = false; formError.replaceChildren(errorBox(err)); }
            } }, "Delete"))))))));
  };
  const form = el("form", { class: "schedule-form", onsubmit: async (e) => {
    e.preventDefault();
    const f = new FormData(form);
    const req = { expr: f.get("expr").trim(), prompt: f.get("prompt").trim() };
    for (const k of ["id", "name", "time_zone", "session"]) if (f.get(k).trim()) req[k] = f.get(k).trim();
    try {
      const sc = await api("POST", "/v1/schedules", req);
      formError.replaceChildren();
      form.reset();
      announce("Schedule " + sc.id + " created");
      await load();
    } catch (err) {
      if (err instanceof Unauthorized) throw err;
      formError.replaceChildren(errorBox(err));
    }
  } },
  el("h2", { text: "Add a schedule" }),
  el("div", { class: "row" },
    field("expr", "Cron expression", { required: true, placeholder: "0 9 * * 1-5 or @every 1h" }),
    field("time_zone", "Time zone", { placeholder: "UTC" }),
    field("id", "Id (optional)"), field("name", "Name (optional)"),
    field("session", "Session (optional)", { placeholder: "a fresh one per run" })),
  el("div", {}, el("label", { for: "prompt", text: "Prompt" }), el("textarea", { id: "prompt", name: "prompt", required: true, rows: 3 })),
  formError,
  el("div", { class: "buttons" }, el("button", { type: "submit", id: "add-schedule", text: "Add schedule" })));
  show("Schedules",
    el("h1", { text: "Schedules" }),
    el("p", { class: "meta", text: "Cron schedules that submit a prompt to a session at each fire time, with their next fire, runs and last fire." }),
    list, form);
  await load();
}

// ---- routing ----

async function route() {
  leave();
  leave = () => {};
  const hash = location.hash || "#/sessions";
  try {
    signout.hidden = !token();
    schedulesNav.hidden = !(await hasSchedules());
    if (hash.startsWith("#/journal/")) await journalPage(decodeURIComponent(hash.slice("#/journal/".length)));
    else if (hash.startsWith("#/session/")) await sessionPage(decodeURIComponent(hash.slice("#/session/".length)));
    else if (hash === "#/usage") await usagePage();
    else if (hash === "#/tools") await toolsPage();
    else if (hash === "#/tree") await treePage();
    else if (hash === "#/schedules") await schedulesPage();
    else await sessionsPage();
    // A new page takes the focus, unless the user is already in it (typing
    // while it loaded).
    if (!main.contains(document.activeElement)) main.focus({ preventScroll: true });
  } catch (err) {
    if (err instanceof Unauthorized) loginPage(token() ? err.message : "");
    else show("Error", el("h1", { text: "Something went wrong" }), errorBox(err));
  }
}

signout.addEventListener("click", () => {
  sessionStorage.removeItem(TOKEN_KEY);
  loginPage("");
});
window.addEventListener("hashchange", route);
route();
