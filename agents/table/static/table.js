// The browser table: shows the server's view of the game as cards and sends the human's moves. The server is
// the authority (it checks every move); this page keeps nothing of the game of its own. The bots' moves come
// back all at once with the human's move; the page plays them back one at a time (the "Bots' pace").
"use strict";

const COLOURS = ["#ffd97a", "#8fd3ff", "#ff9f9f", "#b6f29a", "#e3a6ff", "#ffc28a", "#9ff2e0", "#f2f2f2"];
const CUSTOM = "__custom";  // the seat list's "another spec" entry: a text box takes the spec
const $ = (id) => document.getElementById(id);
let agents = ["greedy"];
let about = {};
let levels = [];  // the shipped levels (the server's LEVELS): a bot's seat may find its words in one
let leveled = [];  // the bots that take a level
let current = null;  // the view on the page
let shown = null;  // how many moves the page has shown (its log and pacing follow it)
let busy = false;  // a request or a playback is under way: the cards do not take clicks
let selected = null;  // the face picked in the hand to discard

// The session's token, written into the page by the server: every API call carries it (guard.py).
const TOKEN = document.querySelector('meta[name="quiddler-token"]').content;

async function api(path, body) {
  const headers = {"X-Quiddler-Token": TOKEN};
  const options = body === undefined ? {headers} : {
    method: "POST", headers: {...headers, "Content-Type": "application/json"}, body: JSON.stringify(body),
  };
  let data;
  try {
    const response = await fetch(path, options);
    data = await response.json();
  } catch (exc) {
    data = {error: `the table server did not answer (${exc.message}); is quiddler-play still running?`};
  }
  $("message").textContent = data.error || "";  // the whole reason, however long (the CSS wraps it)
  if (data.error) $("message").scrollIntoView({block: "nearest"});  // seen, even from the foot of a long form
  return data;
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v; else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) node.setAttribute(k, v === true ? "" : v);
  }
  for (const child of children) node.append(child);
  return node;
}

const points = (face) => (current && current.points ? current.points[face] : undefined);

function card(face, extra = "", tag = "div") {
  const node = el(tag, {class: "card " + extra, "data-face": face}, el("span", {class: "face"}, face));
  const p = points(face);
  if (p !== undefined) node.append(el("small", {class: "pts"}, String(p)));
  return node;
}

function backs(count) {
  const row = el("div", {class: "backs", title: `${count} cards`});
  for (let k = 0; k < count; k++) row.append(el("div", {class: "card back mini"}));
  return row;
}

function words(cards, unused = [], extra = "mini") {
  // Laid words as rows of cards; the unused cards after them, marked.
  const box = el("div", {class: "words"});
  for (const word of cards) box.append(el("div", {class: "word"}, ...word.map((f) => card(f, extra))));
  if (unused.length) box.append(el("div", {class: "word unused", title: "unused"}, ...unused.map((f) => card(f, extra + " unused"))));
  if (!cards.length && !unused.length) box.append(el("span", {class: "small"}, "no cards"));
  return box;
}

function who(view, p) {
  // A seat's name: its spec, numbered when two seats play the same one ("greedy 1", "greedy 2"), "(you)" for you.
  const label = view.seats[p].label;
  const same = view.seats.filter((s) => s.label === label);
  const name = same.length > 1 ? `${label} ${same.findIndex((s) => s.seat === p) + 1}` : label;
  return p === view.human ? `${name} (you)` : name;
}

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
const pace = () => Number($("speed").value);

// -- the new-game form ------------------------------------------------------------------------------

