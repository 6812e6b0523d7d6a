"""The OpenSpiel games: OpenSpiel's random_sim_test (with serialisation) for every preset,
MCTSBot playing whole deals, information states that hide other seats' cards, the deal's chance
nodes, resampling through the engine, and refusals of bad input."""

from __future__ import annotations

import random

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import mcts

from stammtisch.envs import _engine
from stammtisch.envs.openspiel import SHORT_NAMES, load
from stammtisch.games import TableState, new_game
from stammtisch.rules import RuleError, ruleset, ruleset_ids

SIMS = 3  # random deals per preset in random_sim_test (each checks every state's strings and tensors)


@pytest.mark.parametrize("rid", ruleset_ids())
def test_random_sim_test_with_serialisation_passes(rid: str) -> None:
    pyspiel.random_sim_test(load(rid), num_sims=SIMS, serialize=True, verbose=False)


@pytest.mark.parametrize(("rid", "params"), [
    ("tippen/grupp-1975", {"players": 5, "knocking": True, "sniffing": "modern", "robbing": True}),
    ("tippen/meyers-1905", {"schieben": True, "hupf_und_sprung": "double", "max_bete": 6, "dealer": 2}),
    ("tapp/modern", {"players": 4, "pack": "skat32", "normalize_rewards": True}),
])
def test_random_sim_test_passes_with_parameters(rid: str, params: dict) -> None:
    pyspiel.random_sim_test(load(rid, **params), num_sims=SIMS, serialize=True, verbose=False)


def test_short_names_and_parameters_load_through_pyspiel() -> None:
    assert SHORT_NAMES["tippen/grupp-1975"] == "python_tippen_grupp_1975"
    game = pyspiel.load_game("python_tippen_grupp_1975(players=3,stake=6)")
    assert game.num_players() == 3
    assert game.get_parameters()["stake"] == 6


def _play_out(game, bots, rng: np.random.RandomState):
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[rng.randint(len(outcomes))][0])
        else:
            state.apply_action(bots[state.current_player()].step(state))
    return state


@pytest.mark.parametrize("rid", ["tippen/grupp-1975", "tapp/modern"])
def test_openspiels_mcts_bot_plays_whole_deals(rid: str) -> None:
    game = load(rid)
    rng = np.random.RandomState(3)
    evaluator = mcts.RandomRolloutEvaluator(1, rng)
    bots = [mcts.MCTSBot(game, 2.0, 10, evaluator, random_state=rng) for _ in range(game.num_players())]
    state = _play_out(game, bots, rng)
    returns = state.returns()
    assert state.is_terminal() and len(returns) == game.num_players()
    assert returns == [float(r) for r in state.engine.returns()]


def test_the_deal_is_one_card_per_chance_node_and_only_the_cards_the_rules_read() -> None:
    game = load("tippen/drei-karten-1821", players=3, tricks=1, stake=1)
    state = game.new_initial_state()
    for k in range(3):  # 3 players × 1 card, no turned card under dealer-last
        assert state.is_chance_node()
        outcomes = state.chance_outcomes()
        assert len(outcomes) == 32 - k and abs(sum(p for _, p in outcomes) - 1) < 1e-12
        state.apply_action(outcomes[0][0])
    assert not state.is_chance_node()
    assert load("tapp/modern").new_initial_state().chance_outcomes()[0][1] == pytest.approx(1 / 36)


@pytest.mark.parametrize("rid", [r for r in ruleset_ids() if r.startswith("tippen/")])
def test_cards_below_the_positions_read_never_change_a_deal(rid: str) -> None:
    """Two decks that agree on the first deck_positions_read cards give the same deal."""
    game = new_game(ruleset(rid))
    read = _engine.deck_positions_read(game)
    rng = random.Random(rid)
    for _ in range(30):
        deck = list(range(game.pack.size))
        rng.shuffle(deck)
        tail = deck[read:]
        other = deck[:read] + rng.sample(tail, len(tail))
        a, b = game.new_deal(TableState(), deck), game.new_deal(TableState(), other)
        while not a.is_terminal():
            assert a.legal_actions() == b.legal_actions()
            assert [a.view(s) for s in range(game.num_players)] == [b.view(s) for s in range(game.num_players)]
            action = rng.choice(a.legal_actions())
            a.apply(action)
            b.apply(action)
        assert a.returns() == b.returns()


def test_information_state_hides_other_seats_cards_and_recalls_the_log() -> None:
    game = load("tippen/meyers-1905")
    base = [5, 9, 13, 17, 21, 25, 29, 2, 6, 10, 14, 18, 22]  # 4 hands of 3 and the turned card
    swapped = list(base)
    # round one deals deck positions 0…3 to seats 1, 2, 3, 0 (forehand first, the dealer last)
    swapped[1], swapped[2] = base[2], base[1]  # swap a card between seats 2 and 3
    states = []
    for deck in (base, swapped):
        s = game.new_initial_state()
        for c in deck:
            s.apply_action(c)
        states.append(s)
    a, b = states
    for seat in (0, 1):
        assert a.information_state_string(seat) == b.information_state_string(seat)
        np.testing.assert_array_equal(a.information_state_tensor(seat), b.information_state_tensor(seat))
    assert a.information_state_string(2) != b.information_state_string(2)
    before = a.information_state_string(0)
    word = a.action_to_string(a.current_player(), a.legal_actions()[0])
    a.apply_action(a.legal_actions()[0])
    after = a.information_state_string(0)
    assert after != before and f'"{word}"' in after  # the log recalls the word
    assert '"log"' in after and '"log"' not in a.observation_string(0)


