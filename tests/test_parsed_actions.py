"""``EngineState.string_to_action`` remembers parses by text (``EngineGame.parsed_actions``):
remembered or not, every text means what the game's own parse says, a refused text is refused
every time, and the memo stays bounded."""

from __future__ import annotations

import random

import pytest

from stammtisch.games import IllegalAction, TableState, new_game
from stammtisch.games import engine as engine_module
from stammtisch.rules import PRESETS, ruleset


def _deal(game, rng: random.Random):
    deck = list(range(game.pack.size))
    rng.shuffle(deck)
    return game.new_deal(TableState(dealer=rng.randrange(game.num_players)), deck)


def _variants(text: str) -> list[str]:
    """The same action written as players may type it."""
    return [text, text.upper(), f"  {text} ", text.replace(",", " ")]


@pytest.mark.parametrize("ruleset_id", sorted(PRESETS))
def test_remembered_parses_agree_with_the_games_own(ruleset_id: str) -> None:
    game = new_game(ruleset(ruleset_id, {}))
    rng = random.Random(7)
    for _ in range(6):
        state = _deal(game, rng)
        while not state.is_terminal():
            for a in state.legal_actions():
                text = state.action_to_string(a)
                for variant in _variants(text):
                    try:
                        expected: int | str = game.string_to_action(variant)
                    except IllegalAction as e:
                        expected = e.rule
                    for _ in range(2):  # the first parse, then the remembered one
                        try:
                            got: int | str = state.string_to_action(variant)
                        except IllegalAction as e:
                            got = e.rule
                        assert got == expected, (variant, got, expected)
                assert game.parsed_actions[text] == a
            state.apply(rng.choice(state.legal_actions()))


def test_refused_texts_are_refused_every_time_and_never_remembered() -> None:
    game = new_game(ruleset("tippen/grupp-1975", {}))
    state = _deal(game, random.Random(1))
    for bad in ["bogus", "play:ZZ", "", "exchange:C7,C7", "play:", 17, None, ["tap"]]:
        for _ in range(2):
            with pytest.raises(IllegalAction):
                state.string_to_action(bad)  # type: ignore[arg-type]
    assert all(type(k) is str for k in game.parsed_actions)
    assert not {"bogus", "play:ZZ", "", "exchange:C7,C7", "play:"} & set(game.parsed_actions)


def test_the_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine_module, "PARSED_ACTIONS_KEPT", 5)
    game = new_game(ruleset("tippen/grupp-1975", {}))
    state = _deal(game, random.Random(1))
    texts = [f"{' ' * k}tap" for k in range(10)] + ["x" * 30 + "tap"]
    for text in texts[:10]:
        assert state.string_to_action(text) == game.string_to_action("tap")
    assert len(game.parsed_actions) == 5
    long_text = " " * (engine_module.PARSED_TEXT_LIMIT + 1) + "tap"
    game.parsed_actions.clear()
    assert state.string_to_action(long_text) == game.string_to_action("tap")
    assert long_text not in game.parsed_actions