function seatRow(spec) {
  const known = spec === "human" || agents.includes(spec);
  const select = el("select", {class: "seat-spec", "aria-label": "player"},
    el("option", {value: "human"}, "you (human)"),
    ...agents.map((a) => el("option", {value: a}, a)),
    el("option", {value: CUSTOM}, "another agent spec…"));
  select.value = known ? spec : CUSTOM;
  const custom = el("input", {class: "seat-custom", "aria-label": "agent spec", placeholder: "e.g. expert:samples=64",
    value: known ? "" : spec});
  const level = el("select", {class: "seat-level", "aria-label": "words the bot knows"},
    el("option", {value: ""}, "all words"),
    ...levels.map((lv) => el("option", {value: String(lv.number)}, `level ${lv.number}: ${lv.name} (${lv.words.toLocaleString("en")} words)`)));
  const note = el("div", {class: "small seat-about"});
  const show = () => {
    custom.hidden = select.value !== CUSTOM;
    note.textContent = select.value === CUSTOM ? "any agent spec this table offers, with parameters"
      : select.value === "human" ? "you" : (about[select.value] || "");
    showLevel(select.value, level);
  };
  select.addEventListener("change", show);
  const row = el("div", {class: "seat-row"},
    el("div", {class: "seat-line"}, select, custom, level,
      el("button", {type: "button", class: "remove-seat", title: "remove this player", "aria-label": "remove this player",
        onclick: () => { if ($("seat-list").children.length > 2) row.remove(); }}, "×")),
    note);
  show();
  return row;
}

function levelOff(spec) {
  // Why a seat takes no level (null: it takes one).
  if (spec === "human") return "you play with every word of the referee's list";
  if (spec === CUSTOM) return "write the level in the spec: e.g. expert:level=2";
  const rule = document.querySelector('#rule-list [name="challenges"]');
  if (rule && rule.value === "true") return "in the challenge variant each seat's words are the rules' vocabularies (level-N names a level there)";
  if (leveled.includes(spec)) return null;
  if (spec.startsWith("zoo:") || spec.startsWith("policy:")) return "a trained policy plays as it learnt: it takes no level";
  if (spec === "random") return "random plays any legal move: it finds no words, so it takes no level";
  return `${spec} takes no level`;
}

function showLevel(spec, level) {
  const why = levelOff(spec);
  level.disabled = why !== null;
  if (why !== null) level.value = "";
  level.title = why || "the words this bot knows: a shipped level (people's vocabularies), or all the referee's words";
}

function refreshLevels() {
  for (const row of $("seat-list").querySelectorAll(".seat-row")) showLevel(row.querySelector(".seat-spec").value, row.querySelector(".seat-level"));
}

function seatSpecs() {
  return [...$("seat-list").querySelectorAll(".seat-row")].map((row) => {
    const value = row.querySelector(".seat-spec").value;
    if (value === CUSTOM) return row.querySelector(".seat-custom").value.trim();
    const level = row.querySelector(".seat-level");
    return !level.disabled && level.value ? `${value}:level=${level.value}` : value;  // e.g. expert:level=2
  });
}

async function buildForm() {
  const offered = await api("/api/agents");
  agents = offered.agents || agents;
  about = offered.about || {};
  levels = offered.levels || [];
  leveled = offered.leveled || [];
  $("seat-list").append(seatRow("human"), seatRow("greedy"));
  for (const rule of (await api("/api/rules")).rules || []) {
    let input;
    if (rule.choices) {
      input = el("select", {name: rule.name});
      rule.choices.forEach((c, k) => input.append(el("option", {value: JSON.stringify(c)}, rule.choice_labels ? rule.choice_labels[k] : String(c))));
      input.value = JSON.stringify(rule.default);
    } else {
      const shown = Array.isArray(rule.default) ? rule.default.join(" ") : (rule.default === null ? "" : String(rule.default));
      input = el("input", {name: rule.name, value: shown, "data-kind": rule.kind || ""});
    }
    $("rule-list").append(el("label", {class: "field", title: rule.name},
      el("span", {class: "rule-label"}, rule.label || rule.name), input, el("span", {class: "small"}, rule.help)));
  }
  const challenges = document.querySelector('#rule-list [name="challenges"]');
  if (challenges) challenges.addEventListener("change", refreshLevels);
  refreshLevels();
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
  const games = saved.games || [];
  $("open-name").replaceChildren(...games.map((g) => el("option", {value: g}, g)));
  $("open").disabled = !games.length;
  $("open-hint").textContent = games.length ? "" : "No saved games yet: save one from the table (Save as).";
}

function showForm(visible) {
  // The form is shown when there is no game, or when asked for (New game); never beside a game in play.
  $("setup").hidden = !visible;
  $("table").hidden = visible || !current;
  $("new-game").hidden = visible || !current;
  $("back-to-game").hidden = !current;
}

// -- the table ------------------------------------------------------------------------------------

