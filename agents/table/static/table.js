// The browser table: shows the server's view of the game and sends the human's moves. The server is the
// authority (it checks every move); this page keeps nothing of its own.
"use strict";

const COLOURS = ["#ffd97a", "#8fd3ff", "#ff9f9f", "#b6f29a", "#e3a6ff", "#ffc28a", "#9ff2e0", "#f2f2f2"];
const $ = (id) => document.getElementById(id);
let agents = ["greedy"];
let current = null;

// The session's token, written into the page by the server: every API call carries it (guard.py).
const TOKEN = document.querySelector('meta[name="quiddler-token"]').content;

async function api(path, body) {
  const headers = {"X-Quiddler-Token": TOKEN};
  const options = body === undefined ? {headers} : {
    method: "POST", headers: {...headers, "Content-Type": "application/json"}, body: JSON.stringify(body),
  };
  const response = await fetch(path, options);
  const data = await response.json();
  $("message").textContent = data.error || "";
  return data;
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v; else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const child of children) node.append(child);
  return node;
}

function card(face, points, mini = false) {
  const node = el("div", {class: "card" + (mini ? " mini" : ""), "data-face": face}, face);
  if (points !== undefined) node.append(el("small", {}, String(points)));
  return node;
}

// -- the new-game form ------------------------------------------------------------------------------

function seatRow(spec) {
  // A seat takes any agent spec: the list offers the registry's and the shipped policies; policy:PATH is typed.
  const input = el("input", {class: "seat-spec", list: "agent-specs", value: spec, "aria-label": "seat"});
  const row = el("div", {class: "seat-row"}, input,
    el("button", {type: "button", class: "remove-seat", onclick: () => { if ($("seat-list").children.length > 2) row.remove(); }}, "×"));
  return row;
}

async function buildForm() {
  agents = (await api("/api/agents")).agents;
  document.body.append(el("datalist", {id: "agent-specs"}, ...["human", ...agents].map((a) => el("option", {value: a}))));
  $("seat-list").append(seatRow("human"), seatRow("greedy"));
  for (const rule of (await api("/api/rules")).rules) {
    let input;
    if (rule.choices) {
      input = el("select", {name: rule.name});
      for (const c of rule.choices) input.append(el("option", {value: JSON.stringify(c)}, String(c)));
      input.value = JSON.stringify(rule.default);
    } else {
      const shown = Array.isArray(rule.default) ? rule.default.join(" ") : (rule.default === null ? "" : String(rule.default));
      input = el("input", {name: rule.name, value: shown, "data-kind": rule.kind || ""});
    }
    $("rule-list").append(el("label", {title: rule.help}, rule.name + " ", input));
  }
  await refreshSaved();
}

function formRules() {
  const rules = {};
  for (const input of $("rule-list").querySelectorAll("[name]")) {
    if (input.tagName === "SELECT") { rules[input.name] = JSON.parse(input.value); continue; }
    const text = input.value.trim();
    const kind = input.dataset.kind;
    if (kind === "ints") rules[input.name] = text.split(/[\s,]+/).filter(Boolean).map(Number);
    else if (kind === "texts") rules[input.name] = text.split(/\s+/).filter(Boolean);
    else if (kind === "int") rules[input.name] = Number(text);
    else if (kind === "int_or_none") rules[input.name] = text === "" || text === "none" ? null : Number(text);
    else rules[input.name] = text;
  }
  return rules;
}

async function refreshSaved() {
  const saved = await api("/api/saved");
  const select = $("open-name");
  select.replaceChildren(...saved.games.map((g) => el("option", {value: g}, g)));
}

// -- the table ------------------------------------------------------------------------------------

