// The replay viewer: steps through a saved game (evaluate.py --save-games, or a game saved at the table)
// move by move, every hand face up, with the round results. The server replays and checks the moves.
"use strict";

const $ = (id) => document.getElementById(id);
let replay = null;
let at = 0;
let review = null;  // the coach's review of the loaded game: decisions by move number (frame k shows move k - 1)
let loaded = null;  // the file and game of the loaded replay

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const child of children) node.append(child);
  return node;
}

// The session's token, written into the page by the server: every API call carries it (guard.py).
const TOKEN = document.querySelector('meta[name="quiddler-token"]').content;

function card(face, extra = "mini") {
  // A card: its face and its points (the replay's table of points).
  const node = el("div", {class: `card ${extra}`, "data-face": face}, el("span", {class: "face"}, face));
  if (replay && replay.points && face in replay.points) node.append(el("small", {class: "pts"}, String(replay.points[face])));
  return node;
}

function words(cards, unused = []) {
  const box = el("div", {class: "words"});
  for (const word of cards) box.append(el("div", {class: "word"}, ...word.map((f) => card(f))));
  if (unused.length) box.append(el("div", {class: "word unused"}, ...unused.map((f) => card(f, "mini unused"))));
  return box;
}

async function api(path) {
  const data = await (await fetch(path, {headers: {"X-Quiddler-Token": TOKEN}})).json();
  $("message").textContent = data.error || "";
  return data;
}

async function listFiles() {
  const saved = await api("/api/saved");
  const options = Object.entries(saved.replays).map(([name, n]) => el("option", {value: name}, `${name} (${n} games)`));
  for (const g of saved.games) options.push(el("option", {value: `${g}.json`}, `${g} (saved at the table)`));
  $("file").replaceChildren(...options);
  // With nothing to open, say where saved games come from instead of an empty list.
  $("load").disabled = !options.length;
  $("file-hint").hidden = options.length > 0;
  $("file-hint").textContent = options.length ? "" : "No saved games yet. Save a game at the table (Save as), " +
    "or start the table with a file of evaluate.py --save-games: quiddler-play --replay games.jsonl.";
}

async function load() {
  const data = await api(`/api/replay?file=${encodeURIComponent($("file").value)}&game=${Number($("game").value) || 0}`);
  if (!data.replay) return;
  replay = data.replay;
  loaded = {file: data.file, game: data.game};
  review = null;
  $("review").disabled = false;
  $("review-status").textContent = "";
  $("review-panel").hidden = true;
  $("game-info").textContent = `${data.file}, game ${data.game} of 0..${data.games - 1}: ${replay.seats.join(", ")}`;
  $("position").max = String(replay.frames.length - 1);
  show(0);
}

function show(k) {
  if (!replay) return;
  at = Math.max(0, Math.min(replay.frames.length - 1, k));
  const frame = replay.frames[at];
  $("position").value = String(at);
  $("where").textContent = `position ${at} of ${replay.frames.length - 1}, round ${frame.round}`;
  $("move").textContent = frame.move ? `Move: ${frame.move}` : "The deal.";
  showReview();
  $("draw-pile").textContent = String(frame.draw_pile);
  $("discard-top").replaceChildren(...(frame.discard_top ? card(frame.discard_top, "").childNodes : ["–"]));
  $("hands").replaceChildren(...replay.seats.map((label, p) => {
    const box = el("div", {class: "seat" + (frame.to_move === p ? " to-move" : ""), "data-seat": String(p)},
      el("div", {class: "name"}, `${p}: ${label}  (total ${frame.totals[p]})`),
      el("div", {class: "cards"}, ...(frame.hands[p] || []).map((f) => card(f))));
    if (frame.laid[p]) {
      box.append(el("div", {class: "small"}, "laid: " + (frame.laid[p].words.join(" ") || "-")),
        words(frame.laid[p].cards || [], frame.laid[p].unused));
    }
    return box;
  }));
  // The latest round results at or before this position.
  let results = null;
  for (let j = at; j >= 0 && !results; j--) results = replay.frames[j].results;
  $("result-title").textContent = results ? "Round results (latest)" : "Round results";
  $("round-result").replaceChildren(!results ? "none yet" : el("table", {id: "round-table"},
    el("tr", {}, ...["player", "words", "unused", "bonuses", "round", "total"].map((h) => el("th", {}, h))),
    ...results.map((r) => el("tr", {},
      el("td", {}, replay.seats[r.player] + (r.went_out ? " (out)" : "")), el("td", {}, r.words && r.words.length ? words(r.words) : "-"),
      el("td", {}, r.unused.length ? words([], r.unused) : "-"),
      el("td", {}, Object.entries(r.bonuses).map(([b, v]) => `${b.replace("_", " ")} +${v}`).join(", ") || "-"),
      el("td", {}, String(r.round_score)), el("td", {}, String(r.total))))));
}

