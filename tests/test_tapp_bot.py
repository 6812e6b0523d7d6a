"""The heuristic Tapp bot: always legal, uses only the view, sensible choices, beats random."""

import random

import pytest

from stammtisch.bots.tapp import TappHeuristic, predict
from stammtisch.games import TableState, new_game
from stammtisch.rules import ruleset

CONFIGS = [("tapp/wuerttemberg-tarock", {}), ("tapp/classic-1879", {"pot": True}),
           ("tapp/modern", {}), ("tapp/modern", {"players": 4}),
           ("tapp/modern", {"pack": "skat32", "rufer_in_tapp": "swap"})]


def play_deal(game, deck, dealer, players):
    s = game.new_deal(TableState(dealer=dealer), deck)
    while not s.is_terminal():
        seat = s.current_player()
        v = s.view(seat)
        legal = v["legal_actions"]
        a = players[seat](v, legal)
        assert a in legal, (a, legal)
        s.apply(s.string_to_action(a))
    return s


@pytest.mark.parametrize("rid, ov", CONFIGS)
def test_bot_always_legal(rid, ov):
    game = new_game(ruleset(rid, ov))
    bot = TappHeuristic(rng=1)
    rng = random.Random(5)
    for i in range(60):
        deck = list(range(game.pack.size))
        rng.shuffle(deck)
        play_deal(game, deck, i % game.num_players, [bot.choose] * game.num_players)


@pytest.mark.parametrize("rid, ov", [("tapp/wuerttemberg-tarock", {}), ("tapp/modern", {})])
def test_bot_beats_random_players(rid, ov):
    game = new_game(ruleset(rid, ov))
    bot = TappHeuristic(rng=2)
    rng = random.Random(7)

    def rand(view, legal):
        return rng.choice(legal)

    total = 0
    for i in range(300):
        deck = list(range(game.pack.size))
        rng.shuffle(deck)
        seat = i % 3
        players = [rand] * 3
        players[seat] = bot.choose
        s = play_deal(game, deck, i % 3, players)
        total += s.returns()[seat]
    assert total > 0


def test_bid_from_strength():
    bot = TappHeuristic(0)
    strong = ["HA", "HT", "HK", "HQ", "HJ", "H9", "SA", "CA", "DA", "ST", "S9"]
    weak = ["H6", "D7", "D8", "C6", "C7", "C9", "S6", "S7", "S8", "DJ", "CQ"]
    assert predict(strong, "H", "frage", 3)[0] > predict(weak, "H", "frage", 3)[0]
    view = {"phase": "auction", "hand": strong, "ruleset": "tapp/wuerttemberg-tarock", "log": []}
    assert bot.choose(view, ["pass", "bid:frage", "bid:solo"]) in ("bid:frage", "bid:solo")
    view["hand"] = weak
    assert bot.choose(view, ["pass", "bid:frage", "bid:solo"]) == "pass"
    low = ["H6", "H7", "D6", "D7", "D8", "C6", "C7", "C8", "S6", "S7", "S8"]
    view = {"phase": "declare", "hand": low, "ruleset": "tapp/modern"}
    # a hand of low cards is a Bettel hand
    assert bot.choose(view, ["play", "weg"]) == "play"
    view["phase"] = "contract"
    assert bot.choose(view, ["pass", "contract:frage", "contract:bettel"]) == "contract:bettel"
    view.update(phase="declare", hand=weak)
    assert bot.choose(view, ["play", "weg"]) == "weg"


def test_discard_keeps_trumps_and_aces():
    bot = TappHeuristic(0)
    hand = ["HA", "HT", "H6", "SA", "ST", "S6", "C6", "C7", "CK", "DA", "D6", "D7", "DQ", "DJ"]
    from itertools import combinations
    legal = ["discard:" + ",".join(c) for c in combinations(hand, 3)]
    a = bot.choose({"phase": "discard", "hand": hand, "trump": "H"}, legal)
    discarded = a.split(":")[1].split(",")
    assert not any(c[0] == "H" or c[1] == "A" for c in discarded)


def test_defender_smears_points_on_partner_trick():
    bot = TappHeuristic(0)
    # seat 0 defends; declarer 1 has already played; partner 2 is winning; seat 0 is last
    view = {"phase": "play", "seat": 0, "declarer": 1, "players": 3, "trump": "H",
            "contract": "solo", "hand": ["SA", "S7", "ST"],
            "trick": [[1, "S9"], [2, "SK"]]}
    assert bot.choose(view, ["play:S7", "play:ST", "play:SA"]) == "play:SA"


