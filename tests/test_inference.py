"""Inference (``stammtisch.bots.inference``) and the Master level built on it.

The weights of the worlds depend on the deciding seat's view alone (two true deals that differ
only in cards the seat cannot see give the same worlds the same weights); the true deal is
likelier under the policy models than the sampler's average world; a world's own deal replays
to the world; the shipped model loads and gives a distribution; Master plays legally, decides
the same on states the seat cannot tell apart, and repeats for a seed.
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_bots_search import deal_states

from stammtisch.bots import make_bot
from stammtisch.bots.inference import (
    FEATURES,
    HeuristicPolicy,
    action_features,
    learned_policy,
    log_likelihood,
    make_policy,
    others_decided,
    replay,
    systematic_picks,
    weighted_worlds,
    world_deck,
)
from stammtisch.bots.pimc import PimcBot
from stammtisch.rules import PRESETS, ruleset
from stammtisch.table import Table, draw_first_dealer

GAMES = [("tapp/modern", 3), ("tippen/grupp-1975", 4)]


def states_of(rid: str, players: int, seed: int, deals: int = 1, pilot: str = "club") -> list[tuple[Any, int]]:
    return deal_states(ruleset(rid, {"players": players}), seed=seed, deals=deals, pilot=pilot)


@pytest.mark.parametrize("rid,options", [(rid, {}) for rid in sorted(PRESETS)] + [
    ("tapp/modern", {"players": 4}), ("tapp/modern", {"rufer_in_tapp": "swap"}),
    ("tapp/modern", {"pack": "skat32", "players": 4, "rufer_in_tapp": "swap"})])
def test_a_worlds_own_deal_replays_to_the_world(rid, options):
    """The deck rebuilt from a sampled world, dealt by the engine and replayed with the world's
    log, is the world again: every earlier decision is seen in the world's own cards."""
    rules = ruleset(rid, options)
    rng = random.Random(4)
    for state, seat in deal_states(rules, seed=8, deals=3)[::2]:
        for s in {seat, (seat + 1) % rules.players}:
            world = state.resample(s, rng)
            steps = list(replay(world))
            assert [(actor, action) for _, actor, action in steps] == world.log
            again = world.game.new_deal(world.table, world_deck(world))
            for _, action in world.log:
                again.apply(action)
            assert again.fingerprint() == world.fingerprint()


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game=st.sampled_from(GAMES), seed=st.integers(0, 10**6), pick=st.integers(0, 10**6),
       model=st.sampled_from(["heuristic", "learned"]))
def test_the_weights_depend_only_on_the_seats_view(game, seed, pick, model):
    """Two true states that differ only in cards the seat cannot see (the second a world of the
    first) give the same candidate worlds the same weights, and Master decides the same."""
    rid, players = game
    states = [(s, seat) for s, seat in states_of(rid, players, seed % 97) if others_decided(s, seat)]
    state, seat = states[pick % len(states)]
    other = state.resample(seat, random.Random(seed))
    assert other.view(seat) == state.view(seat)
    policy = make_policy(ruleset(rid, {}).family, model)
    worlds_a, weights_a = weighted_worlds(state, seat, random.Random(pick), 12, policy)
    worlds_b, weights_b = weighted_worlds(other, seat, random.Random(pick), 12, policy)
    assert [w.fingerprint() for w in worlds_a] == [w.fingerprint() for w in worlds_b]
    assert weights_a.tolist() == weights_b.tolist()
    family = ruleset(rid, {}).family
    first = make_bot("master", family, random.Random(pick), samples=3).act(state, seat)
    second = make_bot("master", family, random.Random(pick), samples=3).act(other, seat)
    assert first == second


def test_the_weights_see_what_the_others_did():
    """The weights are not all equal once others have decided (a model that ignored the
    actions would weigh every world alike), and they sum to one."""
    uneven = 0
    for rid, players in GAMES:
        policy = make_policy(ruleset(rid, {}).family, "heuristic")
        for state, seat in states_of(rid, players, 3)[5::7]:
            if not others_decided(state, seat):
                continue
            _, weights = weighted_worlds(state, seat, random.Random(1), 16, policy)
            assert weights.sum() == pytest.approx(1.0)
            uneven += float(weights.max() - weights.min()) > 1e-9
    assert uneven > 3


@pytest.mark.parametrize("rid,players", GAMES)
@pytest.mark.parametrize("model", ["heuristic", "learned"])
def test_the_true_deal_is_likelier_than_the_samplers_average_world(rid, players, model):
    """Over positions of self-play deals, the log-likelihood of the others' actions in the true
    deal exceeds the log of its mean over uniform worlds: the model prefers the truth."""
    policy = make_policy(ruleset(rid, {}).family, model)
    gains = []
    rng = random.Random(2)
    for state, seat in states_of(rid, players, 11, deals=6)[::3]:
        if not others_decided(state, seat):
            continue
        logs = np.array([log_likelihood(state.resample(seat, rng), seat, policy) for _ in range(24)])
        top = logs.max()
        mean = top + math.log(float(np.exp(logs - top).mean()))
        gains.append(log_likelihood(state, seat, policy) - mean)
    assert len(gains) >= 8
    assert sum(gains) / len(gains) > 0, gains


