"""What every view carries besides the cards: the rule options, which are public."""

from typing import Any

import pytest

from stammtisch.games import TableState, new_game
from stammtisch.rules import ruleset
from stammtisch.rules.base import format_options
from stammtisch.server.fanout import view_bytes, view_head_json


@pytest.mark.parametrize("rid,opts", [
    ("tippen/grupp-1975", {"lone_tapper": "dealer-defends", "knocking": True}),
    ("tippen/dreiblatt-1859", {"max_bete": 9}),
    ("tapp/wuerttemberg-tarock", {"pot": True, "tout_multiplier": 3}),
    ("tapp/modern", {"players": 4, "frage_value": 10}),
])
def test_every_view_carries_the_rule_options(rid: str, opts: dict[str, Any]) -> None:
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


def _play_views_checked(rid: str, opts: dict[str, Any], deals: int, seed: int) -> int:
    """Random deals of a rule set; at every state ``views`` must equal the single views, key
    for key and in key order, for every seat and the spectator in a random order."""
    import random

    import orjson

    rng = random.Random(seed)
    rules = ruleset(rid, opts)
    game = new_game(rules)
    n = rules.players
    checked = 0
    for k in range(deals):
        deck = list(range(game.pack.size))
        rng.shuffle(deck)
        state = game.new_deal(TableState(dealer=k % n), deck)
        while True:
            seats: list[int | None] = [None, *range(n)]
            rng.shuffle(seats)
            expected = [state.view(s) for s in seats]
            got = state.views(seats)
            assert [orjson.dumps(v) for v in got] == [orjson.dumps(v) for v in expected]
            assert [list(v) for v in got] == [list(v) for v in expected]
            # the web table's JSON: each view without its head, the head serialised once
            headless = state.views(seats, head=False)
            assert [view_bytes(game, v) for v in headless] == [orjson.dumps(v) for v in expected]
            assert view_bytes(game, state.view(seats[0], head=False)) == orjson.dumps(expected[0])
            assert all(key not in v for v in headless for key in game.view_head())
            checked += 1
            if state.is_terminal():
                break
            state.apply(rng.choice(state.legal_actions()))
    return checked


@pytest.mark.parametrize("rid,opts", [
    ("tippen/grupp-1975", {"players": 3}),
    ("tippen/grupp-1975", {"players": 5, "knocking": True}),
    ("tippen/grupp-1975", {"sniffing": "modern", "robbing": True}),  # the dealer's own trump card
    ("tippen/grupp-1975", {"sniffing": "1859", "hupf_und_sprung": "double", "schieben": True}),
    ("tippen/dreiblatt-1859", {}),
    ("tippen/loup-1821", {}),
    ("tippen/drei-karten-1821", {}),
    ("tippen/vierblatt-1859", {}),
    ("tippen/meyers-1905", {}),
    ("tippen/katira-1983", {}),
    ("tapp/modern", {}),
    ("tapp/modern", {"players": 4}),
    ("tapp/classic-1879", {}),
    ("tapp/wuerttemberg-tarock", {}),
])
def test_views_of_several_seats_equal_each_seats_own_view(rid: str, opts: dict[str, Any]) -> None:
    """The web table renders all seats' views at once (``views``, sharing the public part);
    a seat must get exactly what ``view`` gives it, nothing of another seat's secrets."""
    assert _play_views_checked(rid, opts, deals=60, seed=7) > 300


def test_the_view_head_is_serialised_once_per_engine_and_the_memory_stays_bounded() -> None:
    import stammtisch.server.fanout as tables

    games = [new_game(ruleset("tippen/grupp-1975", {"stake": 3 * k}))
             for k in range(1, tables.VIEW_HEADS_KEPT + 3)]
    first = view_head_json(games[0])
    assert view_head_json(games[0]) is first  # remembered
    assert first.startswith(b'{"game":"tippen",') and first.endswith(b'"players":4,')
    for game in games:
        view_head_json(game)
        assert len(tables._VIEW_HEADS) <= tables.VIEW_HEADS_KEPT
    # two engines of different options never share a head
    assert view_head_json(games[0]) != view_head_json(games[1])


def test_views_of_no_seats_and_a_seat_outside_the_table() -> None:
    game = new_game(ruleset("tapp/modern"))
    state = game.new_deal(TableState(), list(range(game.pack.size)))
    assert state.views([]) == []
    with pytest.raises(ValueError):
        state.views([0, 7])


@pytest.mark.parametrize("rid", ["tippen/grupp-1975", "tippen/dreiblatt-1859", "tapp/modern",
                                 "tapp/classic-1879"])
def test_a_views_log_is_the_log_redacted_for_the_viewer_however_the_game_remembers_it(
        rid: str) -> None:
    """The game remembers the log entries it rendered (``log_entries``), shared by views.
    Clones that part ways, a log changed in place (world sampling does that) and the next
    deal must all get their own log, entry for entry, and a copy of it."""
    import random

    rng = random.Random(3)
    rules = ruleset(rid, {})
    game = new_game(rules)
    n = rules.players

    def expected(state: Any, viewer: int | None) -> list[list[Any]]:
        partner = state._partner_of_actor(viewer)
        return [[s, game.log_text(s, a, viewer, partner)] for s, a in state.log]

    checked = 0
    for k in range(20):
        deck = list(range(game.pack.size))
        rng.shuffle(deck)
        states = [game.new_deal(TableState(dealer=k % n), deck)]
        while not all(s.is_terminal() for s in states):
            state = rng.choice([s for s in states if not s.is_terminal()])
            state.apply(rng.choice(state.legal_actions()))
            if len(states) < 4 and rng.random() < 0.1:
                states.append(state.clone())  # the two part ways from here
            if rng.random() < 0.1 and len(state.log) > 1:  # an entry replaced in place
                i = rng.randrange(len(state.log) - 1)
                state.log[i] = rng.choice(state.log[:-1])
            for seen in rng.sample(states, len(states)):
                viewer = rng.choice([None, *range(n)])
                log = seen.view(viewer)["log"]
                assert log == expected(seen, viewer)
                log.append(["a consumer's own", "entry"])  # a copy: the game is not changed
                assert seen.view(viewer)["log"] == expected(seen, viewer)
                checked += 1
    assert checked > 500


@pytest.mark.parametrize("rid", ["tippen/grupp-1975", "tapp/modern"])
def test_the_remembered_log_entries_stay_bounded_and_right_when_the_memo_starts_afresh(
        rid: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every entry is remembered, exchanges and discards of many cards too, until a viewer's
    memo holds ``LOG_ENTRIES_KEPT``; then it starts afresh, and views are still right."""
    import random

    from stammtisch.games import engine

    monkeypatch.setattr(engine, "LOG_ENTRIES_KEPT", 9)
    rng = random.Random(5)
    game = new_game(ruleset(rid, {}))
    n = game.num_players
    cleared = False
    for k in range(30):
        deck = list(range(game.pack.size))
        rng.shuffle(deck)
        state = game.new_deal(TableState(dealer=k % n), deck)
        while not state.is_terminal():
            state.apply(rng.choice(state.legal_actions()))
            for viewer in [None, *range(n)]:
                partner = state._partner_of_actor(viewer)
                before = len(game.log_entries.get((viewer, partner), {}))
                assert state.view(viewer)["log"] == [
                    [s, game.log_text(s, a, viewer, partner)] for s, a in state.log]
                memo = game.log_entries[(viewer, partner)]
                assert len(memo) <= 9
                cleared = cleared or len(memo) < before
                # the last entry is remembered whatever its id (multi-card ones too)
                assert state.log[-1] in memo
    assert cleared
