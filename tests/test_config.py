"""QuiddlerConfig: defaults from the rule book, validation errors that name the key."""

from __future__ import annotations

import pytest

from quiddler_env.core.config import RULE_KINDS, QuiddlerConfig


def test_defaults_follow_the_rule_book():
    c = QuiddlerConfig()
    assert c.num_players == 2 and c.hand_sizes == (3, 4, 5, 6, 7, 8, 9, 10) and c.num_rounds == 8
    assert (c.min_word_cards, c.two_player_bonus, c.bonus_value) == (2, "longest_word", 10)
    assert (c.score_floor, c.go_out, c.dictionary) == ("round", "optional", "enable")


@pytest.mark.parametrize(
    "key, value, allowed",
    [
        ("num_players", 1, "2..8"),
        ("num_players", 9, "2..8"),
        ("num_players", "2", "2..8"),
        ("hand_sizes", [], "list of 1..16"),
        ("hand_sizes", [3, 12], "each 1..11"),
        ("hand_sizes", "345", "list of"),
        ("min_word_cards", 3, "1 or 2"),
        ("two_player_bonus", "longest", "longest_word, most_words, both"),
        ("bonus_value", 1.5, "integer"),
        ("score_floor", 0, "round, total, none"),
        ("go_out", "always", "optional, forced"),
        ("turn_cap", 0, "positive integer"),
    ],
)
def test_bad_values_name_key_value_and_allowed(key, value, allowed):
    with pytest.raises(ValueError) as err:
        QuiddlerConfig.from_mapping({key: value})
    assert repr(key) in str(err.value) and repr(value) in str(err.value) and allowed in str(err.value)


def test_largest_table_and_hands_fit_the_deck():
    c = QuiddlerConfig(num_players=8, hand_sizes=(11,) * 16)
    assert c.num_players * max(c.hand_sizes) + 2 <= 118


def test_unknown_keys_are_named():
    with pytest.raises(ValueError, match=r"unknown config key\(s\) 'num_player'.*known keys: num_players"):
        QuiddlerConfig.from_mapping({"num_player": 3})


def test_yaml_round_trip(tmp_path):
    c = QuiddlerConfig(num_players=4, hand_sizes=(3, 5), score_floor="none", turn_cap=None)
    path = tmp_path / "rules.yaml"
    import yaml

    path.write_text(yaml.safe_dump(c.to_dict()))
    assert QuiddlerConfig.from_yaml(path) == c
    path.write_text("num_players: [\n")
    with pytest.raises(ValueError, match="not valid YAML"):
        QuiddlerConfig.from_yaml(path)
    path.write_text("- 1\n- 2\n")
    with pytest.raises(ValueError, match="must hold a mapping"):
        QuiddlerConfig.from_yaml(path)
    with pytest.raises(ValueError, match=r"config file .*missing.yaml does not exist"):
        QuiddlerConfig.from_yaml(tmp_path / "missing.yaml")
    path.write_text("")
    assert QuiddlerConfig.from_yaml(path) == QuiddlerConfig()  # an empty file: the rule book


def test_frozen():
    with pytest.raises(AttributeError):
        QuiddlerConfig().num_players = 3  # type: ignore[misc]


def test_every_rule_option_declares_its_help_and_command_line_kind():
    options = QuiddlerConfig.rule_options()
    assert [o.name for o in options] == list(QuiddlerConfig.field_names())
    for o in options:
        assert o.help and o.help == o.help.strip(), o.name
        assert o.kind in (*RULE_KINDS, None), o.name
        assert o.default == getattr(QuiddlerConfig(), o.name), o.name
        if o.kind == "choice":
            assert o.choices and o.default in o.choices, o.name
    # Only the table size is set another way (evaluate.py's --table-size, the envs' num_players).
    assert [o.name for o in options if o.kind is None] == ["num_players"]


def test_declared_choices_are_what_validation_accepts():
    for o in QuiddlerConfig.rule_options():
        if o.choices:
            for choice in o.choices:
                assert getattr(QuiddlerConfig.from_mapping({o.name: choice}), o.name) == choice
            with pytest.raises(ValueError, match=repr(o.name)):
                QuiddlerConfig.from_mapping({o.name: "not-a-choice"})
