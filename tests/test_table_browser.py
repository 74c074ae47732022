"""The browser table in a real browser: headless Chromium (Debian's `chromium` and `chromium-driver`, driven by
Selenium) plays whole games by clicking the cards (the draw and discard piles, a card in the hand, then Discard
or Go out), reads the final standings, the score sheet and the chart, watches the bots' moves play back one at a
time, checks the layout at phone width, the errors and the loading state, steps through a replay, and a bad move
sent by hand to the server is refused.

`QUIDDLER_SCREENSHOTS=docs/img` writes the docs' screenshots (the table at desktop and at phone width, and the
coach panel open on a decision at both widths) there; by default they go to the test's temporary folder.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from quiddler_agents.table.offer import Offer
from quiddler_agents.table.server import TableServer
from tests.table_client import call

pytestmark = pytest.mark.slow
webdriver = pytest.importorskip("selenium.webdriver")
if shutil.which("chromedriver") is None or shutil.which("chromium") is None:
    missing = "needs Debian's chromium and chromium-driver (.ci/run installs them)"
    if os.environ.get("CI"):  # CI installs them: their absence there is a failure, not a skip
        pytest.fail(missing, pytrace=False)
    pytest.skip(missing, allow_module_level=True)

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402


@pytest.fixture
def browser():
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000"):
        options.add_argument(flag)
    options.binary_location = shutil.which("chromium")
    driver = webdriver.Chrome(
        service=webdriver.ChromeService(executable_path=shutil.which("chromedriver")), options=options
    )
    driver.implicitly_wait(0)
    yield driver
    driver.quit()


@pytest.fixture
def served(tmp_path):
    replays = tmp_path / "replays"
    replays.mkdir()
    holder = {}

    def start(replay_files=()):
        server = TableServer(("127.0.0.1", 0), tmp_path / "games", list(replay_files))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        holder["server"] = server
        return server, f"http://127.0.0.1:{server.server_port}"

    yield start
    if "server" in holder:
        holder["server"].shutdown()
        holder["server"].server_close()


def _wait(driver, condition, timeout=30):
    return WebDriverWait(driver, timeout).until(condition)


def _shots() -> Path | None:
    folder = os.environ.get("QUIDDLER_SCREENSHOTS")
    return Path(folder) if folder else None


def _open_form(browser, base, pace="150"):
    """The table page with its new-game form built; the bots' pace set (fast, by default, to keep tests short)."""
    browser.get(base + "/")
    _wait(browser, EC.presence_of_element_located((By.CSS_SELECTOR, "#seat-list .seat-spec")))
    browser.execute_script(
        "const s = document.getElementById('speed'); s.value = arguments[0]; s.dispatchEvent(new Event('change'));",
        pace,
    )


def _set_seats(browser, specs):
    while len(browser.find_elements(By.CSS_SELECTOR, "#seat-list .seat-row")) < len(specs):
        browser.find_element(By.ID, "add-seat").click()
    for row, spec in zip(browser.find_elements(By.CSS_SELECTOR, "#seat-list .seat-row"), specs, strict=True):
        select = Select(row.find_element(By.CSS_SELECTOR, ".seat-spec"))
        if spec in [o.get_attribute("value") for o in select.options]:
            select.select_by_value(spec)
        else:
            select.select_by_value("__custom")
            box = row.find_element(By.CSS_SELECTOR, ".seat-custom")
            box.clear()
            box.send_keys(spec)


def _set_rule(browser, name, value):
    box = browser.find_element(By.ID, "rule-box")
    if not box.get_attribute("open"):
        box.find_element(By.TAG_NAME, "summary").click()
    field = browser.find_element(By.CSS_SELECTOR, f"#rule-list [name={name}]")
    field.clear()
    field.send_keys(value)