def test_wins_cheaply_and_plays_low_in_bettel():
    bot = TappHeuristic(0)
    # declarer second in the trick: the Ace is sure to hold, the King is not
    view = {"phase": "play", "seat": 1, "declarer": 1, "players": 3, "trump": "H",
            "contract": "solo", "hand": ["SA", "SK", "S6"], "trick": [[0, "SQ"]]}
    assert bot.choose(view, ["play:S6", "play:SK", "play:SA"]) == "play:SA"
    # last to play: any winner holds, so take the trick with the card worth most
    view.update(trick=[[0, "SQ"], [2, "S7"]], hand=["SK", "SJ", "S6"])
    assert bot.choose(view, ["play:S6", "play:SJ", "play:SK"]) == "play:SK"
    view.update(contract="bettel", trump=None, trick=[[0, "SQ"]])
    assert bot.choose(view, ["play:S6", "play:SK", "play:SA"]) == "play:S6"
    view.update(trick=[])
    assert bot.choose(view, ["play:S6", "play:SK", "play:SA"]) == "play:S6"


# five top trumps, a side Ace and a void (five top trumps over junk in three suits lose a solo:
# the defenders hold the other Aces and Tens)
TOP_TRUMPS = ["HA", "HT", "HK", "HQ", "HJ", "SA", "S7", "S6", "C8", "C6", "C7"]


@pytest.mark.parametrize("rid, legal, ok", [
    ("tapp/wuerttemberg-tarock", ["pass", "bid:frage", "bid:solo"], {"bid:frage", "bid:solo"}),
    ("tapp/classic-1879", ["pass", "bid:frage", "bid:solo", "bid:herzsolo"],
     {"bid:frage", "bid:solo", "bid:herzsolo"}),
])
def test_five_top_trumps_bid(rid, legal, ok):
    bot = TappHeuristic(0)
    assert bot.choose({"phase": "auction", "hand": TOP_TRUMPS, "ruleset": rid, "players": 3,
                       "log": []}, legal) in ok


def test_five_top_trumps_play_in_modern_and_hopeless_hands_go_weg():
    bot = TappHeuristic(0)
    view = {"phase": "declare", "hand": TOP_TRUMPS, "ruleset": "tapp/modern", "players": 3}
    assert bot.choose(view, ["play", "weg"]) == "play"
    view["phase"] = "contract"
    legal = ["pass", "contract:frage", "contract:solo:C", "contract:solo:S", "contract:solo:D",
             "contract:herzsolo", "contract:bettel"]
    assert bot.choose(view, legal) in ("contract:frage", "contract:herzsolo")
    # middling: two low trumps, a side Ace, nothing else: no contract
    middling = ["H6", "H7", "SA", "S8", "S9", "C7", "C9", "CQ", "D7", "DJ", "DK"]
    view.update(phase="declare", hand=middling)
    assert bot.choose(view, ["play", "weg"]) == "weg"
    view.update(phase="auction", ruleset="tapp/classic-1879", log=[])
    assert bot.choose(view, ["pass", "bid:frage", "bid:solo", "bid:herzsolo"]) == "pass"


def test_defender_does_not_smear_when_the_declarer_can_still_overtake():
    bot = TappHeuristic(0)
    # seat 2 leads SK, seat 0 (defender) follows, declarer 1 still to play and may hold SA/ST
    view = {"phase": "play", "seat": 0, "declarer": 1, "players": 3, "trump": "H",
            "contract": "solo", "hand": ["ST", "S7", "D6"], "trick": [[2, "SK"]], "log": []}
    assert bot.choose(view, ["play:S7", "play:ST"]) == "play:S7"
    # partner led the Ace: it holds unless trumped; the Ten goes onto it
    view.update(trick=[[2, "SA"]])
    assert bot.choose(view, ["play:S7", "play:ST"]) == "play:ST"


