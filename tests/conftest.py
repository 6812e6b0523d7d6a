"""Shared fixtures: the conformance helpers (random valid rule sets, observing a state through
its public API, the cards a view names), and a throw-away PostgreSQL server for the storage
tests.

Like the browser tests, these need a program from Debian (``postgresql``), which
``scripts/test`` installs; without it they fail rather than skip, so CI cannot pass by
testing less.
"""

from __future__ import annotations

import math
import random
import re
from typing import Any

import pytest
from throwaway_postgres import ThrowAwayPostgres

from stammtisch.rules import PRESETS, RuleError, option_specs, ruleset


def pytest_report_header() -> str:
    import stammtisch

    build = "compiled by mypyc" if stammtisch.NATIVE else "plain Python"
    return f"stammtisch engines and bots: {build} (stammtisch/_native.py)"


# ----------------------------------------------------------------------------- conformance
CARD_RE = re.compile(r"\b[HDCS][AKQJT98765432]\b")


#: Options whose value must be a multiple of the tricks of a hand (a trick's share of the pot).
MULTIPLES_OF_TRICKS = ("stake", "max_bete")
#: How many draws ``random_rules`` makes at most before it gives up: far more than it needs
#: (``test_conformance`` checks how many it refuses), so giving up is a bug of the generator.
MAX_DRAWS = 200


