"""The browser table in a real browser: headless Chromium (Debian's `chromium` and `chromium-driver`, driven by
Selenium) plays a whole game against greedy by clicking the page, steps through a replay, and a bad move sent by
hand to the server is refused.

`QUIDDLER_SCREENSHOTS=docs` writes the README's screenshots (the table mid-round, a round result) there;
by default they go to the test's temporary folder.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path

import pytest

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
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


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


def test_a_whole_game_against_greedy_by_clicking(browser, served, tmp_path):
    server, base = served()
    browser.get(base + "/")
    _wait(browser, EC.presence_of_element_located((By.CSS_SELECTOR, "#seat-list .seat-spec")))
    specs = browser.find_elements(By.CSS_SELECTOR, "#seat-list .seat-spec")
    assert [s.get_attribute("value") for s in specs] == ["human", "greedy"]
    offered = {o.get_attribute("value") for o in browser.find_elements(By.CSS_SELECTOR, "#agent-specs option")}
    assert {"human", "greedy", "expert", "search", "zoo:champion-2p"} <= offered and "zoo" not in offered
    browser.find_element(By.CSS_SELECTOR, "#rule-box summary").click()
    hand_sizes = browser.find_element(By.CSS_SELECTOR, "#rule-list [name=hand_sizes]")
    hand_sizes.clear()
    hand_sizes.send_keys("3 4 5")
    browser.find_element(By.ID, "seed").clear()
    browser.find_element(By.ID, "seed").send_keys("7")
    browser.find_element(By.ID, "start").click()
    shots = _shots() or tmp_path
    clicks = 0
    mid_round_shot = result_shot = False
    while True:
        _wait(
            browser,
            lambda d: (
                d.find_elements(By.CSS_SELECTOR, "#moves button.move")
                or "Game over" in d.find_element(By.ID, "status").text
            ),
        )
        if "Game over" in browser.find_element(By.ID, "status").text:
            break
        hand = browser.find_elements(By.CSS_SELECTOR, "#hand .card")
        assert hand and all(card.text for card in hand)  # the hand's cards, each with its face and points
        if clicks == 3 and not mid_round_shot:
            browser.save_screenshot(str(shots / "table-mid-round.png"))
            mid_round_shot = True
        rounds_before = len(server.table.results)
        buttons = browser.find_elements(By.CSS_SELECTOR, "#moves button.move")
        log_before = len(server.table.actions)
        drawing = buttons[0].text == "draw"
        (buttons[0] if drawing else buttons[-1]).click()  # draw; then go out when it can, else the last discard
        clicks += 1
        # The server has played the move (and the agents' after it), and the page shows that position.
        _wait(
            browser,
            lambda d, n=log_before: (
                n < int(d.find_element(By.ID, "table").get_attribute("data-played")) == len(server.table.actions)
            ),
        )
        if len(server.table.results) > rounds_before and not result_shot:
            _wait(browser, EC.visibility_of_element_located((By.ID, "round-table")))
            browser.save_screenshot(str(shots / "table-round-result.png"))
            result_shot = True
        assert clicks < 400
    game = server.table.game
    assert game.is_over and game.rounds_completed == 3 and mid_round_shot and result_shot
    status = browser.find_element(By.ID, "status").text
    assert "won" in status
    rows = browser.find_elements(By.CSS_SELECTOR, "#round-table tr")
    assert len(rows) == 1 + 2  # the header and both players
    assert browser.find_element(By.ID, "totals").text == " · ".join(
        f"{label} {total}" for label, total in zip(server.table.seats, game.totals, strict=True)
    )
    assert len(browser.find_elements(By.CSS_SELECTOR, "#chart polyline")) == 2


def test_a_bad_move_sent_by_hand_is_refused_and_the_page_keeps_the_game(browser, served):
    server, base = served()
    browser.get(base + "/")
    _wait(browser, EC.presence_of_element_located((By.CSS_SELECTOR, "#seat-list .seat-spec")))
    browser.find_element(By.ID, "start").click()
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#moves button.move"))
    before = server.table.record()
    status, answer = call(base + "/api/move", {"seat": 0, "action": 63})  # with the page's token, as the page sends
    assert status == 409 and answer["error"].startswith("move 63 is not legal now")
    assert server.table.record() == before
    # The page's own API calls carry the session token; the same move without it is refused.
    status, answer = call(base + "/api/move", {"seat": 0, "action": 63}, headers={"X-Quiddler-Token": None})
    assert status == 403 and "token" in answer["error"] and server.table.record() == before
    browser.refresh()  # a reloaded tab shows the same game
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#moves button.move"))
    names = [b.text for b in browser.find_elements(By.CSS_SELECTOR, "#moves button.move")]
    assert names == [m["name"] for m in server.table.view()["moves"]]


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
