"""Open-hand ("double dummy") solvers for Tapp and Tippen.

``position_from_state(state)`` turns an engine state in the play phase into a
:class:`Position`; a :class:`Solver` answers the questions of each game on it:

* Tapp: ``declarer_points()`` (exact card points of the declarer's side, the tapp included),
  ``can_reach(61)`` (one zero-window search), ``all_tricks()`` (Durch, Rufer), ``no_trick()``
  (Bettel), ``ramsch()`` (per seat, paranoid), ``contract_move_values()`` (every legal card);
* Tippen: ``guaranteed_tricks()`` (per active player, paranoid), ``maxn()``.

The numba kernel (``_kernel``) runs only when a solve runs on the ``"numba"`` backend, from
its library of native code built once per machine (``_kernel_lib``) or else through numba;
``backend="python"`` uses the readable reference search, which the tests compare with it.
"""

from .model import Goal, Kind, Position
from .position import NotInPlay, position_from_state
from .solver import Solver

__all__ = ["Goal", "Kind", "NotInPlay", "Position", "Solver", "position_from_state"]
