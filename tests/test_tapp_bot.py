"""The heuristic Tapp bot: always legal, uses only the view, sensible choices, beats random."""

import random

import pytest

from stammtisch.bots.tapp import TappHeuristic, strength
from stammtisch.games import TableState
from stammtisch.games.base import new_game
from stammtisch.rules import ruleset

CONFIGS = [("tapp/wuerttemberg-tarock", {}), ("tapp/classic-1879", {"pot": True}),
           ("tapp/modern", {}), ("tapp/modern", {"players": 4}),
           ("tapp/modern", {"pack": "skat32", "rufer_in_tapp": "swap"})]


def play_deal(game, deck, dealer, players):
    s = game.new_deal(TableState(dealer=dealer), deck)
    while not s.is_terminal():
        seat = s.current_player()
        v = s.view(seat)
        legal = v["legal_actions"]
        a = players[seat](v, legal)
        assert a in legal, (a, legal)
        s.apply(s.string_to_action(a))
    return s


@pytest.mark.parametrize("rid, ov", CONFIGS)
def test_bot_always_legal(rid, ov):
    game = new_game(ruleset(rid, ov))
    bot = TappHeuristic(rng=1)
    rng = random.Random(5)
    for i in range(60):
        deck = list(range(game.pack.size))
        rng.shuffle(deck)
        play_deal(game, deck, i % game.num_players, [bot.choose] * game.num_players)


@pytest.mark.parametrize("rid, ov", [("tapp/wuerttemberg-tarock", {}), ("tapp/modern", {})])
def test_bot_beats_random_players(rid, ov):
    game = new_game(ruleset(rid, ov))
    bot = TappHeuristic(rng=2)
    rng = random.Random(7)

    def rand(view, legal):
        return rng.choice(legal)

    total = 0
    for i in range(300):
        deck = list(range(game.pack.size))
        rng.shuffle(deck)
        seat = i % 3
        players = [rand] * 3
        players[seat] = bot.choose
        s = play_deal(game, deck, i % 3, players)
        total += s.returns()[seat]
    assert total > 0


def test_bid_from_strength():
    bot = TappHeuristic(0)
    strong = ["HA", "HT", "HK", "HQ", "HJ", "H9", "SA", "CA", "DA", "ST", "S9"]
    weak = ["H6", "D7", "D8", "C6", "C7", "C9", "S6", "S7", "S8", "DJ", "CQ"]
    assert strength(strong, "H") > strength(weak, "H")
    view = {"phase": "auction", "hand": strong, "ruleset": "tapp/wuerttemberg-tarock", "log": []}
    assert bot.choose(view, ["pass", "bid:frage", "bid:solo"]) in ("bid:frage", "bid:solo")
    view["hand"] = weak
    assert bot.choose(view, ["pass", "bid:frage", "bid:solo"]) == "pass"
    low = ["H6", "H7", "D6", "D7", "D8", "C6", "C7", "C8", "S6", "S7", "S8"]
    view = {"phase": "declare", "hand": low, "ruleset": "tapp/modern"}
    # a hand of low cards is a Bettel hand
    assert bot.choose(view, ["play", "weg"]) == "play"
    view["phase"] = "contract"
    assert bot.choose(view, ["pass", "contract:frage", "contract:bettel"]) == "contract:bettel"
    view.update(phase="declare", hand=weak)
    assert bot.choose(view, ["play", "weg"]) == "weg"


def test_discard_keeps_trumps_and_aces():
    bot = TappHeuristic(0)
    hand = ["HA", "HT", "H6", "SA", "ST", "S6", "C6", "C7", "CK", "DA", "D6", "D7", "DQ", "DJ"]
    from itertools import combinations
    legal = ["discard:" + ",".join(c) for c in combinations(hand, 3)]
    a = bot.choose({"phase": "discard", "hand": hand, "trump": "H"}, legal)
    discarded = a.split(":")[1].split(",")
    assert not any(c[0] == "H" or c[1] == "A" for c in discarded)


def test_defender_smears_points_on_partner_trick():
    bot = TappHeuristic(0)
    # seat 0 defends; declarer 1 has already played; partner 2 is winning; seat 0 is last
    view = {"phase": "play", "seat": 0, "declarer": 1, "players": 3, "trump": "H",
            "contract": "solo", "hand": ["SA", "S7", "ST"],
            "trick": [[1, "S9"], [2, "SK"]]}
    assert bot.choose(view, ["play:S7", "play:ST", "play:SA"]) == "play:SA"


def test_wins_cheaply_and_plays_low_in_bettel():
    bot = TappHeuristic(0)
    view = {"phase": "play", "seat": 1, "declarer": 1, "players": 3, "trump": "H",
            "contract": "solo", "hand": ["SA", "SK", "S6"], "trick": [[0, "SQ"]]}
    assert bot.choose(view, ["play:S6", "play:SK", "play:SA"]) == "play:SK"
    view.update(contract="bettel", trump=None, trick=[[0, "SQ"]])
    assert bot.choose(view, ["play:S6", "play:SK", "play:SA"]) == "play:S6"
    view.update(trick=[])
    assert bot.choose(view, ["play:S6", "play:SK", "play:SA"]) == "play:S6"
