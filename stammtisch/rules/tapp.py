"""Tapp rule sets (RULES.md section 3)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .base import OptionSpec, RuleError

_SPECS = [
    OptionSpec("players", "int", "number of players: 3 (modern: 3 or 4)"),
    OptionSpec("pack", "choice", "tapp36 (A T K Q J 9 8 7 6); modern also skat32 (no sixes)",
               ("tapp36", "skat32")),
    OptionSpec("pot", "bool", "historic games: the dealer antes 2 into a pot each deal; "
               "a lost Frage pays into it, a won Solo takes it, a lost Solo doubles it"),
    OptionSpec("pot_ante", "int", "the dealer's ante into the pot when pot=true"),
    OptionSpec("tout_multiplier", "int",
               "historic games: a Tout (all tricks) is worth this many times the full score "
               "(2 after Anton, 3 after Beck)"),
    OptionSpec("frage_value", "int", "modern: cents per defender for a Frage (sources silent; 5)"),
    OptionSpec("rufer_in_tapp", "choice",
               "modern Rufer: when the called card lies in the tapp, none (no exchange) or swap "
               "(the declarer swaps it with the tapp)", ("none", "swap")),
    OptionSpec("suits", "choice", "display suits: french (Herz, Karo, Kreuz, Pik) or german "
               "(Herz, Schellen, Eichel, Laub); the notation does not change", ("french", "german")),
]
SPECS = {s.name: s for s in _SPECS}

_COMMON = dict(players=3, pack="tapp36", pot=False, pot_ante=2, tout_multiplier=2,
               frage_value=5, rufer_in_tapp="none", suits="french")

TAPP_PRESETS: dict[str, dict] = {
    "tapp/wuerttemberg-tarock": dict(_COMMON),
    "tapp/classic-1879": dict(_COMMON),
    "tapp/modern": dict(_COMMON),
}

TITLES = {
    "tapp/wuerttemberg-tarock": "Württemberg Tarock (Beck/Dummett): Frage and Solo, hearts trump",
    "tapp/classic-1879": "Classic Tapp (Anton 1879): Frage, suit Solo, Herzsolo",
    "tapp/modern": "Modern Tapp (NSV): 3 or 4 players, Bettel, Rufer, Durch, Ramsch; cents",
}

_HISTORIC_ONLY = ("pot", "pot_ante", "tout_multiplier")
_MODERN_ONLY = ("frage_value", "rufer_in_tapp")


@dataclass(frozen=True)
class TappRules:
    """A validated Tapp rule set. Field meanings: see ``SPECS`` (``stammtisch rules``)."""

    id: str
    players: int
    pack: str
    pot: bool
    pot_ante: int
    tout_multiplier: int
    frage_value: int
    rufer_in_tapp: str
    suits: str

    family = "tapp"

    @classmethod
    def option_specs(cls) -> dict[str, OptionSpec]:
        return SPECS

    @classmethod
    def build(cls, ruleset_id: str, values: dict) -> TappRules:
        rules = cls(id=ruleset_id, **values)
        rules._validate()
        return rules

    @property
    def modern(self) -> bool:
        return self.id == "tapp/modern"

    @property
    def clockwise(self) -> bool:
        """Historic Tapp is dealt and played clockwise, Modern Tapp counter-clockwise."""
        return not self.modern

    @property
    def title(self) -> str:
        return TITLES[self.id]

    def _validate(self) -> None:
        default = _COMMON
        not_here = _HISTORIC_ONLY if self.modern else _MODERN_ONLY
        for key in not_here:
            if getattr(self, key) != default[key]:
                raise RuleError(f"option {key} does not apply to {self.id}")
        if self.modern:
            if self.players not in (3, 4):
                raise RuleError(f"{self.id} is for 3 or 4 players, not {self.players}")
        else:
            if self.players != 3:
                raise RuleError(f"{self.id} is for 3 players, not {self.players}")
            if self.pack != "tapp36":
                raise RuleError(f"{self.id} is played with the tapp36 pack, not {self.pack}")
        if self.tout_multiplier not in (2, 3):
            raise RuleError("tout_multiplier is 2 (Anton) or 3 (Beck)")
        if self.frage_value <= 0:
            raise RuleError("frage_value must be a positive number of cents")
        if self.pot_ante <= 0:
            raise RuleError("pot_ante must be positive")

    def replace(self, **changes) -> TappRules:
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "id"}
        values.update(changes)
        return TappRules.build(self.id, values)
