"""What every environment shares: a table of deals driven by dense actions (numpy only).

``DealTable`` builds the rule set exactly as the CLI does (unknown rule set or option: the same
``RuleError`` text), deals from a numpy generator, maps dense actions, builds observations and
pays each seat the ledger's net change when a deal ends. PettingZoo, Gymnasium and the
``openspiel-ismcts`` bot wrap it; none of those libraries is imported here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..games.base import new_game
from ..rules import ruleset as build_ruleset
from ..table import Table
from .actions import DenseActions
from .observation import ObservationEncoder, value_unit

#: The environment's own options (everything else is a rule option of the rule set).
ENV_OPTIONS = ("session_deals", "normalize_rewards")


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
        self.session_deals = session_deals
        self.reward_unit = value_unit(self.rules) if normalize_rewards else 1.0
        self.table: Table | None = None
        self.rng = np.random.default_rng()
        self._legal: list[int] | None = None
        self._legal_dense: list[int] | None = None

    # ------------------------------------------------------------------ session
    def reset(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.table = Table(self.rules, [agent_name(s) for s in range(self.num_players)])
        self._start_deal()

    def _start_deal(self) -> None:
        assert self.table is not None
        deck = self.rng.permutation(self.game.pack.size).tolist()
        self.table.start_deal(deck)
        self._legal = self._legal_dense = None

    @property
    def state(self) -> Any:
        assert self.table is not None and self.table.state is not None, "call reset() first"
        return self.table.state

    @property
    def deals_played(self) -> int:
        return len(self.table.deals) if self.table else 0

    def current_seat(self) -> int:
        return int(self.state.current_player())

    def legal(self) -> list[int]:
        if self._legal is None:
            self._legal = self.state.legal_actions()
        return self._legal

    def legal_dense(self) -> list[int]:
        if self._legal_dense is None:
            self._legal_dense = self.actions.dense_legal(self.legal())
        return self._legal_dense

    # ------------------------------------------------------------------ observing
    def observation(self, seat: int) -> np.ndarray:
        state = self.state
        legal = self.legal_dense() if state.current_player() == seat else ()
        return self.encoder.encode(state.view(seat), legal)

    def action_mask(self, seat: int) -> np.ndarray:
        mask = np.zeros(self.actions.num_actions, dtype=np.int8)
        if self.state.current_player() == seat:
            mask[self.legal_dense()] = 1
        return mask

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
        assert self.table is not None
        before = self.table.ledger.player_balances()
        self.table.apply_id(engine)
        self._legal = self._legal_dense = None
        if not self.state.is_terminal():
            return None, False
        after = self.table.ledger.player_balances()
        rewards = [(after[s] - before[s]) / self.reward_unit for s in range(self.num_players)]
        if self.deals_played < self.session_deals:
            self._start_deal()
            return rewards, False
        return rewards, True

    # ------------------------------------------------------------------ showing
    def render(self, seat: int | None = None) -> str:
        """The deal as text: the spectator's view, or one seat's."""
        if self.table is None:
            return "(no deal yet: call reset())"
        state = self.state
        view = state.view(seat)
        lines = [f"{self.rules.id}  deal {self.deals_played}/{self.session_deals}  phase {view['phase']}  "
                 f"pot {view['pot']}  trump {view.get('trump') or '?'}"]
        for s in range(self.num_players):
            mark = ">" if view["current_player"] == s else " "
            hand = " ".join(view["hand"]) if s == seat else f"{view['hand_sizes'][s]} cards"
            lines.append(f"{mark} seat_{s}: {hand}  tricks {view['tricks_won'][s]}  "
                         f"balance {self.table.ledger.balances[s]}")
        if view["trick"]:
            lines.append("trick: " + " ".join(f"seat_{s}:{c}" for s, c in view["trick"]))
        if view["log"]:
            lines.append("last: " + " | ".join(f"seat_{s} {a}" for s, a in view["log"][-4:]))
        return "\n".join(lines)
