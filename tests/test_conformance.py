"""One conformance suite over every preset with random valid options (OpenSpiel's
RandomSimTest is the model; our invariants are stronger). Only the public API is used.

At every step of random deals at a table (pot carried):
- the legal actions are sorted, unique, below ``num_distinct_actions``, round-trip through
  their notation, and each applies (on a clone);
- random illegal ids and strings are refused with ``IllegalAction`` and the state is
  unchanged (every view, the legal actions, the turn, what each seat knows);
- a clone is independent of its original;
- no view names a card its seat may not know (``known_mask``), and ``known_mask`` itself
  holds nothing beyond what the seat saw: the spectator's only cards played or named in the
  spectator's view, a seat's beyond that only cards its own views showed it;
- the observation the bots read (``observation(seat)``) equals the one built from the seat's
  view alone, so it holds nothing the view does not;
At the end: the deal replays from its deck and action strings to the same views and result,
the terminal state refuses every action, and the ledger balances after every deal.
"""

from __future__ import annotations

import random

import pytest

from stammtisch.games import IllegalAction, TableState, new_game
from stammtisch.ledger import Ledger
from stammtisch.rules import PRESETS, option_specs

DEALS_PER_PRESET = 12


def _probe_actions(state, rng, size):
    ids = [rng.randrange(0, state.game.num_distinct_actions) for _ in range(3)]
    ids += [rng.randrange(0, 4 * size + 40) for _ in range(3)]
    cards = state.game.pack.cards
    texts = ["pass", "tap", "hold", "play", "weg", "bid:solo", "contract:bettel", "exchange:-",
             f"play:{rng.choice(cards)}", f"give:{rng.choice(cards)}", f"call:{rng.choice(cards)}",
             f"discard:{rng.choice(cards)}", "trump:H", "sniff", "knock", "rob", "no-rob", "turn",
             "bogus", "play:ZZ", ""]
    return ids, rng.sample(texts, 6)


def _check_secrets(state, seen, conformance):
    """``known_mask`` is the one source: every view within it, and it within what was shown;
    the observation bots read holds what the view holds, built from the view alone."""
    g = state.game
    cards = g.pack.cards
    n = g.num_players
    spectator_view = state.view(None)
    public = conformance.names_of(state.known_mask(None), cards)
    named = conformance.cards_named(spectator_view)
    assert named <= public, ("spectator view names unknown cards", named - public)
    played = set()
    for entry in spectator_view["log"]:
        if entry[1].startswith("play:"):
            played.add(entry[1][5:])
    shown = conformance.cards_shown(spectator_view)
    assert public <= played | shown, ("spectator knows cards nobody showed", public - played - shown)
    assert state.observation(None) == conformance.observation_from_view(spectator_view, g)
    for seat in range(n):
        v = state.view(seat)
        assert state.observation(seat) == conformance.observation_from_view(v, g), seat
        known = conformance.names_of(state.known_mask(seat), cards)
        named = conformance.cards_named(v)
        assert named <= known, (seat, "view names unknown cards", named - known)
        seen[seat] |= conformance.cards_shown(v)
        assert known <= seen[seat] | public, (seat, "knows cards it was never shown",
                                             known - seen[seat] - public)
        assert set(v["hand"]) <= known


