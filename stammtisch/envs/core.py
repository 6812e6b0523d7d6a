"""What every environment shares: a table of deals driven by dense actions (numpy only).

``DealTable`` builds the rule set exactly as the CLI does (unknown rule set or option: the same
``RuleError`` text), deals from a numpy generator, maps dense actions, builds observations and
pays each seat the ledger's net change when a deal ends. PettingZoo, Gymnasium and the
``openspiel-ismcts`` bot wrap it; none of those libraries is imported here.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from ..games import TableState, new_game
from ..ledger import Ledger
from ..rules import ruleset as build_ruleset
from .actions import DenseActions
from .observation import FLOAT32, ObservationEncoder, value_unit

#: numpy converts a dtype given as a type at every call; an instance is taken as it is
INT8: Final = np.dtype(np.int8)


def build_rules(ruleset: str, players: int | None, options: dict[str, Any]) -> Any:
    """The rule set from an id, a player count and rule options, as the CLI builds it."""
    overrides = dict(options)
    if players is not None:
        overrides["players"] = players
    return build_ruleset(ruleset, overrides)


def agent_name(seat: int) -> str:
    return f"seat_{seat}"


class DealTable:
    """A session of ``session_deals`` deals at one table, the pot carried from deal to deal."""

    def __init__(self, ruleset: str = "tippen/grupp-1975", players: int | None = None,
                 session_deals: int = 1, normalize_rewards: bool = False, **options: Any) -> None:
        if not isinstance(session_deals, int) or session_deals < 1:
            raise ValueError(f"session_deals must be a whole number of at least 1, not {session_deals!r}")
        self.rules = build_rules(ruleset, players, options)
        self.game: Any = new_game(self.rules)
        self.num_players: int = int(self.rules.players)
        self.actions = DenseActions(self.game)
        self.encoder = ObservationEncoder(self.game, self.actions)
        # the encoder's ``encode_state``, called here without going through it (the per-step path)
        self._vector: Any = self.encoder._vector
        self._layout = self.encoder.layout
        self.session_deals = session_deals
        self.reward_unit = value_unit(self.rules) if normalize_rewards else 1.0
        self.ledger = Ledger(self.num_players)
        self.deals_played = 0
        #: what the deal in progress inherited (dealer, pot, reserve, deal number)
        self.table_state = TableState()
        #: the results of the finished deals of this session
        self.results: list[Any] = []
        self._state: Any = None
        self.rng = np.random.default_rng()
        self._legal: list[int] | None = None
        self._legal_dense: list[int] | None = None

    # ------------------------------------------------------------------ session
    def reset(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.ledger = Ledger(self.num_players)
        self.deals_played = 0
        self.results = []
        self._start_deal(TableState())

    def _start_deal(self, table: TableState) -> None:
        deck = self.rng.permutation(self.game.pack.size).tolist()
        self.table_state = table
        self._state = self.game.new_deal(table, deck)
        self.deals_played += 1
        self._legal = self._legal_dense = None

    @property
    def state(self) -> Any:
        """The engine state of the deal in progress (or just finished)."""
        assert self._state is not None, "call reset() first"
        return self._state

    def current_seat(self) -> int:
        return int(self._state.current_player())

    def legal(self) -> list[int]:
        if self._legal is None:
            self._legal = self._state.legal_actions()
        return self._legal

    def legal_dense(self) -> list[int]:
        if self._legal_dense is None:
            self._legal_dense = self.actions.dense_legal(self.legal())
        return self._legal_dense

    # ------------------------------------------------------------------ observing
    def observation(self, seat: int) -> np.ndarray:
        state = self._state
        legal = self.legal_dense() if state.current_player() == seat else ()
        return self.encoder.encode_state(state, seat, legal)

    def action_mask(self, seat: int) -> np.ndarray:
        buf = bytearray(self.actions.num_actions)
        if self._state.current_player() == seat:
            for d in self.legal_dense():
                buf[d] = 1
        return np.frombuffer(buf, INT8)

    def observe(self, seat: int) -> tuple[np.ndarray, np.ndarray]:
        """``(observation(seat), action_mask(seat))`` in one call (the per-step hot path)."""
        state = self._state
        mask = bytearray(self.actions.num_actions)
        if state.current_player() == seat:
            legal = self.legal_dense()
            for d in legal:
                mask[d] = 1
            seen = self._vector(state.observation(seat), self._layout, legal)
        else:
            seen = self._vector(state.observation(seat), self._layout, ())
        return np.frombuffer(seen, FLOAT32), np.frombuffer(mask, INT8)

    # ------------------------------------------------------------------ acting
    def step(self, dense: int) -> tuple[list[float] | None, bool]:
        """Apply the current seat's dense action.

        Returns ``(rewards, session_over)``: ``rewards`` per seat when this action ended a
        deal (the ledger's net change, ÷ the value unit when normalised), else ``None``. A dense
        id that is not legal now raises ``ValueError`` naming it; the state is unchanged.
        """
        return self.step_engine(self.actions.to_engine(self.legal(), int(dense)))

    def step_engine(self, engine: int) -> tuple[list[float] | None, bool]:
        """``step`` with an engine action id (what the bots choose)."""
        state = self._state
        state.apply(engine)
        self._legal = self._legal_dense = None
        if not state.is_terminal():
            return None, False
        # The deal is over: its transfers go to the ledger, as a table books them.
        result = state.result()
        self.results.append(result)
        before = self.ledger.player_balances()
        self.ledger.apply_all(result.transfers)
        after = self.ledger.player_balances()
        rewards = [(after[s] - before[s]) / self.reward_unit for s in range(self.num_players)]
        if self.deals_played < self.session_deals:
            self._start_deal(TableState(dealer=result.next_dealer % self.num_players, pot=self.ledger.pot,
                                        reserve=self.ledger.reserve))
            return rewards, False
        return rewards, True

    # ------------------------------------------------------------------ showing
    def render(self, seat: int | None = None) -> str:
        """The deal as text: the spectator's view, or one seat's."""
        if self._state is None:
            return "(no deal yet: call reset())"
        state = self.state
        view = state.view(seat)
        lines = [f"{self.rules.id}  deal {self.deals_played}/{self.session_deals}  phase {view['phase']}  "
                 f"pot {view['pot']}  trump {view.get('trump') or '?'}"]
        for s in range(self.num_players):
            mark = ">" if view["current_player"] == s else " "
            hand = " ".join(view["hand"]) if s == seat else f"{view['hand_sizes'][s]} cards"
            lines.append(f"{mark} seat_{s}: {hand}  tricks {view['tricks_won'][s]}  "
                         f"balance {self.ledger.balances[s]}")
        if view["trick"]:
            lines.append("trick: " + " ".join(f"seat_{s}:{c}" for s, c in view["trick"]))
        if view["log"]:
            lines.append("last: " + " | ".join(f"seat_{s} {a}" for s, a in view["log"][-4:]))
        return "\n".join(lines)
