"""The one place where the environments read engine facts beyond the public State API.

Everything the adapters need that ``legal_actions()``, ``apply()``, ``view()`` and
``returns()`` do not give is read here, so an engine refactoring touches one small module.
None of it is hidden information: the constants describe the action-id layout and the pack.
"""

from __future__ import annotations

from typing import Any

#: Phase names of each family as the views spell them, in the order of the observation's one-hot.
PHASES: dict[str, tuple[str, ...]] = {
    "tippen": ("schieben", "choice", "discard", "drop", "declare", "exchange", "rob", "play", "over"),
    "tapp": ("auction", "trump", "discard", "tout", "declare", "contract", "call", "give", "play", "over"),
}


def preset_options(ruleset_id: str) -> dict[str, Any]:
    """The options a user may set for a preset, with the preset's values (as ``stammtisch rules``
    lists them). Raises the CLI's ``RuleError`` for an unknown rule set."""
    from .. import rules

    rules.rules_class(ruleset_id)  # the CLI's error for an unknown rule set
    preset = rules.preset_of(ruleset_id)
    return {k: preset.defaults[k] for k in preset.options}


def option_kinds(ruleset_id: str) -> dict[str, str]:
    """Option name → kind (bool, int, optint, choice) of a preset's options."""
    from .. import rules

    specs = rules.option_specs(ruleset_id) if hasattr(rules, "option_specs") else \
        rules.rules_class(ruleset_id).option_specs()
    return {name: str(spec.kind) for name, spec in specs.items() if name in preset_options(ruleset_id)}


def is_modern_tapp(rules: Any) -> bool:
    """Modern Tapp (cents, Rufer, Durch, Ramsch) rather than a historic Tapp."""
    modern = getattr(rules, "modern", None)  # the rules' own flag, where it has one
    if modern is None:
        modern = getattr(rules, "settlement", None) == "modern"
    return bool(modern)


def _namer(game: Any) -> Any:
    """A state of a fresh deal, only for naming action ids (``action_to_string``)."""
    from ..games import TableState

    return game.new_deal(TableState(), list(range(game.pack.size)))


def _names(game: Any, first: int, end: int) -> list[str]:
    """The names of the action ids ``first … end-1`` that have one (others are skipped)."""
    from ..games import IllegalAction

    state = _namer(game)
    out = []
    for a in range(first, end):
        try:
            out.append(str(state.action_to_string(a)))
        except IllegalAction:
            break
    return out


def tippen_layout(game: Any) -> tuple[int, int, int]:
    """(pack size S, number of words, first exchange id) of a Tippen engine.

    Read through the notation: the exchange ids start at ``exchange:-`` and the words are the
    named ids from ``2S`` (docs/rules-reference.md §0 and docs/engine-conventions.md).
    """
    size = int(game.pack.size)
    first_exchange = int(_namer(game).string_to_action("exchange:-"))
    return size, len(_names(game, 2 * size, first_exchange)), first_exchange


def tapp_layout(game: Any) -> tuple[int, int, int, int]:
    """(pack size N, number of fixed actions, first discard id, cards discarded) of a Tapp engine.

    The discard ids are ``first + mask`` for every mask of the pack, the last ids of the range
    (``game.num_distinct_actions``).
    """
    size = int(game.pack.size)
    first_discard = int(game.num_distinct_actions) - (1 << size)
    return size, first_discard - 3 * size, first_discard, int(game.tapp_size)


def tapp_hand_size(game: Any) -> int:
    """Cards in the declarer's hand when he discards: his hand plus the tapp he picked up."""
    return int(game.hand_size) + int(game.tapp_size)


def tapp_contracts(game: Any) -> tuple[str, ...]:
    """The contract names a Tapp view may show (without ``+tout`` and a Classic solo's suit),
    in rank order, read from the notation of the fixed actions (``contract:…``, ``bid:…``)."""
    size, fixed, _, _ = tapp_layout(game)
    words = _names(game, 3 * size, 3 * size + fixed)
    if is_modern_tapp(game.rules):
        return (*(w[9:] for w in words if w.startswith("contract:") and w != "contract:pass"), "ramsch")
    return tuple(w[4:] for w in words if w.startswith("bid:"))


def action_string(state: Any, action: int) -> str:
    return str(state.action_to_string(action))


def deck_positions_read(game: Any) -> int:
    """How many deck positions, from the top, a deal of this rule set can ever look at.

    The OpenSpiel game deals these as chance outcomes and lays the rest of the pack under them in
    pack order: cards nobody can ever see or use need no chance node (this keeps small Tippen
    games small enough for CFR). Tippen reads the hands, the turned card, the talon only for
    exchanges, and the bottom card only for Hupf und Sprung; Tapp deals the whole pack.
    """
    rules = game.rules
    size = int(game.pack.size)
    if rules.family != "tippen" or rules.exchange or rules.hupf_und_sprung != "none":
        return size
    upcard = 0 if rules.trump_card == "dealer-last" else 1
    return min(size, int(rules.players * rules.tricks) + upcard)


def resample(state: Any, seat: int, rng: Any) -> Any | None:
    """A full engine state consistent with what ``seat`` knows, if the engine offers it (else None)."""
    method = getattr(state, "resample", None)
    return None if method is None else method(seat, rng)