function render(view) {
  current = view;
  selected = view && view.hand && view.hand.some((c) => c.face === selected) ? selected : null;
  if (!view) { showForm(true); $("results").hidden = true; $("log-box").hidden = true; return; }
  if (!$("setup").hidden || $("table").hidden) showForm(false);
  $("results").hidden = !view.results.length;
  $("log-box").hidden = false;
  $("table").dataset.played = String(view.played);  // how many moves this render shows (tests wait on it)
  shown = view.played;
  const mover = view.to_move;
  const mine = !view.game_over && mover === view.human;
  const kinds = new Set((view.moves || []).map((m) => m.kind));
  $("status").textContent = view.game_over
    ? `Game over. ${view.winners.map((w) => who(view, w)).join(", ")} won.`
    : `Round ${view.round} of ${view.rounds}: ${view.hand_size} cards each.` + (view.final_turn ? " Someone went out: last turns." : "");
  $("prompt").textContent = view.game_over ? "" : !mine ? `${who(view, mover)} is to move…`
    : kinds.has("draw") ? "Your turn: click the draw pile, or the discard pile to take its card."
    : kinds.has("discard") ? "Pick a card in your hand to discard" + (kinds.has("go_out") ? ", or go out." : ".")
    : kinds.has("lay") ? "Choose how to lay your words."
    : kinds.has("pass") ? "Challenge a word you doubt, or pass." : kinds.size ? "Your move." : "";
  $("play-area").hidden = view.game_over;
  $("game-over").hidden = !view.game_over;
  renderSeats(view);
  // The piles: clickable when drawing is the move.
  $("draw-pile").textContent = "";
  $("draw-count").textContent = view.game_over ? "" : `${view.draw_pile} cards`;
  setClickable($("draw-pile"), kinds.has("draw"), "draw a card");
  $("discard-top").replaceChildren(...(view.discard_top ? card(view.discard_top.face).childNodes : ["–"]));
  $("discard-top").dataset.face = view.discard_top ? view.discard_top.face : "";
  setClickable($("discard-top"), kinds.has("take"), view.discard_top ? `take the ${view.discard_top.face}` : "");
  $("discard-top").classList.toggle("drop", kinds.has("discard"));
  // The hand: cards to pick (and drag onto the discard pile) when discarding.
  const picking = kinds.has("discard");
  $("hand").replaceChildren(...(view.hand || []).map((c, k) => {
    const node = card(c.face, "big" + (picking ? " pickable" : ""), "button");
    node.type = "button";
    node.dataset.index = String(k);
    node.disabled = !picking;
    node.setAttribute("aria-label", `${c.face}, ${c.points} points`);
    if (picking) {
      node.draggable = true;
      node.addEventListener("click", () => pick(c.face));
      node.addEventListener("dragstart", (e) => { e.dataTransfer.setData("text/plain", c.face); pick(c.face); });
    }
    return node;
  }));
  $("actions").hidden = !mine || !picking;
  updateActions();
  const me = view.seats[view.human];
  $("my-laid").replaceChildren(...(me.laid ? [el("div", {class: "label"}, "Your words"), words(me.laid.cards, me.laid.unused)] : []));
  const best = view.best_layout;
  $("best").replaceChildren(...(best ? [el("div", {class: "label"}, `Hint: your best layout now (${best.score} points)`), words(best.cards, best.unused)] : []));
  $("best").hidden = !best || !$("hint-toggle").checked;
  $("candidates").replaceChildren(...(view.candidates || []).map((c, k) => el("div", {class: "candidate"},
    words(c.cards, c.unused),
    el("button", {type: "button", class: "lay move", "data-action": String((view.moves.find((m) => m.kind === "lay" && m.candidate === k) || {}).action),
      onclick: () => play(view.moves.find((m) => m.kind === "lay" && m.candidate === k).action)}, `Lay these (${c.score} points)`))));
  $("other-moves").replaceChildren(...(view.moves || []).filter((m) => m.kind === "pass" || m.kind === "challenge").map((m) =>
    el("button", {type: "button", class: "move", "data-action": String(m.action), onclick: () => play(m.action)}, m.name)));
  $("coach-row").hidden = !mine || !(view.moves || []).length;
  if ($("coach-box").dataset.played !== String(view.played)) { $("coach-box").hidden = true; $("coach-box").replaceChildren(); }
  renderLog(view);
  renderResults(view);
}

