"""What every view carries besides the cards: the rule options, which are public."""

import pytest

from stammtisch.games import TableState, new_game
from stammtisch.rules import ruleset
from stammtisch.rules.base import format_options


@pytest.mark.parametrize("rid,opts", [
    ("tippen/grupp-1975", {"lone_tapper": "dealer-defends", "knocking": True}),
    ("tippen/dreiblatt-1859", {"max_bete": 9}),
    ("tapp/wuerttemberg-tarock", {"pot": True, "tout_multiplier": 3}),
    ("tapp/modern", {"players": 4, "frage_value": 10}),
])
def test_every_view_carries_the_rule_options(rid, opts):
    rules = ruleset(rid, opts)
    game = new_game(rules)
    state = game.new_deal(TableState(), list(range(game.pack.size)))
    for seat in [None, *range(rules.players)]:
        view = state.view(seat)
        assert view["options"] == format_options(rules)
        for key, value in opts.items():
            assert view["options"][key] == value
        view["options"]["players"] = 99  # a consumer's copy: the game is not changed
    assert state.view(0)["options"]["players"] == rules.players