def test_declarer_draws_trumps_with_the_best_one_then_cashes_aces():
    bot = TappHeuristic(0)
    view = {"phase": "play", "seat": 0, "declarer": 0, "players": 3, "trump": "H",
            "contract": "herzsolo", "hand": ["HA", "H9", "H7", "SA", "S6"], "trick": [],
            "log": []}
    assert bot.choose(view, ["play:HA", "play:H9", "play:H7", "play:SA", "play:S6"]) == "play:HA"
    # every other trump is gone: cash the side Ace
    gone = [[1, "play:H" + r] for r in "TKQJ86"]
    view.update(hand=["H9", "SA", "S6"], log=gone)
    assert bot.choose(view, ["play:H9", "play:SA", "play:S6"]) == "play:SA"


def test_heuristic_declarers_win_most_contracts():
    from stammtisch.rules import ruleset as rs
    from stammtisch.sim import simulate
    summary, _ = simulate(rs("tapp/classic-1879"), 150, seed=3, bots=["heuristic"] * 3)
    played = sum(summary.contracts.values())
    assert played > 50
    assert summary.declarer_wins / played > 0.6


# --- levels: opponents in words -------------------------------------------------------------


def test_levels_come_weakest_first_with_names_and_descriptions_in_both_languages():
    from stammtisch.bots import BOT_NAMES, LEVEL_NAMES, LEVELS, PLAYER_NAMES, algorithm_of
    from stammtisch.i18n import LANGUAGES, catalogue

    assert LEVEL_NAMES == ("beginner", "club", "expert")
    assert PLAYER_NAMES == (*LEVEL_NAMES, *BOT_NAMES)
    assert [algorithm_of(n) for n in LEVEL_NAMES] == ["heuristic", "heuristic", "pimc"]
    assert algorithm_of("ismcts") == "ismcts"
    assert all(level.bot in BOT_NAMES for level in LEVELS.values())
    for lang in LANGUAGES:
        texts = catalogue(lang)
        for name in LEVEL_NAMES:
            assert texts[f"bot.level.{name}"] and texts[f"bot.level.{name}.about"]
    assert catalogue("de")["bot.level.club"] == "Vereinsspieler"


@pytest.mark.parametrize("family", ["tapp", "tippen"])
def test_make_bot_builds_each_level_with_its_budget(family):
    from stammtisch.bots import BlunderBot, ViewBot, make_bot
    from stammtisch.bots.pimc import DEFAULT_SAMPLES, PimcBot

    club = make_bot("club", family, random.Random(1))
    assert isinstance(club, ViewBot)
    beginner = make_bot("beginner", family, random.Random(1))
    assert isinstance(beginner, BlunderBot) and beginner.rate == pytest.approx(0.3)
    expert = make_bot("expert", family, random.Random(1))
    assert isinstance(expert, PimcBot) and expert.samples == DEFAULT_SAMPLES[family]
    assert make_bot("expert", family, random.Random(1), samples=3).samples == 3  # the caller's budget wins
    with pytest.raises(ValueError, match="beginner, club, expert"):
        make_bot("grandmaster", family)


@pytest.mark.parametrize("rid", ["tapp/modern", "tippen/grupp-1975"])
def test_a_beginner_plays_whole_deals_legally_and_errs_only_where_there_is_a_choice(rid):
    from stammtisch.bots import BlunderBot, RandomBot, make_bot
    from stammtisch.table import Table

    rules = ruleset(rid)
    rng = random.Random(5)
    table = Table(rules, [f"P{i}" for i in range(rules.players)], 0)
    for _ in range(6):
        bots = [make_bot("beginner", rules.family, random.Random(rng.random())) for _ in range(rules.players)]
        state = table.start_deal(table.shuffled_deck(rng))
        while not state.is_terminal():
            seat = state.current_player()
            table.apply_id(bots[seat].act(state, seat))  # the engine refuses an illegal action
    # rate 0 is the inner bot, rate 1 always the random choice
    class First:
        def act(self, state, seat):
            return state.legal_actions()[0]

        def choose(self, view, legal):
            return legal[0]

    legal = [f"play:{c}" for c in ("HA", "HK", "HQ", "HJ")]
    assert {BlunderBot(First(), 0.0, random.Random(i)).choose({}, legal) for i in range(20)} == {"play:HA"}
    picks = {BlunderBot(First(), 1.0, random.Random(i)).choose({}, legal) for i in range(40)}
    assert picks == set(legal)
    assert BlunderBot(RandomBot(), 1.0).choose({}, ["pass"]) == "pass"
    with pytest.raises(ValueError):
        BlunderBot(First(), 1.5)