def _settled(server):
    """The page shows the server's position (its playback done) and takes clicks."""
    return lambda d: (
        server.table is not None
        and d.find_element(By.ID, "table").get_attribute("data-played") == str(len(server.table.actions))
        and d.find_element(By.ID, "table").get_attribute("data-playing") is None
        and d.find_element(By.ID, "table").get_attribute("data-busy") is None
    )


def _click_a_move(browser, server, turn: int) -> None:
    """The human's move, by clicking cards: the draw pile (the discard pile every third turn), then a card in the
    hand and Go out when it can (the server says which card), else Discard."""
    moves = server.table.view()["moves"]
    kinds = {m["kind"] for m in moves}
    if "draw" in kinds:
        pile = "discard-top" if turn % 3 == 2 else "draw-pile"
        assert "clickable" in browser.find_element(By.ID, pile).get_attribute("class")
        browser.find_element(By.ID, pile).click()
        return
    going = [m for m in moves if m["kind"] == "go_out"]
    face = going[0]["face"] if going else [m for m in moves if m["kind"] == "discard"][-1]["face"]
    browser.find_element(By.CSS_SELECTOR, f'#hand .card[data-face="{face}"]').click()
    button = browser.find_element(By.ID, "go-out" if going else "discard")
    _wait(browser, lambda d: button.is_enabled())
    assert face in button.text
    button.click()


def _no_horizontal_overflow(browser) -> bool:
    return browser.execute_script(
        "const sheet = document.getElementById('score-table');"
        "return document.documentElement.scrollWidth <= window.innerWidth"
        " && sheet.scrollWidth <= sheet.parentElement.clientWidth"
        " && [...sheet.querySelectorAll('th, td')].every((c) => c.getBoundingClientRect().right <= window.innerWidth"
        "    && c.scrollWidth <= c.clientWidth + 1 || c.classList.contains('player'));"
    )


def _last_log_entry_visible(browser) -> bool:
    return browser.execute_script(
        "const log = document.getElementById('log'); const last = log.lastElementChild;"
        "if (!last) return false;"
        "const a = log.getBoundingClientRect(), b = last.getBoundingClientRect();"
        "return b.top >= a.top - 1 && b.bottom <= a.bottom + 1;"
    )


def _numbers_whole(browser) -> bool:
    """No move number is clipped: each fits its box."""
    return browser.execute_script(
        "return [...document.querySelectorAll('#log .num')].every((n) => n.scrollWidth <= n.clientWidth + 1);"
    )


