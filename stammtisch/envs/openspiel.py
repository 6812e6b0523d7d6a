"""Every Tippen and Tapp preset as an OpenSpiel Python game (``pip install stammtisch[openspiel]``).

>>> import pyspiel
>>> import stammtisch.envs.openspiel  # registers the games
>>> game = pyspiel.load_game("python_tippen_grupp_1975", {"players": 3, "knocking": True})

Short names: ``python_`` + the rule set id with ``/`` and ``-`` as ``_`` (``python_tapp_modern``).
Parameters: every rule option of the preset under its own name (``players``, ``stake``, …; an
optional number such as ``max_bete`` is 0 for none), plus ``dealer`` (the dealing seat, 0),
``normalize_rewards`` (divide returns by the rule set's value unit) and ``deal_from`` (for
research on small games: the chance nodes deal only from these cards, written together as in
``"HAHKHQDADKDQ"``; everyone knows it; the rest of the pack lies below them; empty: the whole
pack).

One game is one deal. The deal is explicit chance: one card per chance node, from the top of
the deck, for as many positions as the rules can ever look at (``_engine.deck_positions_read``;
the rest of the pack lies under them in pack order). Player actions are the dense ids of
``stammtisch.envs.actions``. ``information_state_string`` is the seat's view (perfect recall:
the view carries the seat's log); ``observation_string`` is the view without the log; both
tensors are the observation encoding of ``stammtisch.envs.observation`` (so the
information-state tensor does not recall who played which card in earlier tricks).
``resample_from_infostate`` calls the engine's ``State.resample(seat, rng)`` when the engine has
it, and raises otherwise. Serialisation is OpenSpiel's: the history of actions, replayed.
"""

from __future__ import annotations

import json
import pickle
import random
from typing import Any

import numpy as np
import pyspiel  # type: ignore[import-not-found]

from ..games import TableState
from ..rules import ruleset_ids
from . import _engine
from .core import build_rules
from .observation import value_unit

#: short name of each preset
SHORT_NAMES: dict[str, str] = {rid: "python_" + rid.replace("/", "_").replace("-", "_") for rid in ruleset_ids()}
ENV_PARAMETERS = {"dealer": 0, "normalize_rewards": False, "deal_from": ""}


def _parameter_defaults(ruleset_id: str) -> dict[str, Any]:
    """The game parameters of a preset: its rule options (None as "none") and ours."""
    out: dict[str, Any] = {}
    kinds = _engine.option_kinds(ruleset_id)
    for key, value in _engine.preset_options(ruleset_id).items():
        if kinds[key] == "optint":
            out[key] = 0 if value is None else int(value)
        else:
            out[key] = value
    out.update(ENV_PARAMETERS)
    return out


class _Shared:
    """What every state of one game shares; copying a state must not copy it."""

    def __init__(self, ruleset_id: str, params: dict[str, Any]) -> None:
        self.ruleset_id = ruleset_id
        self.params = dict(params)
        kinds = _engine.option_kinds(ruleset_id)
        options = {k: (None if kinds.get(k) == "optint" and v == 0 else v)
                   for k, v in params.items() if k not in ENV_PARAMETERS}
        self.rules = build_rules(ruleset_id, None, options)
        from ..games import new_game
        from .actions import DenseActions
        from .observation import ObservationEncoder

        game: Any = new_game(self.rules)
        self.game = game
        self.n = int(self.rules.players)
        self.dealer = int(params.get("dealer", 0))
        if not 0 <= self.dealer < self.n:
            raise ValueError(f"dealer must be a seat from 0 to {self.n - 1}, not {self.dealer}")
        self.unit = value_unit(self.rules) if params.get("normalize_rewards") else 1.0
        self.actions = DenseActions(self.game)
        self.encoder = ObservationEncoder(self.game, self.actions)
        self.size = int(game.pack.size)
        self.dealt = _engine.deck_positions_read(self.game)
        #: the cards the chance nodes deal from, in pack order (all of the pack unless deal_from)
        self.chance_cards = self._chance_cards(str(params.get("deal_from", "")))

    def _chance_cards(self, text: str) -> list[int]:
        if not text:
            return list(range(self.size))
        pack = self.game.pack
        names = [text[i:i + 2] for i in range(0, len(text), 2)]
        try:
            cards = sorted({pack.card(c) for c in names})
        except ValueError as e:
            raise ValueError(f"deal_from: {e}") from None
        if len(cards) != len(names) or len(text) % 2:
            raise ValueError(f"deal_from {text!r} must name different cards, two characters each (HAHKHQ…)")
        if len(cards) < self.dealt:
            raise ValueError(f"deal_from names {len(cards)} cards; a deal of {self.rules.id} with these options "
                             f"needs {self.dealt}")
        return cards

    def __deepcopy__(self, memo: dict[int, Any]) -> _Shared:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (_Shared, (self.ruleset_id, self.params))


