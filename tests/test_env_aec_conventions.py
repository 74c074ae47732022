"""The AEC env's conventions researchers rely on: `state()` / `state_space` (privileged, for critics), deep copies
and pickles of a game in play, and `render_mode="rgb_array"` (Gymnasium's RecordVideo through `SelfPlayEnv`)."""

from __future__ import annotations

import copy
import pickle
import re
import warnings

import numpy as np
import pytest
from pettingzoo.test import render_test
from pettingzoo.test.state_test import test_state as pz_test_state
from pettingzoo.test.state_test import test_state_space as pz_test_state_space

from quiddler_env.core.cards import COUNTS, NUM_FACES
from quiddler_env.core.game import Phase
from quiddler_env.core.observation import encode_observation, observation_layout
from quiddler_env.envs import render_image
from quiddler_env.envs.quiddler_v0 import env, raw_env
from quiddler_env.envs.selfplay import SelfPlayEnv
from quiddler_env.envs.state import encode_state, state_layout

pytestmark = [
    pytest.mark.filterwarnings("ignore:Observation is not a NumPy array"),
    pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be"),
]

BLUFFS = {"challenges": True, "layout": "choose", "vocabularies": ["enable:0.5:3"]}


def _random_action(aec, rng: np.random.Generator):
    obs, _, terminated, truncated, _ = aec.last()
    if terminated or truncated:
        return None
    legal = np.flatnonzero(obs["action_mask"])
    return int(legal[rng.integers(legal.size)])


# -- state() and state_space ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rules",
    [
        pytest.param({"hand_sizes": [3, 10, 4]}, id="2p"),
        pytest.param({"num_players": 3, "layout": "choose", "hand_sizes": [5, 3]}, id="3p-choose"),
        pytest.param(
            {"num_players": 5, "score_floor": "none", "min_word_cards": 1, "go_out": "forced", "hand_sizes": [3, 8]},
            id="5p-no-floor-forced",
        ),
        pytest.param({"num_players": 8, "hand_sizes": [11, 3], "two_player_bonus": "both"}, id="8p-11-cards"),
        pytest.param({"num_players": 3, "score_floor": "none", "hand_sizes": [4, 6], **BLUFFS}, id="3p-challenges"),
        pytest.param({"turn_cap": None, "bonus_value": 25, "hand_sizes": [3]}, id="2p-no-cap"),
    ],
)
def test_every_state_of_random_games_is_inside_the_state_space(rules):
    aec = env(**rules)
    space = aec.state_space
    assert space.dtype == np.float32 and (space.low < space.high).all()
    raw = aec.unwrapped
    layout = state_layout(raw.num_players, raw.config.challenges)
    assert space.shape == (layout.size,)
    rng = np.random.default_rng(7)
    phases: set[int] = set()
    states = 0
    for game in range(3):
        aec.reset(seed=100 + game)
        for _ in aec.agent_iter():
            state = aec.state()
            assert state.dtype == np.float32 and space.contains(state), np.flatnonzero(
                (state < space.low) | (state > space.high)
            )
            phases.add(int(np.argmax(layout.view(state)["phase"])))
            states += 1
            aec.step(_random_action(aec, rng))
    assert Phase.GAME_OVER in phases and Phase.DISCARD in phases and states > 30
    if raw.config.layout == "choose":
        assert Phase.LAY in phases
    if raw.config.challenges:
        assert Phase.CHALLENGE in phases


def test_pettingzoos_state_checks_pass():
    aec = env(num_players=3, hand_sizes=[3, 4])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # its checks only warn: a warning is a failure here
        pz_test_state_space(aec)
    pz_test_state(aec, num_cycles=100)  # random (often illegal) moves; every state in the space


def _hidden_card_swapped(game, observer: int):
    """A copy of `game` that differs only in what `observer` cannot see: one card of another seat's hand (not one
    it took from the discard pile) swapped for a card of another face in the draw pile."""
    other = copy.copy(game)
    other.hands = [list(h) for h in game.hands]
    other.draw_pile = list(game.draw_pile)
    for seat in range(game.num_players):
        if seat == observer:
            continue
        for f in range(NUM_FACES):
            if game.hands[seat][f] > game.known_taken[seat][f]:
                for i, g in enumerate(other.draw_pile):
                    if g != f:
                        other.hands[seat][f] -= 1
                        other.hands[seat][g] += 1
                        other.draw_pile[i] = f
                        other._go_out_bits = None
                        return other
    raise AssertionError("no hidden card to swap")