// -- the coach: the search bot's values of the moves of this decision ------------------------------------

async function showCoach() {
  if (busy || !current) return;
  const box = $("coach-box");
  box.hidden = false;
  box.dataset.played = String(current.played);
  box.replaceChildren(el("span", {class: "spinner"}), " The coach is weighing your moves…");
  const data = await api("/api/coach");
  if (!data.coach || !current || data.coach.played !== current.played) { box.hidden = !data.coach; return; }
  const c = data.coach;
  const top = Math.max(...c.moves.map((m) => (m.value === null ? -Infinity : m.value)));
  const basis = c.basis === "rollouts" ? `the search bot's rollouts over ${c.samples} deals of the unseen cards: your round score minus your opponents'`
    : c.basis === "expert" ? "the points of the hand or words you keep, with the bonuses expected"
    : c.basis === "challenge" ? "the bots' odds that a word you do not know fails: a challenge wins twice its points if it fails and costs its points if it stands; letting the words stand is 0"
    : "nothing to weigh";
  box.replaceChildren(
    el("div", {class: "label"}, `Coach: the search bot plays ${c.search.move}`),
    el("table", {class: "coach-moves"}, ...c.moves.map((m) => el("tr", {class: (m.action === c.best.action ? "best" : ""), "data-action": String(m.action)},
      el("td", {}, m.move),
      el("td", {class: "value"}, m.value === null ? "–" : `${m.value >= 0 ? "+" : ""}${m.value.toFixed(1)}`),
      el("td", {class: "small"}, m.value === null || m.value === top ? "best" : `−${(top - m.value).toFixed(1)}`)))),
    el("div", {class: "small"}, `Points for you, by ${basis}.`));
}

function setClickable(node, on, label) {
  node.classList.toggle("clickable", on);
  node.tabIndex = on ? 0 : -1;
  node.setAttribute("role", on ? "button" : "img");
  if (on) node.setAttribute("title", label); else node.removeAttribute("title");
}

function renderSeats(view) {
  $("seats").replaceChildren(...view.seats.map((s) => {
    const box = el("div", {class: "seat" + (s.seat === view.to_move && !view.game_over ? " to-move" : ""), "data-seat": String(s.seat)},
      el("div", {class: "name"}, el("span", {class: "swatch", style: `background:${COLOURS[s.seat % COLOURS.length]}`}),
        who(view, s.seat)),
      el("div", {class: "small"}, `total ${s.total}` + (view.game_over ? "" : ` · ${s.cards} cards`) + (s.went_out ? " · went out" : "")));
    if (!view.game_over && !s.laid && s.seat !== view.human) box.append(backs(s.cards));
    if (s.taken.length) box.append(el("div", {class: "small"}, "took from the discard pile:"), el("div", {class: "cards"}, ...s.taken.map((c) => card(c.face, "mini"))));
    if (s.laid && s.seat !== view.human) box.append(el("div", {class: "small"}, "laid:"), words(s.laid.cards, s.laid.unused));
    return box;
  }));
}

function pick(face) {
  if (busy) return;
  selected = face;
  updateActions();
}

function updateActions() {
  const moves = (current && current.moves) || [];
  const discard = moves.find((m) => m.kind === "discard" && m.face === selected);
  const goOut = moves.find((m) => m.kind === "go_out" && m.face === selected);
  const chosen = [...$("hand").children].find((n) => n.dataset.face === selected);  // one card of that face
  for (const node of $("hand").children) node.classList.toggle("selected", node === chosen);
  $("discard").disabled = busy || !discard;
  $("discard").textContent = selected ? `Discard ${selected}` : "Discard";
  $("discard").dataset.action = discard ? String(discard.action) : "";
  const canGoOut = moves.some((m) => m.kind === "go_out");
  $("go-out").hidden = !canGoOut;
  $("go-out").disabled = busy || !goOut;
  $("go-out").textContent = selected ? `Go out, discarding ${selected}` : "Go out (pick the card to discard)";
  $("go-out").dataset.action = goOut ? String(goOut.action) : "";
}