def test_a_whole_game_by_clicking_cards_ends_with_the_standings(browser, served, tmp_path):
    server, base = served()
    _open_form(browser, base)
    # The seats are dropdowns of what the server offers (human, the bots, the zoo), each with a line on what it is.
    specs = browser.find_elements(By.CSS_SELECTOR, "#seat-list .seat-spec")
    assert [s.get_attribute("value") for s in specs] == ["human", "greedy"]
    offered = {o.get_attribute("value") for o in Select(specs[1]).options}
    assert {"human", "greedy", "expert", "search", "zoo:champion-2p"} <= offered and "zoo" not in offered
    assert "best layout" in browser.find_elements(By.CSS_SELECTOR, "#seat-list .seat-about")[1].text
    # The rule options have plain labels, not field names; the rules panel explains the game.
    browser.find_element(By.CSS_SELECTOR, "#rule-box summary").click()
    labels = [label.text for label in browser.find_elements(By.CSS_SELECTOR, "#rule-list .rule-label")]
    assert "Cards dealt each round" in labels and "Fewest cards in a word" in labels
    assert (
        all("_" not in label for label in labels) and "min_word_cards" not in browser.find_element(By.ID, "setup").text
    )
    browser.find_element(By.CSS_SELECTOR, "#rules-panel summary").click()
    assert "go out" in browser.find_element(By.ID, "rules-panel").text
    _set_rule(browser, "hand_sizes", "3 4 5")
    browser.find_element(By.ID, "seed").clear()
    browser.find_element(By.ID, "seed").send_keys("7")
    browser.find_element(By.ID, "start").click()
    _wait(browser, _settled(server))
    # Mid-game the form is hidden (a New game button brings it back); the hint is off until asked for.
    assert not browser.find_element(By.ID, "setup").is_displayed()
    assert browser.find_element(By.ID, "new-game").is_displayed()
    assert not browser.find_element(By.ID, "best").is_displayed()
    browser.find_element(By.ID, "hint-toggle").click()
    assert (
        browser.find_element(By.ID, "best").is_displayed() and "best layout" in browser.find_element(By.ID, "best").text
    )
    browser.find_element(By.ID, "hint-toggle").click()
    assert not browser.find_element(By.ID, "best").is_displayed()
    shots = _shots() or tmp_path
    turn = 0
    took = shot = coached = False
    while not server.table.game.is_over:
        _wait(browser, _settled(server))
        if server.table.game.is_over:
            break
        view = server.table.view()
        # The hand as cards, each with its face and points; the other hand as card backs, counted.
        hand = browser.find_elements(By.CSS_SELECTOR, "#hand .card")
        assert [c.get_attribute("data-face") for c in hand] == [c["face"] for c in view["hand"]]
        assert all(c.find_element(By.CSS_SELECTOR, ".pts").text for c in hand)
        other = view["seats"][1]
        if other["laid"] is None:
            assert (
                len(browser.find_elements(By.CSS_SELECTOR, '#seats .seat[data-seat="1"] .card.back')) == other["cards"]
            )
            assert (
                f"{other['cards']} cards" in browser.find_element(By.CSS_SELECTOR, '#seats .seat[data-seat="1"]').text
            )
        if turn and view["played"] > 1:
            assert _last_log_entry_visible(browser) and _numbers_whole(browser)
        # The screenshot: round 2, a card to discard, the first round's results beside.
        if server.table.results and not shot and "discard" in {m["kind"] for m in view["moves"]}:
            browser.find_element(By.CSS_SELECTOR, "#hand .card").click()
            browser.save_screenshot(str(shots / "table-desktop.png"))
            shot = True
        took |= "take" in {m["kind"] for m in view["moves"]} and turn % 3 == 2
        # The coach, once, on a discard: the moves weighed with their values, the server's.
        if not coached and "discard" in {m["kind"] for m in view["moves"]}:
            browser.find_element(By.ID, "coach").click()
            _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#coach-box .coach-moves tr"))
            rows = _coach_rows(browser)
            status, data = call(base + "/api/coach")
            assert status == 200 and [(m["move"], f"{m['value']:+.1f}") for m in data["coach"]["moves"]] == rows
            assert (
                rows[0][0].startswith(("discard", "go out"))
                and "Points for you" in browser.find_element(By.ID, "coach-box").text
            )
            coached = True
        _click_a_move(browser, server, turn)
        turn += 1
        assert turn < 400
    _wait(browser, _settled(server))
    game = server.table.game
    assert game.is_over and game.rounds_completed == 3 and took and shot and coached
    assert not browser.find_element(By.ID, "coach-row").is_displayed()  # no coach once the game is over
    assert "won" in browser.find_element(By.ID, "status").text
    # The final standings: rank, player, total, best first.
    rows = [r.text.split() for r in browser.find_elements(By.CSS_SELECTOR, "#standings-table tr")[1:]]
    order = sorted(range(2), key=lambda p: (-game.totals[p], p))
    assert [(r[0], r[-1]) for r in rows] == [
        (str(1 + sum(t > game.totals[p] for t in game.totals)), str(game.totals[p])) for p in order
    ]
    assert rows[0][1] == server.table.seats[order[0]]
    # The score sheet: every round's score and the totals.
    sheet = browser.find_elements(By.CSS_SELECTOR, "#score-table tr")
    assert sheet[0].text.split() == ["player", "R1", "R2", "R3", "total"]
    for p, row in enumerate(sheet[1:]):
        cells = row.find_elements(By.TAG_NAME, "td")
        assert [c.text for c in cells[1:]] == [str(server.table.results[r][p]["round_score"]) for r in range(3)] + [
            str(game.totals[p])
        ]
    # The chart: a line per player, both axes with their ticks and labels, and a colour key.
    assert len(browser.find_elements(By.CSS_SELECTOR, "#chart polyline")) == 2
    assert len(browser.find_elements(By.CSS_SELECTOR, "#chart line.axis")) >= 2
    ticks = [t.text for t in browser.find_elements(By.CSS_SELECTOR, "#chart text.tick")]
    assert {"0", "1", "2", "3"} <= set(ticks)
    assert {t.text for t in browser.find_elements(By.CSS_SELECTOR, "#chart text.axis-label")} == {"round", "points"}
    key = [k.text for k in browser.find_elements(By.CSS_SELECTOR, "#chart-key li")]
    assert key == [f"human (you): {game.totals[0]}", f"greedy: {game.totals[1]}"]
    assert not browser.find_element(By.ID, "play-area").is_displayed()  # no piles nor hand once it is over
    browser.find_element(By.ID, "play-again").click()  # the form again, for the next game
    assert browser.find_element(By.ID, "setup").is_displayed()