@pytest.mark.parametrize("rules", [{}, {"num_players": 4, **BLUFFS}], ids=["plain", "challenges"])
def test_the_state_holds_the_hidden_information_the_observations_lack(rules):
    aec = env(**rules)
    raw = aec.unwrapped
    n = raw.num_players
    rng = np.random.default_rng(3)
    aec.reset(seed=21)
    for _ in range(9):
        aec.step(_random_action(aec, rng))
    game = raw.game
    state = aec.state()
    np.testing.assert_array_equal(state, encode_state(game))  # the batched engine's state is the game's
    view = state_layout(n, raw.config.challenges).view(state)
    np.testing.assert_array_equal(view["hands"], np.asarray(game.hands))
    np.testing.assert_array_equal(view["draw_pile"], np.bincount(game.draw_pile, minlength=NUM_FACES))
    np.testing.assert_array_equal(view["known_taken"], np.asarray(game.known_taken))
    assert view["draw_pile_size"][0] == pytest.approx(len(game.draw_pile) / 118)
    assert np.flatnonzero(view["current_player"]).tolist() == [game.current_player]
    assert np.flatnonzero(view["phase"]).tolist() == [int(game.phase)]
    # Every card is somewhere in the state: hands, draw pile, discard pile (nobody has laid yet).
    cards = view["hands"].sum(axis=0) + view["draw_pile"] + view["discard_pile"]
    np.testing.assert_array_equal(cards, COUNTS)
    obs_layout = observation_layout(n, raw.config.challenges)
    for agent in raw.possible_agents:
        seat = raw.agent_name_mapping[agent]
        obs = aec.observe(agent)["observation"]
        np.testing.assert_array_equal(obs_layout.view(obs)["hand"], view["hands"][seat])
        # A position the seat cannot tell from this one: the same observation, another state.
        other = _hidden_card_swapped(game, seat)
        np.testing.assert_array_equal(encode_observation(other, seat), obs)
        assert not np.array_equal(encode_state(other), state)


def test_the_state_modules_table_is_the_layout():
    from quiddler_env.envs import state as state_module

    rows = re.findall(r"^\| `(\w+)` \| ([^|]+) \|", state_module.__doc__, re.MULTILINE)
    n, k, w = 3, 16, 11
    sizes = {"n": n, "K": k, "W": w}
    layout = state_layout(n, challenges=True)
    assert [name for name, _ in rows] == list(layout.slices)
    for name, size in rows:
        expected = int(np.prod([sizes.get(t, 0) or int(t) for t in size.strip().split("*")]))  # "31*W*n", ...
        assert layout.slices[name].stop - layout.slices[name].start == expected, name


def test_state_before_reset_is_an_error_and_the_docstring_says_privileged():
    with pytest.raises(RuntimeError, match="before reset"):
        raw_env().state()
    assert "PRIVILEGED" in raw_env.state.__doc__ and "never for choosing a move" in raw_env.state.__doc__


# -- deep copies and pickles ----------------------------------------------------------------------------


def _play_out(aec, actions=None, rng=None):
    """Play `aec` to the game's end (the given actions, or random legal ones); returns the actions and, per
    step, what `last()` gave, the rewards, terminations, truncations, infos and the state."""
    played, record = [], []
    for i, agent in enumerate(aec.agent_iter()):
        obs, reward, terminated, truncated, info = aec.last()
        action = _random_action(aec, rng) if actions is None else actions[i]
        record.append(
            (
                agent,
                None if obs is None else {k: v.copy() for k, v in obs.items()},
                reward,
                terminated,
                truncated,
                copy.deepcopy(info),
                dict(aec.rewards),
                dict(aec.terminations),
                dict(aec.truncations),
                aec.state(),
            )
        )
        played.append(action)
        aec.step(action)
    return played, record


def _assert_same(a, b):
    assert type(a) is type(b)
    if isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _assert_same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _assert_same(x, y)
    else:
        assert a == b


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
@pytest.mark.parametrize("make", [env, raw_env], ids=["env", "raw_env"])
@pytest.mark.parametrize(
    "rules",
    [
        pytest.param({"hand_sizes": [3, 4, 5]}, id="2p"),
        pytest.param({"num_players": 3, "layout": "choose", "hand_sizes": [4, 3]}, id="3p-choose"),
        pytest.param({"num_players": 3, "hand_sizes": [4, 3], **BLUFFS}, id="3p-challenges"),
    ],
)
def test_a_copy_mid_game_plays_on_exactly_as_the_original(rules, make, how):
    original = make(**rules)
    rng = np.random.default_rng(5)
    original.reset(seed=8)
    for _ in range(17):
        original.step(_random_action(original, rng))
    twin = copy.deepcopy(original) if how == "deepcopy" else pickle.loads(pickle.dumps(original))
    assert type(twin) is type(original) and twin.unwrapped is not original.unwrapped
    before = (original.agent_selection, original.state(), original.last(), dict(original.rewards))
    actions, twin_record = _play_out(twin, rng=np.random.default_rng(9))
    assert twin_record[-1][3]  # the copy played to the game's end
    # Playing the copy left the original as it was ...
    _assert_same(before, (original.agent_selection, original.state(), original.last(), dict(original.rewards)))
    # ... and the original, given the same moves, plays the same game: observations, rewards, infos, states.
    _, original_record = _play_out(original, actions=actions)
    _assert_same(original_record, twin_record)
    # The copy goes on like the original too: the next game after a reset without a seed.
    original.reset()
    twin.reset()
    _assert_same(original.state(), twin.state())