function renderLog(view) {
  // Newest at the bottom, numbered from the game's first move, the list scrolled to the newest.
  const first = view.played - view.log.length;
  $("log").replaceChildren(...view.log.map((m, i) => logItem(view, m, first + i + 1)));
  if ($("log").lastElementChild) $("log").lastElementChild.classList.add("newest");
  followLog();
}

function logItem(view, m, number) {
  return el("li", {"data-number": String(number), class: m.seat === view.human ? "mine" : ""},
    el("span", {class: "num"}, `${number}.`), el("span", {class: "round"}, `R${m.round}`),
    el("span", {class: "swatch", style: `background:${COLOURS[m.seat % COLOURS.length]}`}),
    `${who(view, m.seat)}: ${m.move}`);
}

function followLog() {
  const log = $("log");
  log.scrollTop = log.scrollHeight;
}

// -- the bots' moves, one at a time ----------------------------------------------------------------

function flyCard(from, to, face) {
  // A card travels from one place on the table to another (the moved card), then is gone.
  const a = from.getBoundingClientRect();
  const b = to.getBoundingClientRect();
  const node = face ? card(face, "flying") : el("div", {class: "card back flying"});
  node.style.left = `${a.left}px`;
  node.style.top = `${a.top}px`;
  document.body.append(node);
  const ms = Math.max(120, pace() * 0.6);
  node.style.transition = `transform ${ms}ms ease-in-out`;
  requestAnimationFrame(() => requestAnimationFrame(() => {
    node.style.transform = `translate(${b.left - a.left}px, ${b.top - a.top}px)`;
  }));
  setTimeout(() => node.remove(), ms + 40);
}

async function playBack(view, from) {
  // Show the moves after the first `from` of the view's log one at a time: the mover highlighted, the card
  // that moved travelling, the log following; then the whole new position.
  const first = view.played - view.log.length;
  const fresh = view.log.slice(Math.max(0, from - first));
  if (pace() > 0 && fresh.some((m) => m.seat !== view.human)) {
    $("table").dataset.playing = "1";
    for (const [i, m] of fresh.entries()) {
      const number = view.played - fresh.length + i + 1;
      const item = logItem(view, m, number);
      for (const old of $("log").querySelectorAll(".newest")) old.classList.remove("newest");
      item.classList.add("newest");
      $("log").append(item);
      while ($("log").children.length > 40) $("log").firstElementChild.remove();
      followLog();
      if (m.seat === view.human) continue;
      const seat = document.querySelector(`#seats .seat[data-seat="${m.seat}"]`) || $("seats");
      for (const s of document.querySelectorAll("#seats .seat.moving")) s.classList.remove("moving");
      seat.classList.add("moving");
      const taken = /^take (\S+)/.exec(m.move);
      const thrown = /^(?:discard|go out discarding) (\S+)/.exec(m.move);
      if (m.move === "draw") flyCard($("draw-pile"), seat, null);
      else if (taken) flyCard($("discard-top"), seat, taken[1]);
      else if (thrown) {
        flyCard(seat, $("discard-top"), thrown[1]);
        await sleep(Math.max(120, pace() * 0.6));
        $("discard-top").replaceChildren(...card(thrown[1]).childNodes);
        $("discard-top").classList.add("just-moved");
      }
      $("prompt").textContent = `${who(view, m.seat)}: ${m.move}`;
      await sleep(pace());
      $("discard-top").classList.remove("just-moved");
      seat.classList.remove("moving");
    }
    delete $("table").dataset.playing;
  }
  render(view);
}

async function play(action) {
  if (busy || !current) return;
  busy = true;
  $("table").dataset.busy = "1";  // until the new position is on the page (tests wait on it)
  updateActions();
  $("table").classList.add("busy");
  const from = current.played;
  selected = null;
  const slow = setTimeout(() => { $("prompt").textContent = "The bots are thinking…"; }, 400);
  const data = await api("/api/move", {seat: current.human, action});
  clearTimeout(slow);
  $("table").classList.remove("busy");
  if (data.game) await playBack(data.game, data.error ? data.game.played : from);
  busy = false;
  delete $("table").dataset.busy;
  updateActions();
}

// -- results: the score sheet, the standings, the chart ----------------------------------------------