class _Box:
    """Holds the engine state; a deep copy clones it with the engine's fast ``clone()``.

    It also keeps the deck and the engine actions applied, so that a pickle (OpenSpiel's
    serialisation of Python states) is the deal replayed rather than the engine's objects.
    ``actions`` is None for a resampled state, which has no history of its own.
    """

    def __init__(self, state: Any, deck: tuple[int, ...] = (), actions: list[int] | None = None) -> None:
        self.state = state
        self.deck = deck
        self.actions = actions

    def __deepcopy__(self, memo: dict[int, Any]) -> _Box:
        return _Box(None if self.state is None else self.state.clone(), self.deck,
                    None if self.actions is None else self.actions[:])

    def __reduce__(self) -> tuple[Any, ...]:
        if self.state is None:
            return (_Box, (None,))
        if self.actions is None:
            raise pickle.PicklingError("a resampled state has no history to serialise")
        return (_replayed_box, (self.state.game.rules, self.deck, self.actions))


def _replayed_box(rules: Any, deck: tuple[int, ...], actions: list[int]) -> _Box:
    from ..games import shared_game

    game = shared_game(rules)  # equal rules, one engine
    state = game.new_deal(TableState(dealer=deck[0]), list(deck[1:]))
    for a in actions:
        state.apply(a)
    return _Box(state, deck, list(actions))


def _bound(rules: Any) -> float:
    """A bound on what one seat can win or lose in one deal from an empty pot (not tight)."""
    n = int(rules.players)
    if rules.family == "tippen":
        return float(rules.stake * n * (n + 2))
    if _engine.is_modern_tapp(rules):
        return float(2 * 60 * (n - 1))
    return float(2 * (rules.tout_multiplier * 120 * (n - 1) + 4 * rules.pot_ante + 240))


class StammtischGame(pyspiel.Game):  # type: ignore[misc]
    """One preset with its parameters. Built by ``pyspiel.load_game(short name, params)``."""

    ruleset_id = ""  # set in each registered subclass

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        defaults = _parameter_defaults(self.ruleset_id)
        merged = {**defaults, **(params or {})}
        shared = _Shared(self.ruleset_id, merged)
        n = shared.n
        bound = _bound(shared.rules) / shared.unit
        game_type = _game_type(self.ruleset_id)
        info = pyspiel.GameInfo(
            num_distinct_actions=shared.actions.num_actions,
            max_chance_outcomes=shared.size,
            num_players=n,
            min_utility=-bound,
            max_utility=bound,
            utility_sum=None,
            max_game_length=shared.dealt + 8 * n + shared.size + 16,
        )
        super().__init__(game_type, info, merged)
        self.shared = shared

    def new_initial_state(self) -> StammtischState:
        return StammtischState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> StammtischObserver:
        return StammtischObserver(
            self.shared, iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params)


class StammtischState(pyspiel.State):  # type: ignore[misc]
    def __init__(self, game: StammtischGame) -> None:
        super().__init__(game)
        self.shared = game.shared
        self.deck: list[int] = []
        self.box = _Box(None)

    # ------------------------------------------------------------------ engine access
    @property
    def engine(self) -> Any:
        """The engine state (None while the cards are being dealt)."""
        return self.box.state

    def _legal_engine(self) -> list[int]:
        return list(self.box.state.legal_actions())

    # ------------------------------------------------------------------ OpenSpiel API
    def current_player(self) -> int:
        if self.box.state is None:
            return int(pyspiel.PlayerId.CHANCE)
        if self.box.state.is_terminal():
            return int(pyspiel.PlayerId.TERMINAL)
        return int(self.box.state.current_player())

    def is_terminal(self) -> bool:
        return self.box.state is not None and bool(self.box.state.is_terminal())

    def _legal_actions(self, player: int) -> list[int]:
        if self.box.state is None or self.box.state.is_terminal() or player != self.box.state.current_player():
            return []
        return self.shared.actions.dense_legal(self._legal_engine())

    def chance_outcomes(self) -> list[tuple[int, float]]:
        assert self.box.state is None
        dealt = set(self.deck)
        rest = [c for c in self.shared.chance_cards if c not in dealt]
        p = 1.0 / len(rest)
        return [(c, p) for c in rest]

    def _apply_action(self, action: int) -> None:
        sh = self.shared
        if self.box.state is None:
            if action in self.deck or action not in sh.chance_cards:
                raise ValueError(f"chance outcome {action} is not a card still in the deck")
            self.deck.append(action)
            if len(self.deck) == sh.dealt:
                dealt = set(self.deck)
                deck = self.deck + [c for c in range(sh.size) if c not in dealt]
                # the box's deck holds the dealer first, then the cards (for the replay)
                self.box = _Box(sh.game.new_deal(TableState(dealer=sh.dealer), deck), (sh.dealer, *deck), [])
            return
        engine = sh.actions.to_engine(self._legal_engine(), int(action))
        self.box.state.apply(engine)
        if self.box.actions is not None:
            self.box.actions.append(engine)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal:{self.shared.game.pack.cards[action]}"
        legal = self._legal_engine() if self.box.state is not None and not self.box.state.is_terminal() else []
        return self.shared.actions.describe(int(action), legal)

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0] * self.shared.n
        return [r / self.shared.unit for r in self.box.state.returns()]

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> StammtischState:
        """A state consistent with what ``player_id`` knows, from the engine's ``State.resample``."""
        if self.box.state is None:
            # while dealing nobody knows a card yet: any deal prefix of the same length will do
            clone: StammtischState = self.clone()
            rng = random.Random(int(probability_sampler() * 2**53))
            clone.deck = rng.sample(self.shared.chance_cards, len(self.deck))
            return clone
        rng = random.Random(int(probability_sampler() * 2**53))
        sampled = _engine.resample(self.box.state, player_id, rng)
        if sampled is None:
            raise pyspiel.SpielError(
                "resample_from_infostate needs the engine's State.resample(seat, rng), which this engine does "
                "not have yet")
        clone = self.clone()
        clone.box = _Box(sampled)
        return clone

    def __str__(self) -> str:
        if self.box.state is None:
            return "dealing: " + " ".join(self.shared.game.pack.cards[c] for c in self.deck)
        return json.dumps(self.box.state.view(None), sort_keys=True)


