"""The one place where the environments read engine facts beyond the public State API.

Everything the adapters need that ``legal_actions()``, ``apply()``, ``view()`` and
``returns()`` do not give is read here, so an engine refactoring touches one small module.
None of it is hidden information: the constants describe the action-id layout and the pack.
"""

from __future__ import annotations

from typing import Any, NamedTuple

#: Phase names of each family as the views spell them, in the order of the observation's
#: one-hot. The terminal phase is ``"over"``; Tippen's older spelling ``"done"`` is an alias.
PHASES: dict[str, tuple[str, ...]] = {
    "tippen": ("schieben", "choice", "discard", "drop", "declare", "exchange", "rob", "play", "over"),
    "tapp": ("auction", "trump", "discard", "tout", "declare", "contract", "call", "give", "play", "over"),
}
PHASE_ALIASES = {"done": "over"}


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


#: the Tapp state attributes ``tapp_public_view`` reads; without any of them the slow path is used
_TAPP_FIELDS = ("hands", "phase", "cur", "dealer", "declarer", "holder", "trick", "leader", "ntricks", "log",
                "trump_suit", "tout", "called", "called_in_tapp", "given", "picked", "tapp", "contract", "_pot_now",
                "contract_string")


def has_fast_view(state: Any) -> bool:
    """Whether ``tapp_public_view`` can read this engine state (a Tapp state of the known layout)."""
    if state.game.rules.family != "tapp":
        return False
    from ..games import tapp

    return all(hasattr(state, f) for f in _TAPP_FIELDS) and hasattr(tapp, "PHASE_NAMES")


def _tapp_module() -> Any:
    global _TAPP
    if _TAPP is None:
        from ..games import tapp

        _TAPP = tapp
    return _TAPP


_TAPP: Any = None


def _fast_layout(game: Any) -> tuple[tuple[str, ...], int, int, int, int]:
    """(phase names, pack size, first word id, end of the words, index of Bettel ouvert or -2)."""
    size, fixed, _, _ = tapp_layout(game)
    contracts = tapp_contracts(game)
    ouvert = contracts.index("bettel-ouvert") if "bettel-ouvert" in contracts else -2
    return tuple(_tapp_module().PHASE_NAMES), size, 3 * size, 3 * size + fixed, ouvert


_FAST_LAYOUTS: dict[Any, tuple[tuple[str, ...], int, int, int, int]] = {}


class TappFacts(NamedTuple):
    """What a Tapp observation shows, as ``view(seat)`` would give it (cards as bit masks)."""

    phase: str
    dealer: int
    current_player: int
    hand_sizes: list[int]
    tricks_won: list[int]
    pot: int
    trump: str | None
    declarer: int | None
    contract: str | None
    tout: bool
    called: int | None  # card index
    given: int | None  # card index, for the declarer and the Rufer holder only
    rufer_holder: int | str | None  # a seat or "tapp", for the declarer and the holder only
    hand: int
    trick: list[tuple[int, int]]  # (seat, card) in the order played
    open_hand: int  # Bettel ouvert: the declarer's hand, once shown
    tapp: int  # the declarer's own pick-up
    discards: int  # the declarer's own discards
    played: int  # every card played this deal
    latest: dict[int, int]  # seat -> index of its latest word among the fixed actions


def tapp_public_view(state: Any, seat: int, memo: dict[str, Any] | None = None) -> TappFacts:
    """What the observation needs of ``view(seat)``, read straight from a Tapp state (fast path).

    The values are the ones ``view(seat)`` gives, by the same rules (the tests compare both
    encodings on many states). Nothing the seat may not see is read into the result: other
    hands only as sizes, the tapp and the discards only for the declarer, the given card only
    for the declarer and the Rufer holder.

    ``memo`` (a dict the caller keeps) lets the log be read only from where the last call on
    the same log stopped: the log of a deal only grows.
    """
    g = state.game
    layout = _FAST_LAYOUTS.get(g)
    if layout is None:
        layout = _FAST_LAYOUTS[g] = _fast_layout(g)
    phase_names, size, first_word, end_words, ouvert = layout
    n = state.n
    phase = state.phase
    hands = state.hands
    declarer = state.declarer
    holder = state.holder
    sizes = [h.bit_count() for h in hands]
    phase_name = phase_names[phase]
    if phase_name == "give" and seat != declarer and seat != holder:
        sizes[declarer] -= 1
        if holder >= 0:
            sizes[holder] += 1
    leader = state.leader
    open_hand = picked = discards = 0
    given: int | None = None
    rufer_holder: int | str | None = None
    if state.contract == ouvert and phase_name in ("play", "over"):
        open_hand = hands[declarer]
    if seat == declarer:
        if state.picked:
            picked = state.picked
            if phase_name != "discard":
                discards = state.tapp
        if state.called >= 0:
            rufer_holder = "tapp" if state.called_in_tapp else holder
        if state.given >= 0:
            given = state.given
    elif state.called >= 0 and seat == holder:
        rufer_holder = seat
        if state.given >= 0:
            given = state.given
    log = state.log
    if memo is not None and memo.get("log") is log and memo["done"] <= len(state.log):
        played, latest, done = memo["played"], memo["latest"], memo["done"]
    else:
        played, latest, done = 0, {}, 0
    for s, a in log[done:]:
        if a < size:
            played |= 1 << a
        elif first_word <= a < end_words:
            latest[s] = a - first_word
    if memo is not None:
        memo["log"] = log
        memo["done"] = len(log)
        memo["played"] = played
        memo["latest"] = latest
    return TappFacts(
        phase_name, state.dealer, state.cur, sizes, state.ntricks, state._pot_now(),
        state.trump_suit, declarer if declarer >= 0 else None, state.contract_string(), state.tout,
        state.called if state.called >= 0 else None, given, rufer_holder, hands[seat],
        [((leader + i) % n, c) for i, c in enumerate(state.trick)], open_hand, picked, discards, played, latest)