function renderResults(view) {
  $("standings-title").hidden = !view.game_over;
  $("standings").replaceChildren(...(view.game_over ? [standings(view)] : []));
  if (!view.results.length) return;
  $("score-sheet").replaceChildren(scoreSheet(view));
  const last = view.results[view.results.length - 1];
  $("results-title").textContent = `Round ${view.results.length} results`;
  const rows = last.map((r) => el("tr", {},
    el("td", {}, who(view, r.player) + (r.went_out ? " (out)" : "")),
    el("td", {}, words(r.words, [], "mini")),
    el("td", {}, r.unused.length ? words([], r.unused, "mini") : "–"),
    el("td", {}, Object.entries(r.bonuses).map(([k, v]) => `${k.replace("_", " ")} +${v}`).join(", ") || "–"),
    el("td", {class: "num"}, String(r.round_score)), el("td", {class: "num"}, String(r.total))));
  $("round-result").replaceChildren(el("div", {class: "scroll"}, el("table", {id: "round-table"},
    el("tr", {}, ...["player", "words", "unused", "bonuses", "round", "total"].map((h) => el("th", {}, h))), ...rows)));
  drawChart(view);
}

function scoreSheet(view) {
  // Every round's score of every player, and the totals: fits a phone's width (narrow columns, short names).
  const n = view.rounds;
  const head = el("tr", {}, el("th", {class: "player"}, "player"),
    ...Array.from({length: n}, (_, r) => el("th", {class: "num", title: `round ${r + 1}`}, `R${r + 1}`)),
    el("th", {class: "num total"}, "total"));
  const rows = view.seats.map((s) => el("tr", {"data-seat": String(s.seat)},
    el("td", {class: "player", title: who(view, s.seat)}, who(view, s.seat)),
    ...Array.from({length: n}, (_, r) => {
      const result = view.results[r] && view.results[r].find((x) => x.player === s.seat);
      return el("td", {class: "num"}, result ? String(result.round_score) : "");
    }),
    el("td", {class: "num total"}, String(view.totals_history[view.totals_history.length - 1][s.seat]))));
  return el("table", {id: "score-table"}, head, ...rows);
}

function standings(view) {
  const totals = view.totals_history[view.totals_history.length - 1];
  const order = view.seats.map((s) => s.seat).sort((a, b) => totals[b] - totals[a] || a - b);
  const rows = order.map((p) => {
    const rank = 1 + order.filter((q) => totals[q] > totals[p]).length;  // a tie shares its rank
    return el("tr", {class: p === view.human ? "mine" : ""}, el("td", {class: "num"}, String(rank)),
      el("td", {}, who(view, p)), el("td", {class: "num"}, String(totals[p])));
  });
  return el("table", {id: "standings-table"},
    el("tr", {}, el("th", {class: "num"}, "rank"), el("th", {}, "player"), el("th", {class: "num"}, "total")), ...rows);
}

function niceStep(top) {
  const rough = top / 5;
  const power = 10 ** Math.floor(Math.log10(rough));
  return [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough);
}

function drawChart(view) {
  const svg = $("chart");
  const ns = "http://www.w3.org/2000/svg";
  const make = (tag, attrs, text) => {
    const node = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    svg.append(node);
    return node;
  };
  const history = view.totals_history;
  const step = niceStep(Math.max(10, ...history.flat()));
  const top = step * Math.ceil(Math.max(10, ...history.flat()) / step);
  const low = Math.min(0, ...history.flat());
  const [left, right, upper, lower] = [44, 410, 12, 190];
  const x = (i) => left + ((right - left) * i) / Math.max(1, view.rounds);
  const y = (v) => lower - ((lower - upper) * (v - low)) / Math.max(1, top - low);
  svg.replaceChildren();
  for (let v = Math.ceil(low / step) * step; v <= top; v += step) {
    make("line", {x1: left, x2: right, y1: y(v), y2: y(v), class: "grid"});
    make("text", {x: left - 5, y: y(v) + 3, "text-anchor": "end", class: "tick"}, String(v));
  }
  for (let r = 0; r <= view.rounds; r++) {
    make("line", {x1: x(r), x2: x(r), y1: lower, y2: lower + 4, class: "axis"});
    make("text", {x: x(r), y: lower + 15, "text-anchor": "middle", class: "tick"}, String(r));
  }
  make("line", {x1: left, x2: right, y1: lower, y2: lower, class: "axis"});
  make("line", {x1: left, x2: left, y1: upper, y2: lower, class: "axis"});
  make("text", {x: (left + right) / 2, y: lower + 33, "text-anchor": "middle", class: "axis-label"}, "round");
  make("text", {x: 12, y: (upper + lower) / 2, "text-anchor": "middle", class: "axis-label",
    transform: `rotate(-90 12 ${(upper + lower) / 2})`}, "points");
  view.seats.forEach((s, p) => {
    const colour = COLOURS[p % COLOURS.length];
    make("polyline", {points: history.map((t, i) => `${x(i)},${y(t[p])}`).join(" "), fill: "none", stroke: colour,
      "stroke-width": 2.5, "data-seat": p});
    history.forEach((t, i) => make("circle", {cx: x(i), cy: y(t[p]), r: 2.5, fill: colour}));
  });
  const totals = history[history.length - 1];
  $("chart-key").replaceChildren(...view.seats.map((s, p) => el("li", {},
    el("span", {class: "swatch", style: `background:${COLOURS[p % COLOURS.length]}`}),
    `${who(view, p)}: ${totals[p]}`)));
}