function render(view) {
  current = view;
  $("table").hidden = !view;
  $("results").hidden = !view || !view.results.length;
  if (!view) return;
  $("table").dataset.played = String(view.played);  // how many moves this render shows (tests wait on it)
  const mover = view.to_move;
  $("status").textContent = view.game_over
    ? `Game over. ${view.winners.map((w) => view.seats[w].label + (w === view.human ? " (you)" : "")).join(", ")} won.`
    : `Round ${view.round} of ${view.rounds}, ${view.hand_size} cards. ` +
      (mover === view.human ? `Your move (${view.phase}).` : `${view.seats[mover].label} is to move.`) +
      (view.final_turn ? " Someone went out: last turns." : "");
  $("seats").replaceChildren(...view.seats.map((s) => {
    const box = el("div", {class: "seat" + (s.seat === mover ? " to-move" : ""), "data-seat": String(s.seat)},
      el("div", {class: "name"}, `${s.label}${s.seat === view.human ? " (you)" : ""}`),
      el("div", {class: "small"}, `total ${s.total} · ${s.cards} cards${s.went_out ? " · went out" : ""}`));
    if (s.taken.length) box.append(el("div", {class: "small"}, "took: "), el("div", {class: "cards"}, ...s.taken.map((c) => card(c.face, c.points, true))));
    if (s.laid) box.append(el("div", {class: "small laid"}, "laid: " + (s.laid.words.join(" ") || "-") + (s.laid.unused.length ? ` (unused ${s.laid.unused.join(" ")})` : "")));
    return box;
  }));
  $("draw-pile").textContent = view.game_over ? "" : String(view.draw_pile);
  $("discard-top").replaceChildren(...(view.discard_top ? [view.discard_top.face, el("small", {}, String(view.discard_top.points))] : ["-"]));
  $("hand").replaceChildren(...(view.hand || []).map((c) => card(c.face, c.points)));
  $("best").textContent = view.best_layout
    ? `Best layout: ${view.best_layout.words.join(" ") || "-"}${view.best_layout.unused.length ? ", unused " + view.best_layout.unused.join(" ") : ""} (${view.best_layout.score} points)`
    : "";
  $("candidates").replaceChildren(...(view.candidates || []).map((c, k) =>
    el("div", {}, `lay ${k + 1}: ${c.words.join(" ") || "-"}${c.unused.length ? ", unused " + c.unused.join(" ") : ""} (${c.score})`)));
  $("moves").replaceChildren(...(view.moves || []).map((m) =>
    el("button", {type: "button", class: "move", "data-action": String(m.action), onclick: () => play(m.action)}, m.name)));
  $("log").replaceChildren(...view.log.map((m) => el("li", {}, `r${m.round} ${view.seats[m.seat].label}: ${m.move}`)));
  renderResults(view);
}

function renderResults(view) {
  if (!view.results.length) return;
  const last = view.results[view.results.length - 1];
  $("results-title").textContent = `Round ${view.results.length} results`;
  const rows = last.map((r) => el("tr", {},
    el("td", {}, view.seats[r.player].label + (r.went_out ? " (out)" : "")),
    el("td", {}, r.spelled.join(" ") || "-"),
    el("td", {}, r.unused.join(" ") || "-"),
    el("td", {}, Object.entries(r.bonuses).map(([k, v]) => `${k.replace("_", " ")} +${v}`).join(", ") || "-"),
    el("td", {}, String(r.round_score)), el("td", {}, String(r.total))));
  $("round-result").replaceChildren(el("table", {id: "round-table"},
    el("tr", {}, ...["player", "words", "unused", "bonuses", "round", "total"].map((h) => el("th", {}, h))), ...rows));
  drawChart(view);
}

function drawChart(view) {
  const svg = $("chart");
  const history = view.totals_history;
  const top = Math.max(10, ...history.flat());
  const x = (i) => 30 + (380 * i) / Math.max(1, view.rounds);
  const y = (v) => 185 - (170 * v) / top;
  const ns = "http://www.w3.org/2000/svg";
  svg.replaceChildren();
  view.seats.forEach((s, p) => {
    const line = document.createElementNS(ns, "polyline");
    line.setAttribute("points", history.map((t, i) => `${x(i)},${y(t[p])}`).join(" "));
    line.setAttribute("fill", "none");
    line.setAttribute("stroke", COLOURS[p % COLOURS.length]);
    line.setAttribute("stroke-width", "2.5");
    svg.append(line);
    const label = document.createElementNS(ns, "text");
    label.setAttribute("x", "32"); label.setAttribute("y", String(12 + 12 * p));
    label.setAttribute("fill", COLOURS[p % COLOURS.length]);
    label.textContent = `${s.label}: ${history[history.length - 1][p]}`;
    svg.append(label);
  });
  $("totals").textContent = view.seats.map((s) => `${s.label} ${s.total}`).join(" · ");
}

async function play(action) {
  const data = await api("/api/move", {seat: current.human, action});
  if (data.game) render(data.game);
}

async function start() {
  const seats = [...$("seat-list").querySelectorAll(".seat-spec")].map((s) => s.value.trim());
  const data = await api("/api/new", {seats, rules: formRules(), seed: Number($("seed").value) || 0});
  if (data.game) render(data.game);
}

$("add-seat").addEventListener("click", () => { if ($("seat-list").children.length < 8) $("seat-list").append(seatRow("greedy")); });
$("start").addEventListener("click", start);
$("save").addEventListener("click", async () => { await api("/api/save", {name: $("save-name").value.trim()}); await refreshSaved(); });
$("open").addEventListener("click", async () => { const data = await api("/api/open", {name: $("open-name").value}); if (data.game) render(data.game); });

buildForm().then(async () => { const data = await api("/api/state"); render(data.game); });
