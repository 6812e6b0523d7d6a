"""The Tapp engine (docs/rules-reference.md §3): Württemberg Tarock, Classic Tapp (1879),
Modern Tapp.

Seats are numbered in the direction of play (rules reference §0), so Modern Tapp's
counter-clockwise play needs no special arithmetic: forehand is ``dealer + 1``.

One module per concern:

- ``contracts``: the contracts as a typed table (``Contract``, ``Kind``, ``Level``);
- ``scoring``: the settlements as pure functions;
- ``game``: ``TappGame`` — per-rule-set tables, the deal plan, the notation;
- ``state``: ``TappState`` — the phases all flows share: discard, play, end, settlement,
  result, view, ``known_mask``;
- ``auction`` and ``rounds``: the two ways a contract is chosen (historic auction with hold;
  Modern play/weg and contract rounds with the Rufer call), each a small subclass.
"""

from .auction import AuctionState
from .contracts import HISTORIC_BIDS, MODERN_CONTRACTS, Contract, Kind, Level, modern_value
from .game import DEAL_PATTERNS, TappGame
from .rounds import RoundsState
from .scoring import historic_settlement, ramsch_settlement
from .state import PHASE_NAMES, Phase, TappState

FRAGE, SOLO, HERZSOLO = Level.FRAGE, Level.SOLO, Level.HERZSOLO

__all__ = [
    "DEAL_PATTERNS", "FRAGE", "HERZSOLO", "HISTORIC_BIDS", "MODERN_CONTRACTS", "PHASE_NAMES",
    "SOLO", "AuctionState", "Contract", "Kind", "Level", "Phase", "RoundsState", "TappGame",
    "TappState", "historic_settlement", "modern_value", "ramsch_settlement",
]