def test_the_bots_moves_play_back_one_at_a_time(browser, served):
    server, base = served()
    _open_form(browser, base, pace="600")
    _set_seats(browser, ["greedy", "greedy", "human"])  # two bots move before the human's first turn
    browser.find_element(By.ID, "start").click()
    seen_counts, seen_moving, seen_flying = set(), False, False
    started = time.monotonic()
    while not _settled(server)(browser):
        seen_counts.add(len(browser.find_elements(By.CSS_SELECTOR, "#log li")))
        seen_moving |= bool(browser.find_elements(By.CSS_SELECTOR, "#seats .seat.moving"))
        seen_flying |= bool(browser.find_elements(By.CSS_SELECTOR, ".card.flying"))
        assert time.monotonic() - started < 60
        time.sleep(0.05)
    bot_moves = len(server.table.actions)
    assert bot_moves >= 4 and time.monotonic() - started > 0.5 * bot_moves  # paced: about 0.6 s a move
    assert len(seen_counts - {0, bot_moves}) >= 2  # the log grew a move at a time
    assert seen_moving and seen_flying  # the mover highlighted, the moved card travelling
    logged = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#log li")]
    assert len(logged) == bot_moves and logged[-1].startswith(f"{bot_moves}.")  # numbered, newest at the bottom
    assert _last_log_entry_visible(browser)


@pytest.mark.parametrize("width", [1400, 800, 390])
def test_the_score_sheet_fits_at_800_pixels_and_at_phone_width(browser, served, tmp_path, width):
    server, base = served()
    browser.set_window_size(width, 1400 if width == 390 else 1000)
    _open_form(browser, base)
    _set_seats(browser, ["human", "search:samples=2", "greedy"])
    browser.find_element(By.ID, "start").click()
    _wait(browser, _settled(server))
    turn = 0
    while not server.table.results:  # the first round, 8 rounds in the rules: the sheet has every column
        _wait(browser, _settled(server))
        if server.table.results:
            break
        _click_a_move(browser, server, turn)
        turn += 1
        assert turn < 200
    _wait(browser, _settled(server))
    _wait(browser, EC.visibility_of_element_located((By.ID, "score-table")))
    head = browser.find_elements(By.CSS_SELECTOR, "#score-table th")
    assert [h.text for h in head] == ["player", *[f"R{r}" for r in range(1, 9)], "total"]
    assert all(h.is_displayed() for h in head)
    assert _no_horizontal_overflow(browser)
    if width >= 800:  # the round's results fit their column too: no sideways scrolling to reach the totals
        box = browser.find_element(By.CSS_SELECTOR, "#round-result .scroll")
        assert browser.execute_script("return arguments[0].scrollWidth <= arguments[0].clientWidth + 1", box)
    assert not browser.find_element(By.ID, "setup").is_displayed()
    if width == 390:
        browser.execute_script("window.scrollTo(0, 0)")
        browser.save_screenshot(str((_shots() or tmp_path) / "table-phone.png"))


