"""The same seed gives the same results: simulation summaries byte for byte, the game records,
every bot's decisions (the heuristic, pimc, its hints), the engines' observable
behaviour (``scripts/behaviour_hash.py``) and the RL observations, pinned as digests.

The digests were taken from the engines and bots before they were made faster; a change of
speed leaves every one of them as it is. A change of behaviour made on purpose changes a digest
here, with a line in its commit saying why.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from stammtisch.bots import make_bot
from stammtisch.bots.pimc import PimcBot, advise
from stammtisch.cli.simulate_cmd import summary_json
from stammtisch.envs.core import DealTable
from stammtisch.games import TableState, new_game
from stammtisch.rules import PRESETS, ruleset
from stammtisch.sim.batch import choose_backend
from stammtisch.sim.simulate import SimulationJob, bots_per_seat, default_names, run_simulation

ROOT = Path(__file__).resolve().parents[1]


def digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:24]


# ----------------------------------------------------------------------------- simulate
SIMULATIONS: list[tuple[str, dict[str, Any], list[str], int]] = [
    *((rid, {}, ["heuristic"], 1) for rid in PRESETS),
    ("tippen/grupp-1975", {}, ["beginner", "random", "heuristic"], 2),
    ("tapp/modern", {}, ["beginner", "random", "heuristic"], 2),
    ("tapp/modern", {"players": 4}, ["heuristic"], 3),
    ("tapp/modern", {"pack": "skat32", "rufer_in_tapp": "swap"}, ["heuristic"], 4),
    ("tapp/classic-1879", {"pot": True}, ["beginner", "heuristic"], 5),
    ("tippen/dreiblatt-1859", {"players": 5, "knocking": True, "sniffing": "modern"}, ["heuristic"], 6),
]


def simulation(rid: str, options: dict[str, Any], bots: list[str], seed: int) -> list[str]:
    """Digests of the JSON line ``stammtisch simulate --json`` prints and of the game records."""
    rules = ruleset(rid, options)
    records: list[dict[str, Any]] = []
    job = SimulationJob(rules, tuple(default_names(rules.players)), tuple(bots_per_seat(bots, rules.players)),
                        None, keep_records=True)
    run = run_simulation(job, 120, seed, choose_backend(1), 40, None, lambda _c, r: records.append(r))
    data = summary_json(run.summary, rules, rid)
    data.update(seed=seed, chunk_deals=40, complete=run.outcome.complete, problems=run.outcome.problems())
    line = json.dumps(data, ensure_ascii=False)
    return [hashlib.sha256(line.encode()).hexdigest()[:24], digest(records)]


# ----------------------------------------------------------------------------- heuristic decisions
def heuristic_decisions(rid: str) -> str:
    """The heuristic and beginner bots' decisions along random deals (random detours taken)."""
    rng = random.Random(f"heuristic:{rid}")
    h = hashlib.sha256()
    more = {"players": 4} if rid == "tapp/modern" else {"players": 5} if rid.startswith("tippen/") else {}
    for options in ({}, more):
        game = new_game(ruleset(rid, options))
        for deal in range(40):
            deck = list(range(game.pack.size))
            rng.shuffle(deck)
            state = game.new_deal(TableState(dealer=deal % game.num_players, pot=rng.choice([0, 0, 6, 12])), deck)
            family = game.rules.family
            bots = [make_bot(rng.choice(["heuristic", "beginner"]), family, random.Random(rng.getrandbits(32)))
                    for _ in range(game.num_players)]
            while not state.is_terminal():
                seat = state.current_player()
                action = bots[seat].act(state, seat)
                h.update(f"{seat}:{action};".encode())
                if rng.random() < 0.3:
                    action = rng.choice(state.legal_actions())
                    h.update(f"r{action};".encode())
                state.apply(action)
    return h.hexdigest()[:24]


# ----------------------------------------------------------------------------- search bots
SEARCHES: list[tuple[str, dict[str, Any], int]] = [
    ("tapp/modern", {}, 4), ("tapp/modern", {"players": 4}, 2), ("tapp/classic-1879", {}, 2),
    ("tapp/wuerttemberg-tarock", {}, 2), ("tippen/grupp-1975", {}, 4), ("tippen/dreiblatt-1859", {}, 2),
]


def search_decisions(rid: str, options: dict[str, Any], positions: int) -> tuple[str, str]:
    """At random positions of random deals: pimc's choice (4 worlds; the default budget at the
    first position) and its figures (``PimcBot.advise``), and apart from them the hint's
    (``advise``: the Master's inference, 4 worlds)."""
    rules = ruleset(rid, options)
    game = new_game(rules)
    rng = random.Random(f"search:{rid}:{sorted(options.items())}")
    out: list[Any] = []
    hints: list[Any] = []
    while len(out) < positions:
        deck = list(range(game.pack.size))
        rng.shuffle(deck)
        state = game.new_deal(TableState(dealer=rng.randrange(game.num_players)), deck)
        for _ in range(rng.randrange(40)):
            if state.is_terminal():
                break
            state.apply(rng.choice(state.legal_actions()))
        if state.is_terminal() or len(state.legal_actions()) < 2:
            continue
        k = len(out) + 1
        seat = state.current_player()
        row: list[Any] = [state.action_to_string(PimcBot(rules.family, random.Random(k), 4).act(state, seat))]
        if k == 1:
            row.append(state.action_to_string(PimcBot(rules.family, random.Random(k)).act(state, seat)))
        for advice, rows in ((PimcBot(rules.family, random.Random(k), 4).advise(state, seat), row),
                             (advise(state, seat, seed=k, samples=4), hints)):
            rows.append([advice.action, advice.measure, advice.declarer,
                         [(o.action, round(o.mean, 9), o.worlds, o.good, o.takes) for o in advice.options]])
        out.append(row)
    return digest(out), digest(hints)


