"""What a contract's menu entry promises is what the engine plays: for every Tapp rule set
(each preset, both suit displays, Modern Tapp with three and four players) and every bid or
contract it offers, in English and German, the entry's goal names the trumps the engine then
plays (or the suits the declarer may name, hearts not among them, in Classic Tapp's Solo), says
the tapp is picked up exactly when the engine hands it to the declarer, and a call exactly when
the engine asks for one."""

from __future__ import annotations

import random

import pytest

from stammtisch.engine_facts import choice_message_for
from stammtisch.games import TableState, new_game
from stammtisch.i18n import LANGUAGES, message, render
from stammtisch.i18n.words import suit_message
from stammtisch.rules import PRESETS, ruleset

TABLES = [(rid, opts) for rid, p in sorted(PRESETS.items()) if p.family == "tapp"
          for opts in ({}, {"suits": "german"}, *([{"players": 4}] if rid == "tapp/modern" else []))]


def deck(game, seed: int) -> list[int]:
    cards = list(range(game.pack.size))
    random.Random(seed).shuffle(cards)
    return cards


def legal_strings(state) -> list[str]:
    return [state.action_to_string(a) for a in state.legal_actions()]


def offered(rules) -> list[str]:
    """Every bid and contract the rule set's auction offers (first speaker, a fresh deal)."""
    game = new_game(rules)
    seen: set[str] = set()
    for seed in range(4):
        state = game.new_deal(TableState(dealer=0), deck(game, seed))
        said = False  # Modern Tapp: the first says "play", the others "weg"; he names any contract
        for _ in range(6):
            legal = legal_strings(state)
            seen |= {a for a in legal if a.partition(":")[0] in ("bid", "contract") and a != "contract:pass"}
            if "play" in legal:
                pick, said = ("weg" if said else "play"), True
            else:
                pick = next((a for a in legal if a.startswith(("bid:", "contract:"))), None)
            if pick is None:
                break
            state.apply(state.string_to_action(pick))
    return sorted(seen)


def declared(rules, action: str, seed: int):
    """A deal in which the first speaker's ``action`` wins the auction (the others pass, or say
    weg); the state once the auction is over, or None if this deal never offers it."""
    game = new_game(rules)
    state = game.new_deal(TableState(dealer=0), deck(game, seed))
    said = False
    for _ in range(40):
        legal = legal_strings(state)
        if said and not any(a.startswith(("bid:", "contract:")) or a in ("pass", "hold", "weg", "play")
                            for a in legal):
            return state
        if not said and action in legal:
            pick, said = action, True
        elif "play" in legal and not said:
            pick = "play"
        else:
            pick = next((a for a in ("pass", "weg", "contract:pass") if a in legal), None)
            if pick is None:
                return None
        state.apply(state.string_to_action(pick))
    return None


def trumps_phrase(suit: str, suits: str, lang: str) -> str:
    return render(message("goal.trumps", suit=suit_message(suit, suits)), lang)


@pytest.mark.parametrize("rid,opts", TABLES, ids=[f"{r}{o}" for r, o in TABLES])
def test_every_contracts_goal_is_what_the_engine_plays(rid, opts):
    rules = ruleset(rid, opts)
    suits = "german" if opts.get("suits") == "german" else "french"
    actions = offered(rules)
    assert actions, rid
    for action in actions:
        state = next((s for s in (declared(rules, action, seed) for seed in range(20)) if s is not None), None)
        assert state is not None, (rid, action)
        legal = legal_strings(state)
        named = sorted(a.partition(":")[2] for a in legal if a.startswith("trump:"))
        if named:  # the declarer names the trump now: what the engine then plays
            state.apply(state.string_to_action(f"trump:{named[0]}"))
            legal = legal_strings(state)
        view = state.view(None)
        trump = None if named else view["trump"]
        takes_tapp = any(a.startswith("discard:") for a in legal)
        calls = any(a.startswith("call:") for a in legal)
        for lang in LANGUAGES:
            text = render(choice_message_for(rules, action), lang)
            said_trumps = [s for s in "HDCS" if trumps_phrase(s, suits, lang) in text]
            assert said_trumps == ([trump] if trump else []), (rid, action, lang, text, trump)
            if named:
                assert "H" not in named, named
                for s in named:
                    assert render(suit_message(s, suits), lang) in text, (rid, action, lang, text)
            elif trump is None:
                assert render(message("goal.no_trumps"), lang) in text, (rid, action, lang, text)
            assert (render(message("goal.take_tapp"), lang) in text) == takes_tapp, (rid, action, lang, text)
            assert (render(message("goal.call"), lang) in text) == calls, (rid, action, lang, text)
