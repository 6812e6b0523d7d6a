"""The one adapter from engine states to solver positions.

Every read of an engine attribute by the solvers happens in this module (the engines are
being refactored; when an attribute moves, only this file changes). Attributes read, besides
``game.family`` and the phase of ``observation(None)``:

* Tapp (``TappState``): ``hands``, ``trick`` (card list), ``leader``, ``points``, ``ntricks``,
  ``trump_mask``, ``kind`` (0 points, 1 Bettel, 2 all tricks, 3 Ramsch), ``declarer``,
  ``holder`` (Rufer), ``tapp`` (mask), ``played`` (tricks completed), ``game.pack``,
  ``game.mask_points``.
* Tippen (``TippenState``): ``hands``, ``trick`` (list of (seat, card)), ``status``,
  ``trump_mask``, ``tricks_won``, ``game.pack``, ``game.rules`` (``void_must_trump``,
  ``head_trick``, ``forced_leads``).

Rufer: the engine's winning condition is that the declarer himself takes every trick (the
holder of the called card handed it over and plays against him), so the declarer's side is
the declarer alone; the holder is kept as ``partner`` for whoever wants the partnership.
"""

from __future__ import annotations

from typing import Any

from ..games.tapp.phases import PLAY as TAPP_PLAY
from ..games.tippen.phases import PLAY as TIPPEN_PLAY
from .model import Kind, Position

#: the play phase's number, per game family
_PLAY = {"tapp": TAPP_PLAY, "tippen": TIPPEN_PLAY}
#: Engine ``TappState.kind`` → solver kind.
_TAPP_KINDS = {0: Kind.POINTS, 1: Kind.NO_TRICK, 2: Kind.ALL_TRICKS, 3: Kind.RAMSCH}
#: ``TippenState.status`` of a seat that plays (games.tippen.ACTIVE).
_TIPPEN_ACTIVE = 1


class NotInPlay(ValueError):
    """The state is not in the play phase (nothing for the solver to do)."""

    rule = "not in play"


def position_from_state(state: Any) -> Position:
    """A solver position for a Tapp or Tippen state in the play phase (all cards open)."""
    game = state.game.family
    if game not in _PLAY:
        raise ValueError(f"no solver for the game {game!r}")
    if state.is_terminal() or state.observation(None).phase != _PLAY[game]:
        raise NotInPlay("the open-hand solver needs a deal in the play phase")
    return _from_tapp(state) if game == "tapp" else _from_tippen(state)


def _from_tapp(state: Any) -> Position:
    pack = state.game.pack
    kind = _TAPP_KINDS[state.kind]
    declarer = state.declarer
    n = len(state.hands)
    tapp_points = state.game.mask_points(state.tapp)
    return Position(
        game="tapp",
        seats=tuple(range(n)),
        hands=tuple(state.hands),
        trick=tuple(state.trick),
        leader=state.leader,
        trump=state.trump_mask,
        suit_masks=tuple(pack.suit_masks),
        ranks_per_suit=pack.ranks_per_suit,
        card_points=tuple(pack.points),
        points=tuple(state.points),
        tricks=tuple(state.ntricks),
        tricks_played=state.played,
        kind=kind,
        declarer=declarer,
        side=(1 << declarer) if declarer >= 0 and kind != Kind.RAMSCH else 0,
        partner=state.holder if state.holder >= 0 else -1,
        tapp_points=tapp_points,
        must_trump="always",
        head=False,
        forced_leads=False,
    )


def _from_tippen(state: Any) -> Position:
    pack = state.game.pack
    rules = state.game.rules
    n = len(state.hands)
    seats = tuple(s for s in range(n) if state.status[s] == _TIPPEN_ACTIVE)
    trick = tuple(card for _seat, card in state.trick)
    leader = state.trick[0][0] if state.trick else state.current_player()
    return Position(
        game="tippen",
        seats=seats,
        hands=tuple(h if s in seats else 0 for s, h in enumerate(state.hands)),
        trick=trick,
        leader=leader,
        trump=state.trump_mask,
        suit_masks=tuple(pack.suit_masks),
        ranks_per_suit=pack.ranks_per_suit,
        card_points=(0,) * pack.size,
        points=(0,) * n,
        tricks=tuple(state.tricks_won),
        tricks_played=sum(state.tricks_won),
        kind=Kind.TRICKS,
        must_trump=rules.void_must_trump,
        head=bool(rules.head_trick),
        forced_leads=bool(rules.forced_leads),
    )