def test_resample_from_infostate_uses_the_engines_resample(monkeypatch: pytest.MonkeyPatch) -> None:
    game = load("tippen/meyers-1905")
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    engine_cls = type(state.engine)
    if not hasattr(engine_cls, "resample"):
        with pytest.raises(pyspiel.SpielError, match="needs the engine's State.resample"):
            state.resample_from_infostate(1, pyspiel.UniformProbabilitySampler(0.0, 1.0))
    calls = []

    def stand_in(self, seat, rng):  # what the engine's resample is asked for, and a state back
        calls.append((seat, type(rng)))
        return self.clone()

    monkeypatch.setattr(engine_cls, "resample", stand_in, raising=False)
    sampled = state.resample_from_infostate(1, pyspiel.UniformProbabilitySampler(0.0, 1.0))
    assert calls == [(1, random.Random)]
    assert sampled.information_state_string(1) == state.information_state_string(1)
    assert sampled.engine is not state.engine


def test_bad_input_is_refused_clearly() -> None:
    with pytest.raises(RuleError) as ours:
        load("tippen/grupp-1967")
    with pytest.raises(RuleError) as cli:
        ruleset("tippen/grupp-1967", [])
    assert str(ours.value) == str(cli.value)
    with pytest.raises(RuleError, match="unknown option 'stakes'"):
        load("tippen/grupp-1975", stakes=4)
    with pytest.raises(RuleError, match="is for 3–5 players"):
        load("tippen/grupp-1975", players=8)
    state = load("tapp/modern").new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[-1][0])
    history = state.history()
    masked = next(a for a in range(state.num_distinct_actions()) if a not in state.legal_actions())
    with pytest.raises(Exception, match=f"action {masked} "):
        state.apply_action(masked)
    assert state.history() == history


def _stand_in_resample(self, seat, rng):
    """A stand-in for the engine's coming State.resample: the true state itself (it tests the
    plumbing only; a real resample deals the unseen cards anew)."""
    return self.clone()


@pytest.mark.parametrize("rid", ["tippen/grupp-1975", "tapp/modern"])
def test_openspiel_ismcts_bot_plays_whole_deals_through_make_bot(rid: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from stammtisch.bots import make_bot
    from stammtisch.envs import openspiel_bot
    from stammtisch.games.tapp import TappState
    from stammtisch.games.tippen import TippenState

    family = rid.split("/")[0]
    engine_cls = TippenState if family == "tippen" else TappState
    if not hasattr(engine_cls, "resample"):
        with pytest.raises(ValueError, match="needs the .* engine's world sampling"):
            make_bot("openspiel-ismcts", family)
        monkeypatch.setattr(engine_cls, "resample", _stand_in_resample, raising=False)
    monkeypatch.setattr(openspiel_bot, "SIMULATIONS", 10)
    rules = ruleset(rid)
    game = new_game(rules)
    rng = random.Random(2)
    bots = [make_bot("openspiel-ismcts", family, random.Random(1))] + [
        make_bot("random", family, random.Random(s)) for s in range(1, rules.players)]
    for deal in range(2):
        deck = list(range(game.pack.size))
        rng.shuffle(deck)
        state = game.new_deal(TableState(dealer=deal), deck)
        moves = 0
        while not state.is_terminal():
            seat = state.current_player()
            action = bots[seat].act(state, seat)
            assert action in state.legal_actions()
            moves += seat == 0
            state.apply(action)
        assert moves > 0


def test_openspiel_ismcts_bot_makes_the_same_moves_for_the_same_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its worlds come from its own seeded stream (OpenSpiel's default sampler is seeded by the
    machine), so the strength bench's duplicate tournaments against it can be repeated."""
    from stammtisch.bots import make_bot
    from stammtisch.envs import openspiel_bot

    monkeypatch.setattr(openspiel_bot, "SIMULATIONS", 20)
    rules = ruleset("tapp/modern")
    game = new_game(rules)

    def moves(seed: int) -> list[int]:
        rng = random.Random(7)
        bots = [make_bot("openspiel-ismcts", "tapp", random.Random(seed)) for _ in range(rules.players)]
        out = []
        for deal in range(2):
            deck = list(range(game.pack.size))
            rng.shuffle(deck)
            state = game.new_deal(TableState(dealer=deal), deck)
            while not state.is_terminal():
                action = bots[state.current_player()].act(state, state.current_player())
                out.append(action)
                state.apply(action)
        return out

    first = moves(3)
    assert moves(3) == first
    assert moves(4) != first  # the seed matters


def test_deal_from_limits_the_chance_outcomes_for_small_research_games() -> None:
    game = load("tippen/drei-karten-1821", players=3, tricks=1, stake=1, deal_from="HAHKHQDA")
    state = game.new_initial_state()
    allowed = {game.new_initial_state().shared.game.pack.card(c) for c in ("HA", "HK", "HQ", "DA")}
    assert {a for a, _ in state.chance_outcomes()} == allowed
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)
    with pytest.raises(Exception, match="needs 3"):
        load("tippen/drei-karten-1821", players=3, tricks=1, stake=1, deal_from="HAHK")
    with pytest.raises(Exception, match="deal_from"):
        load("tippen/drei-karten-1821", players=3, tricks=1, stake=1, deal_from="HAXX")