def test_a_misspelt_seat_shows_the_whole_error_and_a_slow_start_shows_it_is_loading(browser, served):
    server, base = served()
    _open_form(browser, base)
    _set_seats(browser, ["human", "greddy"])
    browser.find_element(By.ID, "start").click()
    _wait(browser, lambda d: d.find_element(By.ID, "message").text)
    with pytest.raises(ValueError) as error:
        Offer(server.games_dir).seat("greddy")
    message = browser.find_element(By.ID, "message")
    assert message.text == str(error.value) and message.text.endswith("policy:PATH")
    assert browser.execute_script("const m = arguments[0]; return m.scrollWidth <= m.clientWidth", message)
    assert server.table is None and browser.find_element(By.ID, "setup").is_displayed()
    # A zoo policy takes seconds to load: the page says so until the game is there.
    _set_seats(browser, ["human", "zoo:champion-2p"])
    # Clicked and read in one script: what the click shows before the server answers (with numba's cache warm
    # the answer can come before a second Selenium call would look).
    shown, text, start_disabled = browser.execute_script(
        "document.getElementById('start').click();"
        "const l = document.getElementById('loading');"
        "return [!l.hidden, l.textContent, document.getElementById('start').disabled];"
    )
    assert shown and "loading the policy" in text and start_disabled
    loading = browser.find_element(By.ID, "loading")
    _wait(browser, _settled(server), timeout=120)
    assert not loading.is_displayed() and browser.find_element(By.ID, "message").text == ""


def test_with_players_choosing_their_layouts_the_human_lays_a_row_of_cards(browser, served):
    server, base = served()
    _open_form(browser, base)
    _set_rule(browser, "hand_sizes", "3 4")
    Select(browser.find_element(By.CSS_SELECTOR, "#rule-list [name=layout]")).select_by_visible_text(
        "each player chooses"
    )
    browser.find_element(By.ID, "start").click()
    laid = turn = 0
    while True:
        _wait(browser, _settled(server))
        if server.table.game.is_over:
            break
        view = server.table.view()
        if view.get("candidates"):
            rows = browser.find_elements(By.CSS_SELECTOR, "#candidates .candidate")
            assert len(rows) == len(view["candidates"])
            first = view["candidates"][0]
            faces = [c.get_attribute("data-face") for c in rows[0].find_elements(By.CSS_SELECTOR, ".word .card")]
            assert faces == [f for word in first["cards"] for f in word] + first["unused"]
            rows[0].find_element(By.CSS_SELECTOR, "button.lay").click()
            laid += 1
        else:
            _click_a_move(browser, server, turn)
        turn += 1
        assert turn < 200
    assert laid >= 2 and server.table.game.rounds_completed == 2


def test_a_bad_move_sent_by_hand_is_refused_and_the_page_keeps_the_game(browser, served):
    server, base = served()
    _open_form(browser, base)
    browser.find_element(By.ID, "start").click()
    _wait(browser, _settled(server))
    before = server.table.record()
    status, answer = call(base + "/api/move", {"seat": 0, "action": 63})  # with the page's token, as the page sends
    assert status == 409 and answer["error"].startswith("move 63 is not legal now")
    assert server.table.record() == before
    # The page's own API calls carry the session token; the same move without it is refused.
    status, answer = call(base + "/api/move", {"seat": 0, "action": 63}, headers={"X-Quiddler-Token": None})
    assert status == 403 and "token" in answer["error"] and server.table.record() == before
    browser.refresh()  # a reloaded tab shows the same game
    _wait(browser, _settled(server))
    faces = [c.get_attribute("data-face") for c in browser.find_elements(By.CSS_SELECTOR, "#hand .card")]
    assert faces == [c["face"] for c in server.table.view()["hand"]]
    assert "clickable" in browser.find_element(By.ID, "draw-pile").get_attribute("class")
    assert not browser.find_element(By.ID, "setup").is_displayed()