def test_a_pickled_fresh_env_and_the_seed_stream_survive():
    fresh = pickle.loads(pickle.dumps(env(num_players=3)))
    with pytest.raises(RuntimeError, match="before reset"):
        fresh.unwrapped.state()
    a, b = env(hand_sizes=[3]), None
    a.reset(seed=4)
    b = copy.deepcopy(a)
    for _ in range(2):  # the unseeded resets continue the same stream in both
        a.reset()
        b.reset()
        _assert_same(a.state(), b.state())


# -- rendering as an image ------------------------------------------------------------------------


def test_rgb_array_frames_keep_their_shape_and_follow_the_game():
    aec = env(num_players=3, render_mode="rgb_array", hand_sizes=[3, 4])
    rng = np.random.default_rng(2)
    aec.reset(seed=6)
    first = aec.render()
    assert first.dtype == np.uint8 and first.shape == render_image.image_shape(3)
    frames = [first]
    for _ in aec.agent_iter():
        aec.step(_random_action(aec, rng))
        frame = aec.render()
        assert frame.dtype == np.uint8 and frame.shape == first.shape
        assert not np.array_equal(frame, frames[-1])  # every move shows (a new card, the last move's line)
        frames.append(frame)
    assert len(frames) > 10


def test_the_cards_are_drawn_by_face_where_the_hands_are():
    cards = np.stack(render_image.CARDS)
    flat = cards.reshape(len(cards), -1)
    assert len({row.tobytes() for row in flat}) == NUM_FACES  # no two faces look alike
    assert not any(np.array_equal(c, render_image.CARD_BACK_IMAGE) for c in cards)
    for view in ("all", "current"):
        aec = raw_env(num_players=3, render_mode="rgb_array", render_view=view)
        aec.reset(seed=1)
        image = aec.render()
        game = aec.game
        for seat in range(3):
            faces = [f for f in range(NUM_FACES) for _ in range(game.hands[seat][f])]
            shown = view == "all" or seat == game.current_player
            for k, f in enumerate(faces):
                x, y = render_image.hand_origin(seat, k)
                region = image[y : y + render_image.CARD_H, x : x + render_image.CARD_W]
                expected = render_image.CARDS[f] if shown else render_image.CARD_BACK_IMAGE
                np.testing.assert_array_equal(region, expected)
        x, y = render_image.DISCARD_ORIGIN
        region = image[y : y + render_image.CARD_H, x : x + render_image.CARD_W]
        np.testing.assert_array_equal(region, render_image.CARDS[game.discard_pile[-1]])


def test_the_font_draws_text_and_clips_it():
    image = np.zeros((20, 30, 3), dtype=np.uint8)
    render_image.draw_text(image, 25, 15, "QUIDDLER 123", (255, 255, 255), 2)  # runs off the image: clipped
    assert image.any() and image[:15, :25].sum() == 0
    a, b = (np.zeros((7, 5, 3), dtype=np.uint8) for _ in range(2))
    render_image.draw_text(a, 0, 0, "a", (1, 1, 1))
    render_image.draw_text(b, 0, 0, "A", (1, 1, 1))
    np.testing.assert_array_equal(a, b)


def test_pettingzoo_render_test_and_gymnasiums_checker_take_the_image():
    def is_frame(frame):
        return frame.dtype == np.uint8 and frame.shape == render_image.image_shape(2) and frame.std() > 0

    render_test(lambda render_mode: env(render_mode=render_mode, hand_sizes=[3]), custom_tests={"rgb_array": is_frame})
    from gymnasium.utils.env_checker import check_env, env_render_passive_checker

    selfplay = SelfPlayEnv(render_mode="rgb_array", hand_sizes=[3])
    assert "rgb_array" in selfplay.metadata["render_modes"]
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*(spec|alternative render modes).*")
        check_env(selfplay, skip_render_check=False)
    selfplay.reset(seed=0)
    env_render_passive_checker(selfplay)
    assert is_frame(selfplay.render())


@pytest.mark.slow  # moviepy writes the video with an ffmpeg process
def test_record_video_records_a_game(tmp_path):
    pytest.importorskip("moviepy")
    from gymnasium.wrappers import RecordVideo

    recorded = RecordVideo(
        SelfPlayEnv(render_mode="rgb_array", hand_sizes=[3], render_view="all"),
        str(tmp_path / "videos"),
        episode_trigger=lambda episode: True,
        disable_logger=True,
    )
    rng = np.random.default_rng(0)
    recorded.reset(seed=0)
    done = False
    while not done:
        legal = np.flatnonzero(recorded.unwrapped.action_masks())
        _, _, terminated, truncated, _ = recorded.step(int(rng.choice(legal)))
        done = terminated or truncated
    recorded.close()
    videos = list((tmp_path / "videos").glob("*.mp4"))
    assert videos and videos[0].stat().st_size > 0
