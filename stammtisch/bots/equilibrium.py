"""The Tippen equilibrium for the decisions before the play: tap or pass, and the exchange.

A near-equilibrium strategy per rule set, trained by chance-sampled MCCFR
(``stammtisch.bots.equilibrium_train``, ``scripts/train_equilibrium.py``) over an abstraction,
and shipped as ``equilibrium.json`` beside this module. This module only reads that file (pure
Python, no numpy) and answers from one seat's observation.

The abstraction (why: it is what a player at the table can weigh, and small enough to solve):

* **position**: the order of declaring, forehand 0 … the dealer last;
* **what the earlier seats declared**: every tap or pass before the seat, exactly;
* **hand strength**: the heuristic bot's estimate of the hand's tricks (trumps by rank, side
  Aces and Kings) against all other players, cut into buckets of about equal frequency;
* **the money**: what counts is the bête against a trick's share of the pot, ``bete /
  trick_value``. Where the bête is the pot in play (1821, 1859, 1905, Katira) every amount of
  the deal scales with the pot and the ratio is always the tricks of a hand, so one strategy
  serves every pot; under Grupp (bête = one stake) it falls as the pot grows, and the file
  holds a strategy per pot level;
* **the exchange** (Grupp, Katira): two options, stand pat or the heuristic's exchange (its
  non-trumps below King, Kings too when four or more play), by position, bucket and who is
  active. The full set of up to 3 cards out of 3 is not modelled.

The dealer's choice, Schieben, robbing and the other variants are not in the abstraction: for a
rule set whose options differ from its preset in anything that changes the decisions,
``equilibrium_action`` has no opinion (None).
"""

from __future__ import annotations

import json
import math
import random
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from ..games.tippen import DECLARE, EXCHANGE, W_PASS, W_TAP
from .tippen import TippenHeuristic, card_tables

if TYPE_CHECKING:
    from ..games.tippen.observation import TippenObservation
    from . import Bot, Seen

DATA_FILE = "equilibrium.json"
#: options that do not change the decisions the abstraction models
IGNORED_OPTIONS = frozenset({"players", "pack", "suits"})