@pytest.mark.parametrize("family,rid", [("tapp", "tapp/modern"), ("tippen", "tippen/grupp-1975")])
def test_the_shipped_model_loads_and_gives_a_distribution(family, rid):
    policy = learned_policy(family)
    assert policy.weights.shape == (len(FEATURES),)
    assert np.all(np.isfinite(policy.weights))
    seen_play = seen_word = False
    for state, seat in states_of(rid, ruleset(rid, {}).players, 6, deals=3):
        legal = state.legal_actions()
        logs = policy.log_probs(state, seat, legal)
        assert len(logs) == len(legal)
        assert sum(math.exp(x) for x in logs) == pytest.approx(1.0)
        x = action_features(state.observation(seat), legal, legal[0])
        assert x.shape == (len(legal), len(FEATURES))
        seen_play |= bool(x[:, 0].any())
        seen_word |= bool(x[:, 1].any())
    assert seen_play and seen_word
    # the heuristic's choice is what the model leans on most, in the play and before it
    assert policy.weights[FEATURES.index("guide_play")] > 1 and policy.weights[FEATURES.index("guide_word")] > 1


def test_the_heuristic_policy_gives_its_choice_most():
    state, seat = states_of("tapp/modern", 3, 5)[4]
    legal = state.legal_actions()
    logs = HeuristicPolicy("tapp", 0.2).log_probs(state, seat, legal)
    assert sum(math.exp(x) for x in logs) == pytest.approx(1.0)
    assert max(logs) == pytest.approx(math.log(0.8))
    with pytest.raises(ValueError):
        HeuristicPolicy("tapp", 0.0)
    with pytest.raises(ValueError):
        make_policy("tapp", "oracle")


@given(weights=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=20), count=st.integers(1, 50),
       seed=st.integers(0, 1000))
def test_systematic_picks_follow_the_weights(weights, count, seed):
    w = np.array(weights) + 1e-12
    w /= w.sum()
    picks = systematic_picks(w, count, random.Random(seed))
    assert len(picks) == count
    for i, expected in enumerate(w * count):
        assert abs(picks.count(i) - expected) < 1 + 1e-9


@pytest.mark.parametrize("rid,players", GAMES)
def test_master_plays_legal_whole_deals(rid, players):
    """Master in one seat against Expert, a few seeded deals played to their end (the table
    refuses an illegal action); its decisions repeat for a seed."""
    rules = ruleset(rid, {"players": players})
    rng = random.Random(21)
    for deal in range(2):
        table = Table(rules, [f"P{i}" for i in range(players)], draw_first_dealer(rules, rng))
        bots = [make_bot("master" if s == deal % players else "expert", rules.family, random.Random(deal * 10 + s),
                         samples=4) for s in range(players)]
        state = table.start_deal(table.shuffled_deck(rng))
        while not state.is_terminal():
            seat = state.current_player()
            action = bots[seat].act(state, seat)
            assert action in state.legal_actions()
            table.apply_id(action)
    states = [(s, seat) for s, seat in states_of(rid, players, 9) if others_decided(s, seat)][::3]
    first = [make_bot("master", rules.family, random.Random(5), samples=4).act(s, seat) for s, seat in states]
    second = [make_bot("master", rules.family, random.Random(5), samples=4).act(s, seat) for s, seat in states]
    assert first == second


def test_inference_is_off_unless_asked():
    """Expert's searches are the sampler's own worlds: ``inference`` is off by default, so its
    pinned results (tests/test_same_results.py) stand."""
    bot = PimcBot("tapp", random.Random(1))
    assert not bot.inference
    with pytest.raises(ValueError):
        PimcBot("tapp", random.Random(1), inference=True, candidates=0)


@pytest.mark.parametrize("rid,players", GAMES)
@pytest.mark.parametrize("model", ["heuristic", "learned"])
def test_a_worlds_likelihood_is_the_sum_of_its_decisions(rid, players, model):
    """``log_likelihood`` (the learned model's in one batch) adds up ``log_probs`` of each
    other seat's action along the replay, and leaves out the seat's own and forced actions."""
    policy = make_policy(ruleset(rid, {}).family, model)
    for state, seat in states_of(rid, players, 13)[::5]:
        world = state.resample(seat, random.Random(3))
        total = 0.0
        for step, actor, action in replay(world):
            legal = step.legal_actions()
            if actor != seat and len(legal) > 1:
                total += policy.log_probs(step, actor, legal)[legal.index(action)]
        assert log_likelihood(world, seat, policy) == pytest.approx(total)