def test_the_replay_viewer_says_where_games_come_from_when_there_are_none(browser, served):
    _, base = served()
    browser.get(base + "/replay")
    hint = browser.find_element(By.ID, "file-hint")
    _wait(browser, lambda d: hint.is_displayed())
    assert "No saved games yet" in hint.text and "--replay" in hint.text
    assert not browser.find_element(By.ID, "load").is_enabled()


def test_the_replay_viewer_steps_through_a_saved_game(browser, served, tmp_path):
    from quiddler_agents.table.session import TableGame
    from quiddler_env.core.config import QuiddlerConfig

    table = TableGame(["human", "expert"], QuiddlerConfig(hand_sizes=(3, 4)), seed=3)
    table.play_agents()
    while not table.game.is_over:
        table.move(0, table.view()["moves"][-1]["action"])
    games = tmp_path / "replays" / "games.jsonl"
    games.write_text(json.dumps(table.record()) + "\n")
    _, base = served([games])
    browser.get(base + "/replay")
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#file option"))
    assert not browser.find_element(By.ID, "file-hint").is_displayed()
    browser.find_element(By.ID, "load").click()
    _wait(browser, lambda d: "The deal." in d.find_element(By.ID, "move").text)
    hands = browser.find_elements(By.CSS_SELECTOR, "#hands .seat")
    assert len(hands) == 2 and all(len(h.find_elements(By.CSS_SELECTOR, ".card")) == 3 for h in hands)  # face up
    seen = []
    for _ in range(len(table.actions)):
        browser.find_element(By.ID, "next").click()
        seen.append(browser.find_element(By.ID, "move").text)
    assert seen[0].startswith("Move: ") and len(set(seen)) > 1
    assert browser.find_element(By.ID, "where").text.startswith(
        f"position {len(table.actions)} of {len(table.actions)}"
    )
    results = browser.find_elements(By.CSS_SELECTOR, "#round-table tr")
    assert len(results) == 3 and str(table.game.totals[0]) in results[1].text


def _coach_rows(browser):
    return [
        (r.find_elements(By.TAG_NAME, "td")[0].text, r.find_elements(By.TAG_NAME, "td")[1].text)
        for r in browser.find_elements(By.CSS_SELECTOR, "#coach-box .coach-moves tr")
    ]


def _coach_screenshots(browser, folder: Path) -> bool:
    """The coach panel open on this decision, at desktop width (1400 px) and at phone width (390 px)."""
    browser.execute_script("document.getElementById('coach-box').scrollIntoView({block: 'nearest'})")
    browser.save_screenshot(str(folder / "coach-desktop.png"))
    browser.set_window_size(390, 844)
    # The piles, the hand, the coach button and its panel on the phone's screen together.
    browser.execute_script("document.getElementById('piles').scrollIntoView({block: 'start'})")
    assert browser.execute_script(
        "const r = document.getElementById('coach-box').getBoundingClientRect();"
        "return r.bottom <= window.innerHeight && r.right <= window.innerWidth;"
    )
    browser.save_screenshot(str(folder / "coach-phone.png"))
    browser.set_window_size(1400, 1000)
    return True