@cache
def load_data() -> dict[str, Any]:
    """The shipped strategies (``{}`` when the file is missing)."""
    try:
        text = resources.files(__package__).joinpath(DATA_FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    data: dict[str, Any] = json.loads(text)
    return data


def hand_strength(hand: int, trump: int, players: int, rules: Any) -> float:
    """The abstraction's hand strength: the heuristic's estimated tricks against all the other
    players (``TippenHeuristic._estimate``)."""
    from ..cards import PACKS

    return TippenHeuristic._estimate(hand, trump, players - 1, card_tables(PACKS[rules.pack]))


def bucket_of(strength: float, edges: list[float]) -> int:
    """The bucket of a strength: how many edges it reaches."""
    b = 0
    for e in edges:
        if strength >= e:
            b += 1
    return b


def entry_for(rules: Any) -> dict[str, Any] | None:
    """The trained entry for a rule set and player count, or None when the rules differ from
    what was trained (a variant, another player count)."""
    data = load_data().get("rulesets", {})
    entry = data.get(rules.id)
    if entry is None:
        return None
    by_players = entry["players"].get(str(rules.players))
    if by_players is None:
        return None
    defaults = rules.preset.defaults
    for name, value in defaults.items():
        if name in IGNORED_OPTIONS:
            continue
        if getattr(rules, name) != value:
            return None
    result: dict[str, Any] = by_players
    return result


def level_for(entry: dict[str, Any], ratio: float) -> dict[str, Any]:
    """The trained money level nearest to ``ratio`` (bête / a trick's share), on a log scale."""
    levels: list[dict[str, Any]] = entry["levels"]
    return min(levels, key=lambda lv: abs(math.log(lv["ratio"]) - math.log(max(ratio, 1e-9))))


def position_of(obs: TippenObservation, seat: int) -> int:
    """Declaring order: forehand 0, …, the dealer last."""
    return (seat - obs.dealer - 1) % obs.players


def decision_probability(obs: TippenObservation) -> float | None:
    """The equilibrium's probability of option 1 (tap; the heuristic's exchange) at the seat's
    decision, or None where it has no opinion (also where training never reached the
    situation)."""
    rules = obs.rules
    entry = entry_for(rules)
    if entry is None or obs.seat < 0:
        return None
    n = obs.players
    pos = position_of(obs, obs.seat)
    tv = obs.trick_value or 0
    if tv <= 0 or obs.bete is None:
        return None
    level = level_for(entry, obs.bete / tv)
    b = bucket_of(hand_strength(obs.hand, obs.trump, n, rules), entry["edges"])
    if obs.phase == DECLARE:
        h = 0
        for q in range(pos):
            word = obs.declared[(obs.dealer + 1 + q) % n]
            if word == "tap":
                h |= 1 << q
            elif word != "pass":
                return None
        tap: float | None = level["tap"][pos][h][b]  # None: never reached in training
        return tap
    if obs.phase == EXCHANGE and entry["exchange"]:
        s = 0
        for seat in obs.active:
            s |= 1 << position_of(obs, seat)
        swap: float = level["swap"][pos][s][b]
        return swap
    return None


def equilibrium_action(state: Seen, seat: int, rng: random.Random) -> int | None:
    """The equilibrium's action for ``seat`` (on turn) at a decision before the play of a
    supported Tippen rule set, drawn from the mixed strategy with ``rng``; None when it has no
    opinion (card play, the variants' decisions, a rule set or player count not trained).
    Reads only the seat's observation and the legal actions."""
    obs = state.observation(seat)
    if getattr(obs.game, "family", None) != "tippen":
        return None
    legal = state.legal_actions()
    p = decision_probability(obs)
    if p is None:
        return None
    return option_action(obs, legal, rng.random() < p)


def option_action(obs: TippenObservation, legal: list[int], yes: bool) -> int | None:
    """The action of the abstraction's option 1 (``yes``: tap; the heuristic's exchange) or 0
    (pass; standing pat) at the seat's decision, None when it is not legal."""
    g = obs.game
    if obs.phase == DECLARE:
        action = g.WORD_BASE + (W_TAP if yes else W_PASS)
    elif yes:
        action = TippenHeuristic(None)._exchange(obs, card_tables(g.pack), legal)
    else:
        action = g.EXCHANGE_BASE
    return action if action in legal else None


class EquilibriumBot:
    """The equilibrium's decisions before the play where it has an opinion, another bot's
    (default: the heuristic) everywhere else. Not a level: for benches and for levels that
    want the equilibrium's declarations."""

    def __init__(self, rng: random.Random | None = None, inner: Bot | None = None) -> None:
        self.rng = rng or random.Random()
        self.inner: Bot = inner or TippenHeuristic(self.rng)

    def act(self, state: Seen, seat: int) -> int:
        action = equilibrium_action(state, seat, self.rng)
        return self.inner.act(state, seat) if action is None else action


# -- for people: the "when to tap" tables (the report and the guide render these) -------------


def describe_signature(sig: str, lang: str = "en") -> str:
    """A hand signature of the training (``"AQ|A"``: trump Ace and Queen, a side Ace) in words."""
    from ..i18n import t

    trumps, _, side = sig.partition("|")
    parts = []
    if trumps:
        parts.append(t("equilibrium.hand.trumps", lang, ranks=" ".join(trumps)))
    if side:
        parts.append(t("equilibrium.hand.side", lang, ranks=" ".join(side)))
    return ", ".join(parts) if parts else t("equilibrium.hand.nothing", lang)


def position_name(pos: int, players: int, lang: str = "en") -> str:
    from ..i18n import t

    if pos == players - 1:
        return t("equilibrium.position.dealer", lang)
    if pos == 0:
        return t("equilibrium.position.forehand", lang)
    return t("equilibrium.position.nth", lang, number=pos + 1)


def tap_table(ruleset_id: str, players: int = 4) -> dict[str, Any] | None:
    """The trained "when to tap" data of a rule set (None if it has none): per money level, per
    position and number of earlier taps, per strength bucket the probability of tapping (-1:
    that bucket never reaches that situation), with the bucket edges, shares and typical hands,
    the exploitability and the training budget."""
    entry = load_data().get("rulesets", {}).get(ruleset_id, {}).get("players", {}).get(str(players))
    if entry is None:
        return None
    edges: list[float] = entry["edges"]
    lows = [0.0, *edges]
    highs: list[float | None] = [*edges, None]
    levels = []
    for lv in entry["levels"]:
        levels.append({"ratio": lv["ratio"], "pot_stakes": lv["pot_stakes"], "pot": lv["pot"],
                       "trick_value": lv["trick_value"], "rows": lv["table"], "gain": lv["gain"],
                       "value": lv["value"], "curve": lv["curve"]})
    return {"ruleset": ruleset_id, "players": players, "buckets": len(lows),
            "low": lows, "high": highs, "share": entry["bucket_share"],
            "examples": entry.get("examples", []), "exchange": entry["exchange"],
            "levels": levels, "training": entry["training"]}


#: the money levels shown to people where a rule set has several (Grupp: pot in stakes)
SHOWN_POT_STAKES = (1, 3)


def _percent(p: float) -> str:
    return "–" if p < 0 else str(int(round(100 * p)))


def _num(x: float, lang: str, fmt: str = "g") -> str:
    """A number as the language writes it (German: a decimal comma)."""
    text = format(x, fmt)
    return text.replace(".", ",") if lang == "de" else text


def _strength_range(low: float, high: float | None, lang: str) -> str:
    if high is None:
        return f"≥ {_num(low, lang)}"
    if low <= 0:
        return f"< {_num(high, lang)}"
    return f"{_num(low, lang)}–{_num(high, lang)}"


def tap_blocks(ruleset_id: str, lang: str = "en", players: int = 4) -> list[dict[str, Any]]:
    """The "when to tap" tables of a rule set as text cells, for the report (HTML) and the guide
    (Markdown): per money level shown, a caption, the tap table (position, taps before, then
    the percentage per strength bucket), the bucket table (strength, share, typical hands) and
    a note on exploitability. Empty when nothing is trained."""
    from ..i18n import t

    table = tap_table(ruleset_id, players)
    if table is None:
        return []
    ranges = [_strength_range(lo, hi, lang) for lo, hi in zip(table["low"], table["high"], strict=True)]
    buckets = []
    for b, rng_text in enumerate(ranges):
        examples = table["examples"][b] if b < len(table["examples"]) else []
        typical = "; ".join(f"{describe_signature(sig, lang)} ({int(round(100 * share))} %)"
                            for sig, share in examples)
        buckets.append([rng_text, f"{100 * table['share'][b]:.0f} %", typical])
    levels = table["levels"]
    if len(levels) > 1:
        levels = [lv for lv in levels if lv["pot_stakes"] in SHOWN_POT_STAKES]
    blocks = []
    stake = None
    for lv in levels:
        rows = []
        for pos, by_taps in enumerate(lv["rows"]):
            for k, probs in enumerate(by_taps):
                rows.append([position_name(pos, players, lang), str(k), *[_percent(p) for p in probs]])
        if lv["pot_stakes"] is None:
            caption = t("equilibrium.level.any_pot", lang)
        else:
            stake = lv["pot"] // lv["pot_stakes"]
            caption = t("equilibrium.level.pot", lang, pot=lv["pot"], trick_value=lv["trick_value"], bete=stake)
        gains = lv["gain"]
        note = t("equilibrium.exploit", lang, gain=_num(max(gains), lang, ".4f"), pot=lv["pot"],
                 gains=" / ".join(_num(g, lang, ".4f") for g in gains), iterations=table["training"]["iterations"],
                 deals=table["training"]["deals"])
        blocks.append({
            "caption": caption,
            "headers": [t("equilibrium.col.position", lang), t("equilibrium.col.taps_before", lang), *ranges],
            "rows": rows,
            "bucket_headers": [t("equilibrium.col.strength", lang), t("equilibrium.col.share", lang),
                               t("equilibrium.col.typical", lang)],
            "bucket_rows": buckets,
            "note": note,
        })
    return blocks
