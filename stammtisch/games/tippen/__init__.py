"""The Tippen engine (docs/rules-reference.md §2): every rule set and option of ``TippenRules``.

A deal runs through these phases (each skipped when the rule set does not use it):

``schieben`` (shove/deal) → Hupf und Sprung check (automatic; a jump ends the deal) → deal →
``choice`` (dealer: sniff/knock/turn) → ``discard`` → ``drop`` (1859 sniffer) → ``declare``
(tap/pass, forehand first, dealer last) → ``exchange`` (active players from forehand) →
``rob`` (every active player from forehand says rob/no-rob; only the holder of the trump 7
may rob, and asking everyone keeps where the 7 lies hidden) → ``play`` → ``over``.

Action ids (``S`` = pack size; see ``TippenGame``):

* ``0 … S-1``: ``play:XX`` (the card index);
* ``S … 2S-1``: ``discard:XX`` (``S`` + card index);
* ``2S + k``: the word actions ``tap pass shove deal sniff knock turn drop stay rob no-rob``
  (k = 0 … 10, in that order);
* ``2S + 16 + mask``: ``exchange:…`` with the bit mask of the exchanged cards (``mask`` 0 is
  ``exchange:-``).

Money (rules reference §1): every movement is a ``Transfer`` kept in ``state.transfers``; the
pot and reserve the state shows are the table's balances plus those transfers.

One module per concern (as the ``tapp`` package):

- ``phases``: the phase, seat, upcard and word numbers every module shares;
- ``game``: ``TippenGame`` — per-rule-set tables, the deal, the notation;
- ``core``: the state's fields and the helpers its parts share (money, turns, the trump);
- ``words``: the phases before the play (shove, choice, discard, drop, tap/pass, exchange, rob);
- ``scoring``: the settlement and the result;
- ``state``: ``TippenState`` — the play, dispatch, refusals, view and ``known_mask``;
- ``sampling``: ``resample_tippen``, the state's world sampler beside its ``known_mask``.
"""

from .game import EXCHANGE_TEXTS_KEPT, TippenGame
from .phases import (
    ACTIVE,
    CHOICE,
    DECLARE,
    DISCARD,
    DROP,
    DROPPED,
    EXCHANGE,
    EXCHANGE_OFFSET,
    OVER,
    PASSED,
    PHASE_HINT,
    PHASE_NAMES,
    PLAY,
    ROB,
    SHOVE,
    TAKE_KNOCK,
    TAKE_NONE,
    TAKE_SNIFF1859,
    TAKE_SNIFF_MODERN,
    UNDECIDED,
    UP_FACE,
    UP_HIDDEN,
    UP_NONE,
    UP_TAKEN,
    W_DEAL,
    W_DROP,
    W_KNOCK,
    W_LOOK,
    W_NOROB,
    W_PASS,
    W_ROB,
    W_SHOVE,
    W_SNIFF,
    W_STAY,
    W_TAP,
    W_TURN,
    WORDS,
    Phase,
)
from .sampling import resample_tippen, tippen_voids
from .state import TippenState

__all__ = [
    "ACTIVE", "CHOICE", "DECLARE", "DISCARD", "DROP", "DROPPED", "EXCHANGE", "EXCHANGE_OFFSET",
    "EXCHANGE_TEXTS_KEPT", "OVER", "PASSED", "PHASE_HINT", "PHASE_NAMES", "PLAY", "ROB", "SHOVE",
    "TAKE_KNOCK", "TAKE_NONE", "TAKE_SNIFF1859", "TAKE_SNIFF_MODERN", "UNDECIDED", "UP_FACE",
    "UP_HIDDEN", "UP_NONE", "UP_TAKEN", "WORDS", "W_DEAL", "W_DROP", "W_KNOCK", "W_LOOK",
    "W_NOROB", "W_PASS", "W_ROB", "W_SHOVE", "W_SNIFF", "W_STAY", "W_TAP", "W_TURN", "Phase",
    "TippenGame", "TippenState", "resample_tippen", "tippen_voids",
]
