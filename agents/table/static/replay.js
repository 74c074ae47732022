// The replay viewer: steps through a saved game (evaluate.py --save-games, or a game saved at the table)
// move by move, every hand face up, with the round results. The server replays and checks the moves.
"use strict";

const $ = (id) => document.getElementById(id);
let replay = null;
let at = 0;

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

$("load").addEventListener("click", load);
$("first").addEventListener("click", () => show(0));
$("prev").addEventListener("click", () => show(at - 1));
$("next").addEventListener("click", () => show(at + 1));
$("last").addEventListener("click", () => show(replay ? replay.frames.length - 1 : 0));
$("position").addEventListener("input", (e) => show(Number(e.target.value)));
listFiles();