// -- the controls ---------------------------------------------------------------------------------

async function start() {
  const seats = seatSpecs();
  $("start").disabled = true;
  $("loading").hidden = false;
  $("loading-text").textContent = seats.some((s) => s.startsWith("zoo:") || s.startsWith("policy:"))
    ? "Starting the game: loading the policy takes a few seconds…" : "Starting the game…";
  $("message").textContent = "";
  const data = await api("/api/new", {seats, rules: formRules(), seed: Number($("seed").value) || 0});
  $("loading").hidden = true;
  $("start").disabled = false;
  if (!data.game || data.error) return;
  // The new game from its deal: the bots' first moves are played back.
  current = null;
  shown = 0;
  showForm(false);
  $("log").replaceChildren();
  $("results").hidden = true;
  busy = true;
  render({...data.game, played: 0, log: [], moves: []});  // the log starts empty: the bots' first moves play back
  await playBack(data.game, 0);
  busy = false;
  updateActions();
}

function discardSelected(which) {
  const action = $(which).dataset.action;
  if (action !== "") play(Number(action));
}

function onActivate(node, handler) {
  node.addEventListener("click", handler);
  node.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); handler(); } });
}

onActivate($("draw-pile"), () => { const m = current && (current.moves || []).find((x) => x.kind === "draw"); if (m) play(m.action); });
onActivate($("discard-top"), () => { const m = current && (current.moves || []).find((x) => x.kind === "take"); if (m) play(m.action); });
$("discard-top").addEventListener("dragover", (e) => { if (current && (current.moves || []).some((m) => m.kind === "discard")) e.preventDefault(); });
$("discard-top").addEventListener("drop", (e) => {
  e.preventDefault();
  pick(e.dataTransfer.getData("text/plain"));
  discardSelected("discard");
});
$("discard").addEventListener("click", () => discardSelected("discard"));
$("go-out").addEventListener("click", () => discardSelected("go-out"));
$("coach").addEventListener("click", showCoach);
$("hint-toggle").addEventListener("change", () => { $("best").hidden = !current || !current.best_layout || !$("hint-toggle").checked; });
$("speed").value = localStorage.getItem("quiddler-pace") || "600";
$("speed").addEventListener("change", () => localStorage.setItem("quiddler-pace", $("speed").value));
$("add-seat").addEventListener("click", () => { if ($("seat-list").children.length < 8) $("seat-list").append(seatRow("greedy")); });
$("start").addEventListener("click", start);
$("new-game").addEventListener("click", () => showForm(true));
$("play-again").addEventListener("click", () => showForm(true));
$("back-to-game").addEventListener("click", () => showForm(false));
$("save").addEventListener("click", async () => { await api("/api/save", {name: $("save-name").value.trim()}); await refreshSaved(); });
$("open").addEventListener("click", async () => {
  const data = await api("/api/open", {name: $("open-name").value});
  if (data.game && !data.error) { current = null; render(data.game); }
});

buildForm().then(async () => { const data = await api("/api/state"); render(data.game); });