def test_the_bench_prints_one_line_per_game_and_model(capsys):
    import importlib.util
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "bench" / "inference.py"
    spec = importlib.util.spec_from_file_location("bench_inference", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    bench.main(["--deals", "1", "--worlds", "4", "--every", "4", "--bots", "club"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(d["ruleset"], d["model"]) for d in lines] == [
        (rid, model) for rid, _ in GAMES for model in ("uniform", "heuristic", "learned")]
    for d in lines:
        assert d["positions"] > 0 and 0.0 <= d["placed_right"] <= 1.0 and d["card_loglik"] < 0
        assert (d["true_world_gain"] == 0.0) == (d["model"] == "uniform")


def test_master_searches_its_tippen_taps_and_exchanges_and_never_asks_the_equilibrium(monkeypatch):
    """Master's Tippen decisions before the play are searched over its weighed worlds, as its
    card play is: played on from the same deals, the search's taps and exchanges paid more than
    the equilibrium's where the two differed (docs/performance.md). Neither level asks it."""
    import stammtisch.bots.equilibrium as equilibrium
    from stammtisch.bots.pimc import _in_play

    asked: list[str] = []

    def record(state, seat, rng):
        asked.append(state.action_to_string(state.legal_actions()[-1]))
        return state.legal_actions()[-1]

    monkeypatch.setattr(equilibrium, "equilibrium_action", record)
    rules = ruleset("tippen/grupp-1975", {"players": 4})
    rng = random.Random(4)
    table = Table(rules, [f"P{i}" for i in range(4)], draw_first_dealer(rules, rng))
    master = make_bot("master", "tippen", random.Random(1), samples=2)
    expert = make_bot("expert", "tippen", random.Random(2), samples=2)
    assert master.inference and not master.equilibrium
    before_play = 0
    for _ in range(3):
        state = table.start_deal(table.shuffled_deck(rng))
        while not state.is_terminal():
            seat = state.current_player()
            legal = state.legal_actions()
            action = (master if seat == 0 else expert).act(state, seat)
            before_play += seat == 0 and len(legal) > 1 and not _in_play(state.observation(seat))
            table.apply_id(action)
    assert before_play > 0 and asked == []


def test_training_learns_the_actions_of_its_records(tmp_path):
    """scripts/train_inference.py (scikit-learn) on the records of a short heuristic self-play:
    the weights it writes give the actions taken more probability than a uniform guess does."""
    import importlib.util
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    records = tmp_path / "records"
    subprocess.run([sys.executable, "-m", "stammtisch", "simulate", "tapp/modern", "-n", "3", "--deals", "12",
                    "--seed", "4", "--records", str(records)], check=True, capture_output=True, timeout=120)
    spec = importlib.util.spec_from_file_location("train_inference", root / "scripts" / "train_inference.py")
    assert spec is not None and spec.loader is not None
    train = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(train)
    out = tmp_path / "weights.json"
    train.main(["--records", f"tapp={records}", "--out", str(out), "--temper", "tapp=0.5"])
    data = json.loads(out.read_text())
    assert data["temper"] == {"tapp": 0.5} and data["trained_on"]["tapp"]["deals"] == 12
    w = np.array(data["weights"]["tapp"])
    x, y, starts, _ = train.decisions(records, "tapp")
    learned = uniform = 0.0
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(y)
        scores = x[start:end] @ w
        log_p = scores - np.log(np.exp(scores - scores.max()).sum()) - scores.max()
        learned += float(log_p[y[start:end] == 1][0])
        uniform -= math.log(end - start)
    assert learned > uniform + 0.5 * len(starts)  # far likelier than a guess, per decision


def test_the_declaring_bench_compares_two_deciders_exactly_where_they_differ(monkeypatch):
    """bench/declaring.py: a difference is kept for each tap or exchange where two deciders choose
    differently, none where they agree, and it is the seat's net played on from each choice by the
    same continuation (the same seed gives the same net)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "bench" / "declaring.py"
    spec = importlib.util.spec_from_file_location("bench_declaring", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)

    class Last:
        def act(self, state, seat):
            return state.legal_actions()[-1]

    class First:
        def act(self, state, seat):
            return state.legal_actions()[0]

    monkeypatch.setattr(bench, "DECIDERS", {"search": Last, "equilibrium": First, "expert": First})
    found, decisions = bench.compare("tippen/grupp-1975", 1, 2, 5)
    declared = decisions["declare"]
    assert declared > 0
    assert len(found[("declare", "search", "equilibrium")]) == declared  # first and last always differ
    assert len(found[("declare", "search", "expert")]) == declared
    assert ("declare", "equilibrium", "expert") not in found  # they always agree
    rules = ruleset("tippen/grupp-1975", {"players": 4})
    table = Table(rules, [f"P{i}" for i in range(4)], draw_first_dealer(rules, random.Random(3)))
    state = table.start_deal(table.shuffled_deck(random.Random(4)))
    seat, legal = state.current_player(), state.legal_actions()
    nets = [bench.played_on(state, legal[-1], seat, 77) for _ in range(2)]
    assert nets[0] == nets[1] and not state.is_terminal()
    # the differences 1 and 3: mean 2, standard deviation 2 ** 0.5, the interval 2 ± 1.96
    assert bench.summary([1.0, 3.0], 4) == {"decisions": 4, "differ": 2, "mean_where_they_differ": 2.0,
                                            "ci": [0.04, 3.96], "per_decision": 1.0}
