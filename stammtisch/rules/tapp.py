"""Tapp rule sets (docs/rules-reference.md §3): every difference between them is a field.

A ``TappRules`` holds two kinds of fields:

- **options** a player may set (``players``, ``pack``, ``pot``, …), each offered only by the
  presets it applies to (``Preset.options``);
- the **structure** of the rule set (the bidding flow, the bids, the settlement formula,
  the direction of play, Ramsch, …), fixed by its preset. They are fields too, so the engine
  reads data and never a rule-set id; they are not offered as options because only the
  three recorded combinations are rules anyone played (a Modern auction with the 1879
  settlement is nobody's game).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from .base import OptionSpec, Preset, RuleError

Flow = Literal["auction", "rounds"]
Settlement = Literal["beck", "anton", "modern"]
DealPattern = Literal["tapp-first", "modern"]
Direction = Literal["clockwise", "counter-clockwise"]
HistoricBid = Literal["frage", "solo", "herzsolo"]

_SPECS = [
    OptionSpec("players", "int", "number of players: 3 (Modern Tapp: 3 or 4)"),
    OptionSpec("pack", "choice", "tapp36 (A T K Q J 9 8 7 6) or skat32 (no sixes; the tapp has 2 "
               "cards with 3 players)", ("tapp36", "skat32")),
    OptionSpec("pot", "bool", "the dealer antes into a pot each deal; a lost Frage pays into it, "
               "a won Solo takes it, a lost Solo doubles it"),
    OptionSpec("pot_ante", "int", "the dealer's ante into the pot when pot=true",
               minimum=1, maximum=100),
    OptionSpec("tout_multiplier", "int",
               "a Tout (all tricks) is worth this many times the full score "
               "(2 after Anton, 3 after Beck)", minimum=2, maximum=3),
    OptionSpec("frage_value", "int", "cents per defender for a Frage (the sources are silent; 5)",
               minimum=1, maximum=1000),
    OptionSpec("rufer_in_tapp", "choice",
               "Rufer: when the called card lies in the tapp, none (no exchange) or swap "
               "(the declarer swaps it with the tapp)", ("none", "swap")),
    OptionSpec("suits", "choice", "display suits: french (Herz, Karo, Kreuz, Pik) or german "
               "(Herz, Schellen, Eichel, Laub); the notation does not change", ("french", "german")),
]
SPECS = {s.name: s for s in _SPECS}

_OPTIONS: dict[str, Any] = dict(players=3, pack="tapp36", pot=False, pot_ante=2, tout_multiplier=2,
                                frage_value=5, rufer_in_tapp="none", suits="french")
_HISTORIC: dict[str, Any] = dict(
    flow="auction", deal="tapp-first", direction="clockwise", ramsch=False, announce_tout=True,
    ends_early=False, unit="game points", min_to_win=61,
)

#: The Tapp rule sets, one record each (rules reference §3.2–§3.4).
TAPP_PRESETS: dict[str, Preset] = {p.id: p for p in (
    Preset(
        id="tapp/wuerttemberg-tarock", family="tapp",
        title="Württemberg Tarock (Beck/Dummett): Frage and Solo, hearts trump",
        min_players=3, max_players=3, first_dealer="lot",
        options=("players", "pot", "pot_ante", "tout_multiplier", "suits"),
        defaults={**_OPTIONS, **_HISTORIC, "bids": ("frage", "solo"), "solo_names_trump": False,
                  "hearts_always_trump": True, "settlement": "beck"},
    ),
    Preset(
        id="tapp/classic-1879", family="tapp",
        title="Classic Tapp (Anton 1879): Frage, suit Solo, Herzsolo",
        min_players=3, max_players=3, first_dealer="lot",
        options=("players", "pot", "pot_ante", "tout_multiplier", "suits"),
        defaults={**_OPTIONS, **_HISTORIC, "bids": ("frage", "solo", "herzsolo"),
                  "solo_names_trump": True, "hearts_always_trump": False, "settlement": "anton"},
    ),
    Preset(
        id="tapp/modern", family="tapp",
        title="Modern Tapp (NSV): 3 or 4 players, Bettel, Rufer, Durch, Ramsch; cents",
        min_players=3, max_players=4, first_dealer="lot",
        options=("players", "pack", "frage_value", "rufer_in_tapp", "suits"),
        defaults={**_OPTIONS, "flow": "rounds", "deal": "modern", "direction": "counter-clockwise",
                  "ramsch": True, "announce_tout": False, "ends_early": True, "unit": "cents",
                  "min_to_win": 61, "bids": (), "solo_names_trump": True,
                  "hearts_always_trump": False, "settlement": "modern"},
    ),
)}


@dataclass(frozen=True)
class TappRules:
    """A validated Tapp rule set. Options: see ``SPECS`` (``stammtisch rules``); the other
    fields are the rule set's structure, fixed by its preset."""

    id: str
    # options
    players: int
    pack: Literal["tapp36", "skat32"]
    pot: bool
    pot_ante: int
    tout_multiplier: int
    frage_value: int
    rufer_in_tapp: Literal["none", "swap"]
    suits: Literal["french", "german"]
    # structure
    flow: Flow  # "auction": bid, hold or pass (historic); "rounds": play/weg, then contracts
    deal: DealPattern  # "tapp-first": the tapp, then 4-3-4; "modern": rules reference §3.4 packets
    direction: Direction  # of dealing and play; seats are numbered in this direction
    bids: tuple[HistoricBid, ...]  # the historic auction's levels, lowest first
    solo_names_trump: bool  # a Solo names its trump suit (Classic: C/S/D; Modern: the contract)
    hearts_always_trump: bool  # hearts are trumps before any bid (Württemberg Tarock)
    settlement: Settlement  # beck: x·m per defender; anton: ceil(x/d); modern: cents
    ramsch: bool  # all pass: Ramsch (else the hand is thrown in)
    announce_tout: bool  # the declarer may announce Tout before trick 1
    ends_early: bool  # a hand whose outcome is decided ends at once (Bettel, Rufer, Durch)
    unit: Literal["game points", "cents"]
    min_to_win: int  # card points the declarer needs (61; 60 is a draw or a loss)

    @property
    def family(self) -> Literal["tapp"]:
        return "tapp"

    @property
    def preset(self) -> Preset:
        return TAPP_PRESETS[self.id]

    @property
    def title(self) -> str:
        return self.preset.title

    @property
    def clockwise(self) -> bool:
        return self.direction == "clockwise"

    @classmethod
    def option_specs(cls) -> dict[str, OptionSpec]:
        return SPECS

    @classmethod
    def build(cls, ruleset_id: str, values: dict[str, Any]) -> TappRules:
        preset = TAPP_PRESETS[ruleset_id]
        merged = {**preset.defaults, **values}
        merged["bids"] = tuple(merged["bids"])
        rules = cls(id=ruleset_id, **merged)
        rules._validate()
        return rules

    def _validate(self) -> None:
        preset = self.preset
        for key in SPECS:
            if key not in preset.options and getattr(self, key) != preset.defaults[key]:
                raise RuleError(f"option {key} does not apply to {self.id}")
        lo, hi = preset.min_players, preset.max_players
        if not lo <= self.players <= hi:
            span = f"{lo} players" if lo == hi else f"{lo} or {hi} players"
            raise RuleError(f"{self.id} is for {span}, not {self.players}")
        if self.tout_multiplier not in (2, 3):
            raise RuleError("tout_multiplier is 2 (Anton) or 3 (Beck)")
        if self.frage_value <= 0:
            raise RuleError("frage_value must be a positive number of cents")
        if self.pot_ante <= 0:
            raise RuleError("pot_ante must be positive")