# ----------------------------------------------------------------------------- engines, envs
def behaviour(rid: str) -> str:
    """``scripts/behaviour_hash.py`` over 40 deals: views, legal actions, refusals, results."""
    spec = importlib.util.spec_from_file_location("behaviour_hash", ROOT / "scripts" / "behaviour_hash.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return str(module.play(rid, 40, 1)["sha256"])[:24]


ENVS: list[tuple[str, dict[str, Any]]] = [
    ("tapp/modern", {}), ("tapp/modern", {"players": 4}), ("tapp/classic-1879", {}),
    ("tippen/grupp-1975", {}), ("tippen/dreiblatt-1859", {"players": 5, "knocking": True}),
]


def observations(rid: str, options: dict[str, Any]) -> str:
    """Every observation and action mask of the acting seat and the next seat along random
    episodes of the RL environments, and the rewards."""
    opts = dict(options)
    table = DealTable(rid, opts.pop("players", None), session_deals=3, **opts)
    gen = np.random.default_rng(5)
    h = hashlib.sha256()
    for _ in range(12):
        table.reset(gen)
        over = False
        while not over:
            seat = table.current_seat()
            observation, mask = table.observe(seat)
            h.update(observation.tobytes())
            h.update(mask.tobytes())
            h.update(table.observe((seat + 1) % table.num_players)[0].tobytes())
            legal = table.legal_dense()
            rewards, over = table.step(legal[gen.integers(len(legal))])
            if rewards is not None:
                h.update(json.dumps(rewards).encode())
    return h.hexdigest()[:24]


# ----------------------------------------------------------------------------- the pins
PINNED_SIMULATIONS: dict[str, list[str]] = {
    'tippen/drei-karten-1821|{}|["heuristic"]|1': ['d9ea5c40934dd530ab5104c3', 'b5db1b7f672d4459548062b0'],
    'tippen/loup-1821|{}|["heuristic"]|1': ['b00d61c51d53a7033477bf8e', '8cad44038d6cb76a17975505'],
    'tippen/dreiblatt-1859|{}|["heuristic"]|1': ['acaddd40ac1632c5fe37a56e', '6d6b0e188c02186791955948'],
    'tippen/vierblatt-1859|{}|["heuristic"]|1': ['eab8c16e8a263ea92a9e0dc9', '3cd3047214b57288e061151c'],
    'tippen/meyers-1905|{}|["heuristic"]|1': ['00e2375d38febdfc0f1874b5', '1ecb555fe40eb5e9d3c40c73'],
    'tippen/grupp-1975|{}|["heuristic"]|1': ['58689636c371778e3324beb1', '7169a63db6c9dc828b31f401'],
    'tippen/katira-1983|{}|["heuristic"]|1': ['8e7ccff3d8288f94e89b2aad', 'ee63a31350ff45f19796f5ff'],
    'tapp/wuerttemberg-tarock|{}|["heuristic"]|1': ['0c5e9bd50a8c4dd9fff87ccc', '53ab1f1fa76295e938fcfdc4'],
    'tapp/classic-1879|{}|["heuristic"]|1': ['6c9c2193efaa351b605427bf', 'b927073cd144c01ea621e316'],
    'tapp/modern|{}|["heuristic"]|1': ['6d979b039134700f54575bb7', '4d2a2d7f7ce76ebd01adee0a'],
    'tippen/grupp-1975|{}|["beginner", "random", "heuristic"]|2':
        ['8a1d978a996cc971a5899528', '165345ec0c39f943ff641383'],
    'tapp/modern|{}|["beginner", "random", "heuristic"]|2': ['d857e90c503a95fd3c0a1ec4', '74422ce1562f384ba3218450'],
    'tapp/modern|{"players": 4}|["heuristic"]|3': ['17f70a080e3d26421ade30bb', '088ffaa76b51b16b35f2752a'],
    'tapp/modern|{"pack": "skat32", "rufer_in_tapp": "swap"}|["heuristic"]|4':
        ['5bc7b67bbd6c7264182c35f7', '627ff9e2305f083420a7c692'],
    'tapp/classic-1879|{"pot": true}|["beginner", "heuristic"]|5':
        ['5b1a99c14d55c323e699746e', '28c58949b4eeb9c1c7dd4679'],
    'tippen/dreiblatt-1859|{"knocking": true, "players": 5, "sniffing": "modern"}|["heuristic"]|6':
        ['21fed2655aec04d407832946', '57ca99cae2854674723cac47'],
}
PINNED_HEURISTIC: dict[str, str] = {
    'tippen/drei-karten-1821': 'b97bfc7e433733c4b6b9f61f',
    'tippen/loup-1821': '4b191bf7de03652c932aad20',
    'tippen/dreiblatt-1859': 'e733aab5c20b9918f76368f0',
    'tippen/vierblatt-1859': '890c08bd480736175bcc77f7',
    'tippen/meyers-1905': '59adb0050987e62fb004f369',
    'tippen/grupp-1975': '905c28eb6fdca6b61124b9e3',
    'tippen/katira-1983': 'b9a67b0112583ec2f8384e53',
    'tapp/wuerttemberg-tarock': '24763d150868109cad9d2e21',
    'tapp/classic-1879': 'a05960e0f34150a948e7e489',
    'tapp/modern': '731a2751a3ec481641a451ed',
}
PINNED_SEARCH: dict[str, str] = {
    'tapp/modern|{}': '0f64668a46f8363904f071d5',
    'tapp/modern|{"players": 4}': 'ec079924f98e920fd30afc57',
    'tapp/classic-1879|{}': '35694a036b527858d4e61e19',
    'tapp/wuerttemberg-tarock|{}': '362813cc8aad196a357689b2',
    'tippen/grupp-1975|{}': 'c8f3fcea55785aef16b09b77',
    'tippen/dreiblatt-1859|{}': '0d089a061684a2b6cd693b14',
}
#: the hints (``advise``), apart from the bot's own figures since hints became the Master's
PINNED_HINTS: dict[str, str] = {
    'tapp/modern|{}': '2b023f6c30711bd5c71e442d',
    'tapp/modern|{"players": 4}': 'da86b10d09b7a12adbac0540',
    'tapp/classic-1879|{}': '025686f1b2fb443433e2252d',
    'tapp/wuerttemberg-tarock|{}': 'c79c4439d4ba5213a99480ea',
    'tippen/grupp-1975|{}': '22ee0b5af5646211539203b1',
    'tippen/dreiblatt-1859|{}': '6726db9008fa836a376c6768',
}
PINNED_BEHAVIOUR: dict[str, str] = {
    'tippen/drei-karten-1821': '4c10e99f3ead22205ab82ec5',
    'tippen/loup-1821': '6c7b880a8b4bdc2a5eaf4dd4',
    'tippen/dreiblatt-1859': 'b81901788ccd48c2cecdfd32',
    'tippen/vierblatt-1859': 'f686ebdaf027702c242d84fa',
    'tippen/meyers-1905': '4e4b191fbeb70cb0c0513eb9',
    'tippen/grupp-1975': 'f0179689495a075e5e84e344',
    'tippen/katira-1983': '7b220b02de216033e9323410',
    'tapp/wuerttemberg-tarock': '2382e33744ae202af00c80ee',
    'tapp/classic-1879': '24e42492dc500701343d7d0a',
    'tapp/modern': '8f2de6e336a282fdebec1c8a',
}
PINNED_OBSERVATIONS: dict[str, str] = {
    'tapp/modern|{}': '3a7892d7ed7d54c0516f2561',
    'tapp/modern|{"players": 4}': 'a0b622093ac61ba4808af335',
    'tapp/classic-1879|{}': '5f7aa790d394dbe88c11b80b',
    'tippen/grupp-1975|{}': '202f13540e4b0ee20a50d7a3',
    'tippen/dreiblatt-1859|{"knocking": true, "players": 5}': 'f016ef89a94ed884532caf8a',
}


def key(*parts: Any) -> str:
    return "|".join(json.dumps(p, sort_keys=True) if isinstance(p, dict | list) else str(p) for p in parts)


@pytest.mark.parametrize("rid, options, bots, seed", SIMULATIONS)
def test_a_simulation_prints_the_same_summary_and_writes_the_same_records(rid, options, bots, seed):
    assert simulation(rid, options, bots, seed) == PINNED_SIMULATIONS[key(rid, options, bots, seed)]


@pytest.mark.parametrize("rid", list(PRESETS))
def test_the_heuristic_bots_decide_the_same(rid):
    assert heuristic_decisions(rid) == PINNED_HEURISTIC[rid]


@pytest.mark.parametrize("rid, options, positions", SEARCHES)
def test_the_search_bots_and_hints_decide_the_same(rid, options, positions):
    assert search_decisions(rid, options, positions) == (PINNED_SEARCH[key(rid, options)],
                                                         PINNED_HINTS[key(rid, options)])


@pytest.mark.parametrize("rid", list(PRESETS))
def test_the_engines_behave_the_same(rid):
    assert behaviour(rid) == PINNED_BEHAVIOUR[rid]


@pytest.mark.parametrize("rid, options", ENVS)
def test_the_rl_observations_are_the_same(rid, options):
    assert observations(rid, options) == PINNED_OBSERVATIONS[key(rid, options)]