def test_the_coach_shows_the_moves_of_this_decision_with_their_values(browser, served, tmp_path):
    server, base = served()
    _open_form(browser, base)
    _set_seats(browser, ["human", "search:samples=8"])
    _set_rule(browser, "hand_sizes", "3 4")
    browser.find_element(By.ID, "seed").clear()
    browser.find_element(By.ID, "seed").send_keys("3")  # a deal whose round 2 has a discard before anyone is out
    browser.find_element(By.ID, "start").click()
    _wait(browser, _settled(server))
    server.coaches.clear()  # the server's own coach, with few determinizations to keep the test short
    from quiddler_agents.coach import Coach

    server.coaches[json.dumps(server.table.config.to_dict(), sort_keys=True)] = Coach(server.table.config, samples=8)
    checked = set()
    shots = False
    for turn in range(40):
        if server.table.game.is_over or (len(checked) >= 2 and shots):
            break
        kinds = {m["kind"] for m in server.table.view()["moves"]}
        final = server.table.game.in_final_turn
        assert browser.find_element(By.ID, "coach").is_displayed()
        assert not browser.find_element(By.ID, "coach-box").is_displayed()  # shown only when asked for
        browser.find_element(By.ID, "coach").click()
        _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#coach-box .coach-moves tr"))
        rows = _coach_rows(browser)
        expected = {"draw"} if "draw" in kinds else {"discard"}
        if any(name.startswith(next(iter(expected))) for name, _ in rows):
            checked |= expected
        # Every move weighed shows a signed value in points; the best is marked, and search's move is named.
        assert len(rows) >= 2 and all(value[0] in "+-" and float(value) == float(value) for _, value in rows)
        box = browser.find_element(By.ID, "coach-box").text
        assert "the search bot plays" in box and "Points for you" in box
        best = browser.find_element(By.CSS_SELECTOR, "#coach-box tr.best td").text
        values = [float(v) for _, v in rows]
        assert dict(rows)[best] == rows[values.index(max(values))][1]
        # The page's values are the coach's for this position (same seed: same numbers).
        status, data = call(base + "/api/coach")
        assert status == 200 and [m["move"] for m in data["coach"]["moves"]] == [name for name, _ in rows]
        # The screenshots: a discard in round 2 before anyone went out (the rollouts' values; the results beside).
        if "discard" in expected and len(rows) >= 3 and server.table.results and not shots and not final:
            shots = _coach_screenshots(browser, _shots() or tmp_path)
        _click_a_move(browser, server, turn)
        _wait(browser, _settled(server))
    assert checked == {"draw", "discard"} and shots


def test_the_replay_viewer_shows_the_review_beside_the_replay(browser, served, tmp_path):
    from quiddler_agents.coach import Coach
    from quiddler_agents.table.session import TableGame
    from quiddler_env.core.config import QuiddlerConfig

    table = TableGame(["human", "expert"], QuiddlerConfig(hand_sizes=(3, 4)), seed=3)
    table.play_agents()
    while not table.game.is_over:
        table.move(0, table.view()["moves"][0]["action"])  # draws from the pile, discards the first card
    games = tmp_path / "replays" / "games.jsonl"
    games.write_text(json.dumps(table.record()) + "\n")
    server, base = served([games])
    server.coaches[json.dumps(table.config.to_dict(), sort_keys=True)] = Coach(table.config, samples=8)
    browser.get(base + "/replay")
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#file option"))
    browser.find_element(By.ID, "load").click()
    _wait(browser, lambda d: "The deal." in d.find_element(By.ID, "move").text)
    browser.find_element(By.ID, "review").click()
    _wait(browser, lambda d: d.find_element(By.ID, "review-panel").is_displayed(), timeout=60)
    totals = browser.find_element(By.ID, "review-table").text
    assert "human" in totals and "expert" in totals
    worst = browser.find_elements(By.CSS_SELECTOR, "#review-list li")
    assert worst and "search:" in worst[0].text
    worst[0].click()  # jumps to the position after the costliest move: its loss, and the best move
    text = browser.find_element(By.ID, "move-review").text
    assert text.startswith("Coach: ") and "loss" in text
    if float(text.split("loss ")[1].split(";")[0]) >= 2.0:
        assert "best: " in text and "costly" in browser.find_element(By.ID, "move-review").get_attribute("class")
    shown = browser.find_element(By.ID, "where").text
    assert shown.startswith(f"position {int(worst[0].get_attribute('data-move')) + 1} of")