@pytest.mark.parametrize("ruleset_id", list(PRESETS))
def test_random_deals_conform(ruleset_id, conformance):
    rng = random.Random(f"conformance:{ruleset_id}")
    done = 0
    while done < DEALS_PER_PRESET:
        rules = conformance.random_rules(ruleset_id, rng)
        game = new_game(rules)
        n = rules.players
        size = game.pack.size
        ledger = Ledger(n)
        dealer = rng.randrange(n)
        for _ in range(3):
            deck = list(range(size))
            rng.shuffle(deck)
            table = TableState(dealer=dealer, pot=ledger.pot, reserve=ledger.reserve)
            state = game.new_deal(table, deck)
            with pytest.raises(ValueError):
                state.view(n)
            seen: list[set[str]] = [set() for _ in range(n)]
            played: list[str] = []
            steps = 0
            while not state.is_terminal():
                steps += 1
                assert steps < 500, "a deal must end"
                legal = state.legal_actions()
                assert legal and legal == sorted(set(legal))
                assert legal[-1] < game.num_distinct_actions
                for a in legal:
                    assert state.string_to_action(state.action_to_string(a)) == a
                before = conformance.observe(state)
                _check_secrets(state, seen, conformance)
                # every legal action applies, on a clone; the original stays as it was
                for a in rng.sample(legal, min(len(legal), 4)):
                    c = state.clone()
                    c.apply(a)
                    assert conformance.observe(state) == before
                # refusals: illegal ids and strings, the state unchanged
                ids, texts = _probe_actions(state, rng, size)
                legal_set = set(legal)
                for probe in ids + texts:
                    try:
                        pid = probe if isinstance(probe, int) else state.string_to_action(probe)
                        if pid in legal_set:
                            continue
                        state.apply(pid)
                    except IllegalAction as e:
                        assert e.rule and e.message
                    else:
                        raise AssertionError(f"{probe!r} was accepted but is not legal")
                    assert conformance.observe(state) == before, probe
                other = (state.current_player() + 1) % n
                if other != state.current_player():
                    with pytest.raises(IllegalAction):
                        state.apply(legal[0], seat=other)
                    assert conformance.observe(state) == before
                a = rng.choice(legal)
                played.append(state.action_to_string(a))
                state.apply(a, seat=state.current_player())
            _check_secrets(state, seen, conformance)
            assert state.current_player() == -1 and state.legal_actions() == []
            with pytest.raises(IllegalAction) as err:
                state.apply(0)
            assert err.value.rule == "deal is over"
            result = state.result()
            assert sum(state.returns()) + sum(
                t.amount * ((t.target in ("pot", "reserve")) - (t.source in ("pot", "reserve")))
                for t in result.transfers) == 0
            # replay: the deal is a pure function of (rules, table, deck, actions)
            again = game.new_deal(table, deck)
            for text in played:
                again.apply(again.string_to_action(text))
            assert conformance.observe(again) == conformance.observe(state)
            assert result.summary == again.result().summary
            ledger.apply_all(result.transfers)
            assert ledger.is_balanced()
            dealer = result.next_dealer
            done += 1


DRAWS = 300


@pytest.mark.parametrize("ruleset_id", list(PRESETS))
def test_the_random_rule_sets_vary_every_option_over_its_range(ruleset_id, conformance):
    """The generator behind the property tests: over a few hundred draws every option takes at
    least two values (all of them where there are few), numbers reach both ends of their
    range, and most draws are rule sets the preset accepts."""
    preset, specs = PRESETS[ruleset_id], option_specs(ruleset_id)
    rng = random.Random(f"coverage:{ruleset_id}")
    refused = [0]
    seen: dict[str, set] = {name: set() for name in specs}
    for _ in range(DRAWS):
        rules = conformance.random_rules(ruleset_id, rng, refused=refused)
        for name in specs:
            seen[name].add(getattr(rules, name))
    assert refused[0] < 3 * DRAWS, "the generator draws mostly rule sets that are refused"
    top = getattr(preset, "max_players_whist52", None) or preset.max_players
    for name, spec in specs.items():
        values = seen[name]
        if name == "players":
            assert values == set(range(preset.min_players, top + 1))
            continue
        assert len(values) >= 2, (name, values)
        if spec.kind == "bool":
            assert values == {False, True}
        elif spec.kind == "choice":  # pack=auto is built as the pack it stands for
            assert values >= set(spec.choices) - {"auto"}, (name, values)
        else:
            numbers = {v for v in values if v is not None}
            assert (spec.kind == "optint") == (None in values), (name, values)
            assert min(numbers) == spec.minimum and max(numbers) >= spec.maximum // 2, (name, numbers)
            assert len(numbers) >= min(5, spec.maximum - spec.minimum + 1), (name, numbers)