class StammtischObserver:
    """OpenSpiel's observer for a seat: strings from the view, tensors from the encoding."""

    def __init__(self, shared: _Shared, iig_obs_type: Any, params: Any) -> None:
        if params:
            raise ValueError(f"observation parameters are not supported; passed {params}")
        if iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER or not iig_obs_type.public_info:
            raise ValueError("only the seat's own observation (public and own private information) is offered")
        self.shared = shared
        self.perfect_recall = bool(iig_obs_type.perfect_recall)
        self.tensor = np.zeros(shared.encoder.size, np.float32)
        self.dict = {name: self.tensor[off:off + size] for name, off, size in shared.encoder.describe()}

    def _view(self, state: StammtischState, player: int) -> dict[str, Any] | None:
        if state.box.state is None:
            return None
        view: dict[str, Any] = state.box.state.view(player)
        return view

    def set_from(self, state: StammtischState, player: int) -> None:
        view = self._view(state, player)
        if view is None:
            self.tensor.fill(0.0)
            return
        legal = state._legal_actions(player)
        self.tensor[:] = self.shared.encoder.encode(view, legal)

    def string_from(self, state: StammtischState, player: int) -> str:
        view = self._view(state, player)
        if view is None:
            return f"seat {player}: dealing ({len(state.deck)} of {self.shared.dealt} cards)"
        view.pop("legal_actions", None)
        view.pop("options", None)  # the same in every state of the game
        if not self.perfect_recall:
            view.pop("log", None)
        return json.dumps(view, sort_keys=True, separators=(",", ":"))


def _game_type(ruleset_id: str) -> Any:
    return pyspiel.GameType(
        short_name=SHORT_NAMES[ruleset_id],
        long_name=f"stammtisch {ruleset_id}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=10,
        min_num_players=3,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=_parameter_defaults(ruleset_id),
    )


def _register() -> None:
    registered = set(pyspiel.registered_names())
    for rid, short in SHORT_NAMES.items():
        if short in registered:
            continue
        cls = type(f"StammtischGame_{short}", (StammtischGame,), {"ruleset_id": rid})
        pyspiel.register_game(_game_type(rid), cls)


_register()


def load(ruleset_id: str, players: int | None = None, **params: Any) -> Any:
    """``pyspiel.load_game`` by rule set id: ``load("tippen/grupp-1975", players=3, knocking=True)``."""
    if ruleset_id not in SHORT_NAMES:
        _engine.preset_options(ruleset_id)  # raises the CLI's RuleError for an unknown rule set
    if players is not None:
        params["players"] = players
    kinds = _engine.option_kinds(ruleset_id)
    for key, value in params.items():
        if kinds.get(key) == "optint" and (value is None or str(value).lower() == "none"):
            params[key] = 0
    unknown = [k for k in params if k not in kinds and k not in ENV_PARAMETERS]
    if unknown:
        build_rules(ruleset_id, None, {k: params[k] for k in unknown})  # the CLI's RuleError
    return pyspiel.load_game(SHORT_NAMES[ruleset_id], params)


_GAMES: dict[tuple[str, tuple[tuple[str, Any], ...]], Any] = {}


def game_for(rules: Any) -> Any:
    """The OpenSpiel game of a rule set (remembered: building one is not free)."""
    kinds = _engine.option_kinds(rules.id)
    params = {k: (0 if getattr(rules, k) is None and kind == "optint" else getattr(rules, k))
              for k, kind in kinds.items()}
    key = (rules.id, tuple(sorted(params.items())))
    game = _GAMES.get(key)
    if game is None:
        game = _GAMES[key] = pyspiel.load_game(SHORT_NAMES[rules.id], params)
    return game


def wrap(engine_state: Any) -> StammtischState:
    """An OpenSpiel state over a copy of an engine state (its deal already dealt)."""
    state: StammtischState = game_for(engine_state.game.rules).new_initial_state()
    state.box = _Box(engine_state.clone())
    return state