// -- the coach's review beside the replay ------------------------------------------------------------

const signed = (v) => `${v >= 0 ? "+" : ""}${v.toFixed(1)}`;

async function loadReview() {
  if (!loaded) return;
  $("review").disabled = true;
  $("review-status").textContent = "The coach is weighing every decision…";
  const data = await api(`/api/review?file=${encodeURIComponent(loaded.file)}&game=${loaded.game}`);
  $("review").disabled = false;
  if (!data.review || !loaded || data.file !== loaded.file || data.game !== loaded.game) { $("review-status").textContent = ""; return; }
  review = {byMove: new Map(data.review.decisions.map((d) => [d.move, d])), ...data.review};
  $("review-status").textContent = `${data.review.decisions.length} decisions weighed (values: points for the player).`;
  $("review-totals").replaceChildren(el("table", {id: "review-table"},
    el("tr", {}, ...["player", "points lost", "draw", "discard", "go out", "last turn", "lay"].map((h) => el("th", {}, h))),
    ...Object.entries(data.review.players).map(([name, row]) => el("tr", {},
      el("td", {}, name), el("td", {}, row.loss.toFixed(1)),
      ...["draw", "discard", "go_out", "last_turn", "lay"].map((k) => el("td", {}, row.kinds[k].loss.toFixed(1)))))));
  const worst = data.review.decisions.filter((d) => d.loss).sort((a, b) => b.loss - a.loss || a.move - b.move).slice(0, 10);
  $("review-list").replaceChildren(...worst.map((d) => {
    const item = el("li", {"data-move": String(d.move)}, `round ${d.round}, move ${d.move + 1}, ${d.player}: ${d.played.move}, ` +
      `−${d.loss.toFixed(1)} (search: ${d.search.move})`);
    item.addEventListener("click", () => show(d.move + 1));
    return item;
  }));
  $("review-panel").hidden = false;
  showReview();
}

function showReview() {
  // The move that led to this position: its loss, and the best move when the loss is large.
  const box = $("move-review");
  const d = review && at > 0 ? review.byMove.get(at - 1) : null;
  box.className = "small";
  if (!d) { box.textContent = review && at > 0 ? "Not weighed (one legal move)." : ""; return; }
  if (d.loss === null) { box.textContent = "Not weighed."; return; }
  box.textContent = `Coach: ${d.played.move} ${signed(d.value)}; loss ${d.loss.toFixed(1)}` +
    (d.loss >= review.large ? `; best: ${d.best.move} ${signed(d.moves.find((m) => m.action === d.best.action).value)}` : "");
  if (d.loss >= review.large) box.classList.add("costly");
}

$("review").addEventListener("click", loadReview);
$("load").addEventListener("click", load);
$("first").addEventListener("click", () => show(0));
$("prev").addEventListener("click", () => show(at - 1));
$("next").addEventListener("click", () => show(at + 1));
$("last").addEventListener("click", () => show(replay ? replay.frames.length - 1 : 0));
$("position").addEventListener("input", (e) => show(Number(e.target.value)));
listFiles();