def random_number(rng: random.Random, lo: int, hi: int, default: int, step: int = 1) -> int | None:
    """A whole number from ``lo`` to ``hi``, a multiple of ``step`` (None: there is none): the
    bounds, every order of magnitude between them, and small multiples of the default all
    come up."""
    k_lo, k_hi = -(-lo // step), hi // step
    if k_lo > k_hi:
        return None
    kind = rng.randrange(5)
    if kind == 0:
        k = k_lo
    elif kind == 1:
        k = k_hi
    elif kind == 2:
        k = rng.randint(k_lo, k_hi)
    elif kind == 3:  # log-uniform: 1-digit, 2-digit, ... values alike
        k = round(math.exp(rng.uniform(math.log(k_lo), math.log(k_hi))))
    else:
        k = max(1, default // step) * rng.randint(1, 4)
    return max(k_lo, min(k_hi, k)) * step


def random_options(ruleset_id: str, rng: random.Random, p: float = 0.5) -> dict[str, Any]:
    """Random values for a random part of the options of ``ruleset_id`` (each with chance
    ``p``), read from its option specs, so a new option is covered without touching this
    file: every option, ``suits`` included, and numbers over their whole range. The
    combination may be one the rule set refuses (``random_rules`` draws again then)."""
    preset = PRESETS[ruleset_id]
    specs = option_specs(ruleset_id)
    opts: dict[str, Any] = {}
    # the tricks first: stake and max_bete are drawn as multiples of them
    for name in sorted(specs, key=lambda n: n in MULTIPLES_OF_TRICKS):
        spec = specs[name]
        default = preset.defaults[name]
        if rng.random() >= p:
            if name == "stake" and "tricks" in opts:  # the preset's value of a trick, new tricks
                opts[name] = opts["tricks"] * max(1, default // preset.defaults["tricks"])
            continue
        if spec.kind == "bool":
            opts[name] = rng.random() < 0.5
        elif spec.kind == "choice":
            opts[name] = rng.choice(spec.choices)
        elif name == "players":
            top = getattr(preset, "max_players_whist52", None) or preset.max_players
            opts[name] = rng.randint(preset.min_players, top)
        elif spec.kind == "optint" and rng.random() < 0.25:
            opts[name] = None
        else:
            assert spec.kind in ("int", "optint") and spec.minimum is not None and spec.maximum is not None, name
            step = opts.get("tricks", preset.defaults.get("tricks", 1)) if name in MULTIPLES_OF_TRICKS else 1
            opts[name] = random_number(rng, spec.minimum, spec.maximum, default or step, step)
    return opts


def random_rules(ruleset_id: str, rng: random.Random, p: float = 0.5,
                 refused: list[int] | None = None) -> Any:
    """A valid rule set of ``ruleset_id`` with random values for some of its options
    (``random_options``); a combination the rule set refuses is drawn again, and counted in
    ``refused[0]`` when given."""
    for _ in range(MAX_DRAWS):
        try:
            return ruleset(ruleset_id, random_options(ruleset_id, rng, p))
        except RuleError:
            if refused is not None:
                refused[0] += 1
    raise AssertionError(f"no valid rule set of {ruleset_id} in {MAX_DRAWS} draws")


def observe(state: Any) -> tuple[Any, ...]:
    """Everything the public API shows of a state: every seat's and the spectator's view,
    the legal actions, whose turn, what each seat knows. Equal observations = same state
    for every user of the engine."""
    n = state.game.num_players
    seats = [None, *range(n)]
    return (tuple(repr(state.view(s)) for s in seats), tuple(state.legal_actions()),
            state.current_player(), state.is_terminal(), tuple(state.known_mask(s) for s in seats),
            tuple(state.observation(s).key() for s in seats))


def observation_from_view(view: dict[str, Any], game: Any) -> Any:
    """The observation a seat's view holds, built from the view alone: ``state.observation(seat)``
    must equal it, so the observation holds nothing the view does not show (and the view
    nothing beyond ``known_mask``, which the conformance suite checks)."""
    from stammtisch.games import IllegalAction

    index = game.pack.index
    n = game.num_players

    def card(name: str | None) -> int:
        return -1 if name is None else index[name]

    def mask(names: Any) -> int:
        m = 0
        for name in names or ():
            m |= 1 << index[name]
        return m

    def pairs(trick: Any) -> tuple[tuple[int, int], ...]:
        return tuple((seat, index[name]) for seat, name in trick)

    seat = -1 if view["seat"] is None else view["seat"]
    played = 0
    words = [-1] * n
    last = view["last_trick"]
    trump = -1 if view["trump"] is None else "HDCS".index(view["trump"])
    if view["game"] == "tippen":
        from stammtisch.games.tippen import PHASE_NAMES, WORDS
        from stammtisch.games.tippen.observation import TippenObservation

        exchanged = [-1] * n
        for s, text in view["log"]:
            if text.startswith("play:"):
                played |= 1 << index[text[5:]]
            elif text in WORDS:
                words[s] = WORDS.index(text)
            elif text.startswith("exchange:"):
                body = text[9:]
                exchanged[s] = 0 if body == "-" else int(body) if body.isdigit() else body.count(",") + 1
        over = view["phase"] == "over"
        return TippenObservation(
            game, seat, PHASE_NAMES.index(view["phase"]), view["dealer"], view["current_player"],
            mask(view["hand"]), mask(view["folded"]), tuple(view["hand_sizes"]), trump, card(view["upcard"]),
            card(view["trump_card"]), pairs(view["trick"]), pairs(last["cards"]) if last else (),
            last["winner"] if last else -1, played, tuple(view["tricks_won"]), view["pot"], view["reserve"],
            view["pot_in_play"], view["trick_value"], view["bete"], view["compulsory"], tuple(view["active"]),
            tuple(view["declared"]), view["talon_size"], tuple(view["anted"]), view["taken_by_dealer"],
            view["robbed"], view["outcome"], tuple(card(c) for c in view["jump_cards"] or ()),
            view["next_dealer"] if over else -1, tuple(words), tuple(exchanged))
    from stammtisch.games.tapp import MODERN_CONTRACTS, PHASE_NAMES, Kind
    from stammtisch.games.tapp.contracts import MODERN_INDEX
    from stammtisch.games.tapp.observation import RUFER_IN_TAPP, TappObservation

    first_word = 3 * game.N
    for s, text in view["log"]:
        if text.startswith("play:"):
            played |= 1 << index[text[5:]]
            continue
        try:
            a = game.string_to_action(text)
        except IllegalAction:  # discard:?, give:?
            continue
        if first_word <= a < game.A_DISCARD:
            words[s] = a - first_word
    contract = view["contract"]
    name = (contract or "").split("+")[0]
    kind = (Kind.RAMSCH if name == "ramsch" else MODERN_CONTRACTS[MODERN_INDEX[name]].kind
            if name in MODERN_INDEX else Kind.POINTS)
    standing = view["standing"]
    holder = view.get("rufer_holder")
    return TappObservation(
        game, seat, PHASE_NAMES.index(view["phase"]), view["dealer"], view["current_player"], mask(view["hand"]),
        tuple(view["hand_sizes"]), trump, pairs(view["trick"]), pairs(last["cards"]) if last else (),
        last["winner"] if last else -1, played, tuple(view["tricks_won"]), view["pot"],
        -1 if view["declarer"] is None else view["declarer"], int(kind), contract, view["tout"],
        card(view["called"]), mask(view["open_hand"]), standing["seat"] if standing else -1,
        game.string_to_action(standing["bid"]) if standing else -1, mask(view.get("tapp")),
        mask(view.get("discards")), RUFER_IN_TAPP if holder == "tapp" else -1 if holder is None else holder,
        card(view.get("given")), tuple(words))


#: view keys that name no card's place (legal action strings name cards to call: not a leak)
NOT_PLACES = ("ruleset", "game", "legal_actions", "options")
#: view keys that name a card's identity, not its place: the Rufer ``called`` card after the
#: give, a ``trump_card`` the dealer laid away face down may lie where the seat cannot know
#: (``known_mask``); while its place is known, naming it is how the view shows it
IDENTITY_KEYS = ("called", "trump_card")
#: log entries that name a card's identity only (the Rufer call: the card's place is known
#: until the give, then only to the declarer and the holder)
IDENTITY_ACTIONS = ("call:",)


def cards_named(obj: Any, skip: tuple[str, ...] = NOT_PLACES + IDENTITY_KEYS,
                skip_actions: tuple[str, ...] = IDENTITY_ACTIONS) -> set[str]:
    """The card strings a view names as lying somewhere the viewer may know."""
    out: set[str] = set()

    def walk(x: Any) -> None:
        if isinstance(x, str):
            if not x.startswith(skip_actions):
                out.update(CARD_RE.findall(x))
        elif isinstance(x, dict):
            for k, y in x.items():
                if k not in skip:
                    walk(y)
        elif isinstance(x, (list, tuple)):
            for y in x:
                walk(y)

    walk(obj)
    return out


def cards_shown(obj: Any) -> set[str]:
    """The card strings a view shows at all, by place or by identity (``IDENTITY_KEYS``)."""
    return cards_named(obj, NOT_PLACES, ())


def names_of(mask: int, cards: tuple[str, ...]) -> set[str]:
    return {cards[c] for c in range(len(cards)) if mask >> c & 1}


@pytest.fixture
def conformance():
    """The conformance helpers as one namespace: ``random_rules``, ``observe``,
    ``cards_named``, ``cards_shown``, ``names_of``, ``observation_from_view``."""

    class Helpers:
        pass

    h = Helpers()
    h.random_rules = random_rules
    h.observe = observe
    h.cards_named = cards_named
    h.cards_shown = cards_shown
    h.names_of = names_of
    h.observation_from_view = observation_from_view
    return h


# ----------------------------------------------------------------------------- PostgreSQL


@pytest.fixture(scope="session")
def postgres_server():
    """A PostgreSQL server on a free loopback port for this test session."""
    pg = ThrowAwayPostgres()
    try:
        yield pg
    finally:
        pg.remove()


@pytest.fixture
def postgres_restartable():
    """A PostgreSQL server of the test's own, which it may stop and start again."""
    pg = ThrowAwayPostgres()
    try:
        yield pg
    finally:
        pg.remove()


@pytest.fixture
def postgres_url(postgres_server):
    """A fresh, empty database on the session's PostgreSQL server."""
    return postgres_server.new_database()


# ----------------------------------------------------------------------------- nothing skipped
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A skipped test fails the run: every optional part is installed by ``scripts/test`` and
    tested, so a skip can only mean something is missing or broken (xfail counts too)."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return
    skipped = [*reporter.stats.get("skipped", []), *reporter.stats.get("xfailed", []),
               *reporter.stats.get("xpassed", [])]
    if skipped and exitstatus == pytest.ExitCode.OK:
        reporter.ensure_newline()
        reporter.write_line(f"{len(skipped)} test(s) skipped or xfailed: the suite tests everything "
                            "or fails", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