def test_a_bot_of_a_level_picked_beside_its_seat_plays_that_level(browser, served):
    from quiddler_env.core.levels import LEVELS

    server, base = served()
    _open_form(browser, base)
    _set_seats(browser, ["human", "expert", "random"])
    rows = browser.find_elements(By.CSS_SELECTOR, "#seat-list .seat-row")
    pickers = [row.find_element(By.CSS_SELECTOR, ".seat-level") for row in rows]
    # The levels are the server's (quiddler_env.core.levels.LEVELS), each by name and size, after all the words.
    options = Select(pickers[1]).options
    assert [o.get_attribute("value") for o in options] == ["", *(str(lv.number) for lv in LEVELS)]
    assert options[0].text == "all words"
    assert all(lv.name in o.text and f"{lv.words:,}" in o.text for lv, o in zip(LEVELS, options[1:], strict=True))
    # Bots that find words take a level; you, random and the zoo's policies do not, and the tooltip says why.
    assert pickers[1].is_enabled() and not pickers[0].is_enabled() and not pickers[2].is_enabled()
    assert "no level" in pickers[2].get_attribute("title")
    _set_seats(browser, ["human", "expert", "zoo:champion-2p"])
    assert not pickers[2].is_enabled() and "trained policy" in pickers[2].get_attribute("title")
    _set_seats(browser, ["human", "expert", "greedy"])
    assert pickers[2].is_enabled()
    rows[2].find_element(By.CSS_SELECTOR, ".remove-seat").click()
    Select(pickers[1]).select_by_value("2")
    _set_rule(browser, "hand_sizes", "3")
    browser.find_element(By.ID, "start").click()
    _wait(browser, _settled(server))
    # The server's game seats the bot with its level; the page names it so at the table.
    assert server.table.seats == ["human", "expert:level=2"] and server.table.agents[1].level == 2
    assert "expert:level=2" in browser.find_element(By.CSS_SELECTOR, '#seats .seat[data-seat="1"] .name').text
    turn = 0
    while not server.table.game.is_over:
        _wait(browser, _settled(server))
        if server.table.game.is_over:
            break
        _click_a_move(browser, server, turn)
        turn += 1
        assert turn < 100
    _wait(browser, _settled(server))
    standings = browser.find_element(By.ID, "standings-table").text
    assert "expert:level=2" in standings and "human (you)" in standings


def test_a_card_dragged_onto_the_discard_pile_is_discarded(browser, served):
    from quiddler_env.core import actions as A
    from quiddler_env.core.cards import FACES

    server, base = served()
    _open_form(browser, base)
    _set_rule(browser, "hand_sizes", "4")
    browser.find_element(By.ID, "start").click()
    _wait(browser, _settled(server))
    browser.find_element(By.ID, "draw-pile").click()
    _wait(browser, _settled(server))
    moves = server.table.view()["moves"]
    face = [m for m in moves if m["kind"] == "discard"][0]["face"]
    played = len(server.table.actions)
    # The browser's own HTML5 drag events, as a drag by the mouse fires them: dragstart on the card, dragover and
    # drop on the discard pile, with one DataTransfer between them.
    accepted = browser.execute_script(
        'const card = document.querySelector(`#hand .card[data-face="${arguments[0]}"]`);'
        "const pile = document.getElementById('discard-top');"
        "const data = new DataTransfer();"
        "const fire = (node, type) => { const e = new DragEvent(type, {bubbles: true, cancelable: true,"
        "  dataTransfer: data}); node.dispatchEvent(e); return e.defaultPrevented; };"
        "fire(card, 'dragstart'); fire(pile, 'dragenter'); const over = fire(pile, 'dragover');"
        "fire(pile, 'drop'); fire(card, 'dragend'); return over;",
        face,
    )
    assert accepted  # the pile takes the drop while discarding
    _wait(browser, _settled(server))
    assert server.table.actions[played] == (0, A.DISCARD_BASE + FACES.index(face))
    assert server.table.log[played]["move"] == f"discard {face}"
