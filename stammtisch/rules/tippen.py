"""Tippen rule sets (docs/rules-reference.md §2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..cards import PACKS
from .base import OptionSpec, Preset, RuleError

_SPECS = [
    OptionSpec("players", "int", "number of players at the table"),
    OptionSpec("pack", "choice", "the pack: piquet32 (A K Q J T 9 8 7) or whist52 (A … 2); "
               "auto takes piquet32 up to the rule set's limit and whist52 above",
               ("auto", "piquet32", "whist52")),
    OptionSpec("stake", "int", "the dealer's ante each deal (the Stamm), in counters",
               minimum=1, maximum=1000),
    OptionSpec("tricks", "int", "cards per hand = tricks per deal (3; Vierblatt 4; Loup 6)",
               minimum=1, maximum=13),
    OptionSpec("trump_card", "choice",
               "how trumps are fixed: dealer-last (1821: the dealer's own last card, stays in "
               "his hand), turn (the next card is turned up), katira (2 cards each, turn, 1 more)",
               ("dealer-last", "turn", "katira")),
    OptionSpec("bete", "choice",
               "what a trickless active player pays: pot (the pot in play), stake-or-pot (1859: "
               "the stake in a compulsory hand, else the pot in play), stake (Grupp: one stake)",
               ("pot", "stake-or-pot", "stake")),
    OptionSpec("tipp_zwang", "bool",
               "Tipp-Zwang: everyone must play while the pot holds only this deal's stakes "
               "(no bête stands)"),
    OptionSpec("exchange", "bool", "active players may exchange 0–3 cards from the talon (modern)"),
    OptionSpec("void_must_trump", "choice",
               "a player void in the led suit must trump: always, untrumped (only while nobody "
               "has trumped the trick; 1859), never",
               ("always", "untrumped", "never")),
    OptionSpec("head_trick", "bool",
               "a follower must beat the winning card when he can (modern 'head the trick')"),
    OptionSpec("forced_leads", "bool",
               "1859 leads: with 3+ active players the trick-1 leader must lead a trump if he "
               "has one; the winner of trick 1 holding the trump Ace (Daus) must lead it"),
    OptionSpec("max_bete", "optint",
               "maximum bête in play each deal; the rest of the pot waits in the reserve",
               minimum=1, maximum=100_000),
    OptionSpec("robbing", "bool", "the active holder of the trump 7 may swap it for the upcard"),
    OptionSpec("sniffing", "choice",
               "the dealer may sniff (take the upcard, discard one): 1859 (shown to all; may "
               "drop for one stake) or modern (unseen, suit announced; must take 2 tricks)",
               ("none", "1859", "modern")),
    OptionSpec("knocking", "bool",
               "the dealer may knock: take the unturned trump before looking at his hand"),
    OptionSpec("schieben", "bool", "the dealer may shove the deal on; each shover antes"),
    OptionSpec("hupf_und_sprung", "choice",
               "Hupf und Sprung: an Ace or Seven at the bottom of the cut passes the deal on "
               "(double: a second Ace/Seven on top jumps two seats); nobody is ever forced to play",
               ("none", "single", "double")),
    OptionSpec("lone_tapper", "choice",
               "when exactly one player taps: takes-pot (he takes the pot in play unplayed) or "
               "dealer-defends (a passing dealer must play against him, as in Loo)",
               ("takes-pot", "dealer-defends")),
    OptionSpec("suits", "choice", "display suits: french (Herz, Karo, Kreuz, Pik) or german "
               "(Herz, Schellen, Eichel, Laub; Daus, Ober, Unter); the notation does not change",
               ("french", "german")),
]
SPECS = {s.name: s for s in _SPECS}

_COMMON: dict[str, Any] = dict(
    players=4, pack="auto", stake=3, tricks=3, trump_card="turn", bete="pot", tipp_zwang=True,
    exchange=False, void_must_trump="always", head_trick=False, forced_leads=False,
    max_bete=None, robbing=False, sniffing="none", knocking=False, schieben=False,
    hupf_und_sprung="none", lone_tapper="takes-pot", suits="french",
)
_HISTORIC_1859 = {"bete": "stake-or-pot", "void_must_trump": "untrumped", "forced_leads": True}
_MODERN = {"tipp_zwang": False, "exchange": True, "head_trick": True}


def _preset(rid: str, title: str, players: tuple[int, int, int], **changes: Any) -> Preset:
    """A Tippen preset: every option applies (validation refuses the combinations that
    cannot be played, e.g. robbing without a turned trump card)."""
    lo, hi32, hi52 = players
    return Preset(id=rid, family="tippen", title=title, min_players=lo, max_players=hi32,
                  max_players_whist52=hi52, defaults={**_COMMON, **changes},
                  options=tuple(SPECS), first_dealer="ace")


#: The Tippen rule sets (rules reference §2.2), one record each; players are (minimum, maximum with
#: piquet32, maximum with whist52).
TIPPEN_PRESETS: dict[str, Preset] = {p.id: p for p in (
    _preset("tippen/drei-karten-1821", "Drei Karten (Das neue Königliche l'Hombre, 1821)",
            (3, 6, 6), trump_card="dealer-last"),
    _preset("tippen/loup-1821", "Loup / Wolf (1821): six cards, six tricks",
            (3, 5, 5), trump_card="dealer-last", tricks=6, stake=6),
    _preset("tippen/dreiblatt-1859", "Dreiblatt (von Alvensleben, 1859)",
            (3, 6, 10), **_HISTORIC_1859),
    _preset("tippen/vierblatt-1859", "Vierblatt (1859): four cards, four tricks",
            (3, 6, 6), **_HISTORIC_1859, tricks=4, stake=4),
    _preset("tippen/meyers-1905", "Tippen (Meyers Konversations-Lexikon, 1905)", (3, 6, 10)),
    _preset("tippen/grupp-1975", "Modern Tippen (Grupp, 1975): exchange, head the trick",
            (3, 5, 5), **_MODERN, bete="stake"),
    _preset("tippen/katira-1983", "Modern Tippen (Katira, 1983): 2-turn-1 deal, bête = pot",
            (3, 5, 5), **_MODERN, bete="pot", trump_card="katira"),
)}


@dataclass(frozen=True)
class TippenRules:
    """A validated Tippen rule set. Field meanings: see ``SPECS`` (``stammtisch rules``)."""

    id: str
    players: int
    pack: Literal["piquet32", "whist52"]
    stake: int
    tricks: int
    trump_card: Literal["dealer-last", "turn", "katira"]
    bete: Literal["pot", "stake-or-pot", "stake"]
    tipp_zwang: bool
    exchange: bool
    void_must_trump: Literal["always", "untrumped", "never"]
    head_trick: bool
    forced_leads: bool
    max_bete: int | None
    robbing: bool
    sniffing: Literal["none", "1859", "modern"]
    knocking: bool
    schieben: bool
    hupf_und_sprung: Literal["none", "single", "double"]
    lone_tapper: Literal["takes-pot", "dealer-defends"]
    suits: Literal["french", "german"]

    @property
    def family(self) -> Literal["tippen"]:
        return "tippen"

    @property
    def preset(self) -> Preset:
        return TIPPEN_PRESETS[self.id]

    @property
    def title(self) -> str:
        return self.preset.title

    @classmethod
    def option_specs(cls) -> dict[str, OptionSpec]:
        return SPECS

    @classmethod
    def build(cls, ruleset_id: str, values: dict[str, Any]) -> TippenRules:
        v = dict(values)
        preset = TIPPEN_PRESETS[ruleset_id]
        lo, hi32 = preset.min_players, preset.max_players
        hi52 = preset.max_players_whist52 or hi32
        n = v["players"]
        if v["pack"] == "auto":  # whist52 only where the rule set has a 52-card extension
            v["pack"] = "piquet32" if n <= hi32 or hi52 == hi32 else "whist52"
        rules = cls(id=ruleset_id, **v)
        rules._validate(lo, hi32, hi52)
        return rules

    def _validate(self, lo: int, hi32: int, hi52: int) -> None:
        name = self.id
        hi = hi32 if self.pack == "piquet32" else hi52
        if not lo <= self.players <= hi:
            if hi52 == hi32:  # no 52-card extension: the pack does not matter
                raise RuleError(f"{name} is for {lo}–{hi} players, not {self.players}")
            more = f" ({hi52} with pack=whist52)" if self.pack == "piquet32" else ""
            raise RuleError(f"{name} is for {lo}–{hi} players with {self.pack}{more}, not {self.players}")
        if self.tricks < 1:
            raise RuleError("tricks must be at least 1")
        if self.stake <= 0:
            raise RuleError("stake must be a positive number of counters")
        if self.stake % self.tricks:
            raise RuleError(
                f"stake {self.stake} is not divisible by the {self.tricks} tricks of a hand: "
                f"a trick must be worth a whole share of the pot"
            )
        if self.max_bete is not None:
            if self.max_bete <= 0:
                raise RuleError("max_bete must be positive (or none)")
            if self.max_bete % self.tricks:
                raise RuleError(
                    f"max_bete {self.max_bete} is not divisible by the {self.tricks} tricks of a hand"
                )
        has_upcard = self.trump_card != "dealer-last"
        for flag, on in (("robbing", self.robbing), ("sniffing", self.sniffing != "none"),
                         ("knocking", self.knocking)):
            if on and not has_upcard:
                raise RuleError(f"{flag} needs a turned trump card; trump_card=dealer-last has none")
        size = PACKS[self.pack].size
        need = self.players * self.tricks + (1 if has_upcard else 0)
        if self.exchange:
            need += self.players * self.tricks  # the talon must serve every exchange
        if need > size:
            raise RuleError(
                f"{self.players} players × {self.tricks} cards"
                f"{' + upcard' if has_upcard else ''}{' + exchanges' if self.exchange else ''}"
                f" need {need} cards; the {self.pack} pack has {size}"
            )
