"""The heuristic Tapp bot: always legal, reads only the seat's observation, sensible choices,
beats random."""

import random

import pytest

from stammtisch.bots.tapp import TappHeuristic, card_tables, predict
from stammtisch.games import TableState, new_game
from stammtisch.games.tapp import PHASE_NAMES, Kind
from stammtisch.games.tapp.observation import TappObservation
from stammtisch.rules import ruleset


def observation(phase, hand, ruleset_id="tapp/modern", seat=0, declarer=-1, players=3, trump=None,
                contract=None, trick=(), played=(), standing=None):
    """A seat's observation written by hand: cards in notation, the rest as a deal shows it."""
    game = new_game(ruleset(ruleset_id, {"players": players} if ruleset_id == "tapp/modern" else {}))
    index = game.pack.index
    n = game.num_players

    def mask(names):
        return sum(1 << index[c] for c in names)

    name = contract or ""
    kind = (Kind.BETTEL if name.startswith("bettel") else Kind.RAMSCH if name == "ramsch"
            else Kind.ALL if "rufer" in name or "durch" in name else Kind.POINTS)
    return TappObservation(
        game, seat, PHASE_NAMES.index(phase), n - 1, seat, mask(hand), (len(hand),) * n,
        -1 if trump is None else "HDCS".index(trump), tuple((s, index[c]) for s, c in trick), (), -1,
        mask(played) | mask(c for _, c in trick), (0,) * n, 0, declarer, int(kind), contract, False, -1, 0,
        -1 if standing is None else (seat + 1) % n, -1 if standing is None else game.string_to_action(standing),
        0, 0, -1, -1, (-1,) * n)


def choose(bot, obs, legal):
    """The bot's choice among ``legal`` (action strings) for the seat of ``obs``, as a string."""
    game = obs.game
    return game.action_to_string(bot.decide(obs, sorted(game.string_to_action(a) for a in legal)))

CONFIGS = [("tapp/wuerttemberg-tarock", {}), ("tapp/classic-1879", {"pot": True}),
           ("tapp/modern", {}), ("tapp/modern", {"players": 4}),
           ("tapp/modern", {"pack": "skat32", "rufer_in_tapp": "swap"})]


def play_deal(game, deck, dealer, players):
    s = game.new_deal(TableState(dealer=dealer), deck)
    while not s.is_terminal():
        seat = s.current_player()
        a = players[seat](s, seat)
        assert a in s.legal_actions(), (a, s.legal_actions())
        s.apply(a)
    return s


@pytest.mark.parametrize("rid, ov", CONFIGS)
def test_bot_always_legal(rid, ov):
    game = new_game(ruleset(rid, ov))
    bot = TappHeuristic(rng=1)
    rng = random.Random(5)
    for i in range(60):
        deck = list(range(game.pack.size))
        rng.shuffle(deck)
        play_deal(game, deck, i % game.num_players, [bot.act] * game.num_players)


@pytest.mark.parametrize("rid, ov", [("tapp/wuerttemberg-tarock", {}), ("tapp/modern", {})])
def test_bot_beats_random_players(rid, ov):
    game = new_game(ruleset(rid, ov))
    bot = TappHeuristic(rng=2)
    rng = random.Random(7)

    def rand(state, seat):
        return rng.choice(state.legal_actions())

    total = 0
    for i in range(300):
        deck = list(range(game.pack.size))
        rng.shuffle(deck)
        seat = i % 3
        players = [rand] * 3
        players[seat] = bot.act
        s = play_deal(game, deck, i % 3, players)
        total += s.returns()[seat]
    assert total > 0


def test_bid_from_strength():
    bot = TappHeuristic(0)
    strong = ["HA", "HT", "HK", "HQ", "HJ", "H9", "SA", "CA", "DA", "ST", "S9"]
    weak = ["H6", "D7", "D8", "C6", "C7", "C9", "S6", "S7", "S8", "DJ", "CQ"]
    game = new_game(ruleset("tapp/modern"))
    tables = card_tables(game.pack)

    def mask(names):
        return sum(1 << game.pack.index[c] for c in names)

    assert predict(mask(strong), 0, "frage", 3, tables)[0] > predict(mask(weak), 0, "frage", 3, tables)[0]
    rid = "tapp/wuerttemberg-tarock"
    assert choose(bot, observation("auction", strong, rid), ["pass", "bid:frage", "bid:solo"]) in ("bid:frage",
                                                                                                 "bid:solo")
    assert choose(bot, observation("auction", weak, rid), ["pass", "bid:frage", "bid:solo"]) == "pass"
    low = ["H6", "H7", "D6", "D7", "D8", "C6", "C7", "C8", "S6", "S7", "S8"]
    # a hand of low cards is a Bettel hand
    assert choose(bot, observation("declare", low), ["play", "weg"]) == "play"
    assert choose(bot, observation("contract", low), ["pass", "contract:frage", "contract:bettel"]) == "contract:bettel"
    assert choose(bot, observation("declare", weak), ["play", "weg"]) == "weg"


def test_discard_keeps_trumps_and_aces():
    bot = TappHeuristic(0)
    hand = ["HA", "HT", "H6", "SA", "ST", "S6", "C6", "C7", "CK", "DA", "D6", "D7", "DQ", "DJ"]
    from itertools import combinations
    legal = ["discard:" + ",".join(c) for c in combinations(hand, 3)]
    a = choose(bot, observation("discard", hand, trump="H"), legal)
    discarded = a.split(":")[1].split(",")
    assert not any(c[0] == "H" or c[1] == "A" for c in discarded)


def test_defender_smears_points_on_partner_trick():
    bot = TappHeuristic(0)
    # seat 0 defends; declarer 1 has already played; partner 2 is winning; seat 0 is last
    obs = observation("play", ["SA", "S7", "ST"], seat=0, declarer=1, trump="H", contract="solo",
                      trick=[(1, "S9"), (2, "SK")])
    assert choose(bot, obs, ["play:S7", "play:ST", "play:SA"]) == "play:SA"


def test_wins_cheaply_and_plays_low_in_bettel():
    bot = TappHeuristic(0)
    # declarer second in the trick: the Ace is sure to hold, the King is not
    obs = observation("play", ["SA", "SK", "S6"], seat=1, declarer=1, trump="H", contract="solo",
                      trick=[(0, "SQ")])
    assert choose(bot, obs, ["play:S6", "play:SK", "play:SA"]) == "play:SA"
    # last to play: any winner holds, so take the trick with the card worth most
    obs = observation("play", ["SK", "SJ", "S6"], seat=1, declarer=1, trump="H", contract="solo",
                      trick=[(0, "SQ"), (2, "S7")])
    assert choose(bot, obs, ["play:S6", "play:SJ", "play:SK"]) == "play:SK"
    obs = observation("play", ["SA", "SK", "S6"], seat=1, declarer=1, contract="bettel", trick=[(0, "SQ")])
    assert choose(bot, obs, ["play:S6", "play:SK", "play:SA"]) == "play:S6"
    obs = observation("play", ["SA", "SK", "S6"], seat=1, declarer=1, contract="bettel")
    assert choose(bot, obs, ["play:S6", "play:SK", "play:SA"]) == "play:S6"


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
    assert choose(bot, observation("auction", TOP_TRUMPS, rid), legal) in ok


def test_five_top_trumps_play_in_modern_and_hopeless_hands_go_weg():
    bot = TappHeuristic(0)
    assert choose(bot, observation("declare", TOP_TRUMPS), ["play", "weg"]) == "play"
    legal = ["pass", "contract:frage", "contract:solo:C", "contract:solo:S", "contract:solo:D",
             "contract:herzsolo", "contract:bettel"]
    assert choose(bot, observation("contract", TOP_TRUMPS), legal) in ("contract:frage", "contract:herzsolo")
    # middling: two low trumps, a side Ace, nothing else: no contract
    middling = ["H6", "H7", "SA", "S8", "S9", "C7", "C9", "CQ", "D7", "DJ", "DK"]
    assert choose(bot, observation("declare", middling), ["play", "weg"]) == "weg"
    assert choose(bot, observation("auction", middling, "tapp/classic-1879"),
                  ["pass", "bid:frage", "bid:solo", "bid:herzsolo"]) == "pass"


def test_an_overcalled_bidder_holds_only_a_level_it_would_bid_itself():
    bot = TappHeuristic(0)
    rid = "tapp/classic-1879"
    assert choose(bot, observation("auction", TOP_TRUMPS, rid, standing="bid:frage"), ["pass", "hold"]) == "hold"
    middling = ["H6", "H7", "SA", "S8", "S9", "C7", "C9", "CQ", "D7", "DJ", "DK"]
    assert choose(bot, observation("auction", middling, rid, standing="bid:frage"), ["pass", "hold"]) == "pass"


def test_defender_does_not_smear_when_the_declarer_can_still_overtake():
    bot = TappHeuristic(0)
    # seat 2 leads SK, seat 0 (defender) follows, declarer 1 still to play and may hold SA/ST
    obs = observation("play", ["ST", "S7", "D6"], seat=0, declarer=1, trump="H", contract="solo",
                      trick=[(2, "SK")])
    assert choose(bot, obs, ["play:S7", "play:ST"]) == "play:S7"
    # partner led the Ace: it holds unless trumped; the Ten goes onto it
    obs = observation("play", ["ST", "S7", "D6"], seat=0, declarer=1, trump="H", contract="solo",
                      trick=[(2, "SA")])
    assert choose(bot, obs, ["play:S7", "play:ST"]) == "play:ST"


def test_a_defender_wins_a_trick_that_only_his_partners_still_play_to():
    """The trick is the defenders' once the declarer has played to it: a winner that a fellow
    defender might beat still keeps it for the side (rules reference §3.4: in Rufer and Durch
    one defender trick beats the contract; the called card's holder is a defender)."""
    bot = TappHeuristic(0)
    # Rufer, four players: declarer 3 led the S7, seat 0 (the holder of the called card) is next,
    # seats 1 and 2, the other defenders, follow; the SA and ST are unseen
    obs = observation("play", ["SK", "S8", "D6"], seat=0, declarer=3, players=4, trump="C",
                      contract="rufer:C", trick=[(3, "S7")])
    assert choose(bot, obs, ["play:S8", "play:SK"]) == "play:SK"
    # a point contract: the King's points go to the side, not the declarer's low lead alone
    obs = observation("play", ["SK", "S8", "D6"], seat=1, declarer=0, trump="H", contract="solo",
                      trick=[(0, "S7")])
    assert choose(bot, obs, ["play:S8", "play:SK"]) == "play:SK"


def test_against_every_trick_a_defender_takes_even_a_pointless_trick():
    bot = TappHeuristic(0)
    # Heart Durch: a trick with no points is worth the high trump to the defenders (it beats
    # the contract); seat 0, last, must follow trumps with the 9 or the 6
    obs = observation("play", ["H9", "H6", "D6"], seat=0, declarer=1, trump="H", contract="herzdurch",
                      trick=[(1, "H8"), (2, "H7")])
    assert choose(bot, obs, ["play:H6", "play:H9"]) == "play:H9"
    # the same in a Heart Solo: the trump is kept for a trick worth having
    obs = observation("play", ["H9", "H6", "D6"], seat=0, declarer=1, trump="H", contract="herzsolo",
                      trick=[(1, "H8"), (2, "H7")])
    assert choose(bot, obs, ["play:H6", "play:H9"]) == "play:H6"
    # Rufer: the partner's Queen leads, the declarer behind may hold the King or the Ten: the
    # Ace takes the trick over for the side rather than leave it to be overtaken
    obs = observation("play", ["SA", "S7", "D6"], seat=0, declarer=1, trump="C", contract="rufer:C",
                      trick=[(2, "SQ")])
    assert choose(bot, obs, ["play:S7", "play:SA"]) == "play:SA"

def test_declarer_draws_trumps_with_the_best_one_then_cashes_aces():
    bot = TappHeuristic(0)
    obs = observation("play", ["HA", "H9", "H7", "SA", "S6"], seat=0, declarer=0, trump="H", contract="herzsolo")
    assert choose(bot, obs, ["play:HA", "play:H9", "play:H7", "play:SA", "play:S6"]) == "play:HA"
    # every other trump is gone: cash the side Ace
    obs = observation("play", ["H9", "SA", "S6"], seat=0, declarer=0, trump="H", contract="herzsolo",
                      played=["H" + r for r in "TKQJ86"])
    assert choose(bot, obs, ["play:H9", "play:SA", "play:S6"]) == "play:SA"


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

    assert LEVEL_NAMES == ("beginner", "club", "expert", "master")
    assert PLAYER_NAMES == (*LEVEL_NAMES, *BOT_NAMES)
    assert [algorithm_of(n) for n in LEVEL_NAMES] == ["heuristic", "heuristic", "pimc", "pimc"]
    assert algorithm_of("pimc") == "pimc"
    assert all(level.bot in BOT_NAMES for level in LEVELS.values())
    for lang in LANGUAGES:
        texts = catalogue(lang)
        for name in LEVEL_NAMES:
            assert texts[f"bot.level.{name}"] and texts[f"bot.level.{name}.about"]
    assert catalogue("de")["bot.level.club"] == "Vereinsspieler"


@pytest.mark.parametrize("family", ["tapp", "tippen"])
def test_make_bot_builds_each_level_with_its_budget(family):
    from stammtisch.bots import BlunderBot, make_bot
    from stammtisch.bots.pimc import DEFAULT_SAMPLES, PimcBot
    from stammtisch.bots.tippen import TippenHeuristic

    club = make_bot("club", family, random.Random(1))
    assert isinstance(club, TippenHeuristic if family == "tippen" else TappHeuristic)
    beginner = make_bot("beginner", family, random.Random(1))
    assert isinstance(beginner, BlunderBot) and beginner.rate == pytest.approx(0.3)
    expert = make_bot("expert", family, random.Random(1))
    assert isinstance(expert, PimcBot) and expert.samples == DEFAULT_SAMPLES[family]
    assert make_bot("expert", family, random.Random(1), samples=3).samples == 3  # the caller's budget wins
    assert not expert.inference
    master = make_bot("master", family, random.Random(1))
    assert isinstance(master, PimcBot) and master.inference and master.samples > expert.samples
    with pytest.raises(ValueError, match="beginner, club, expert, master"):
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

    game = new_game(ruleset("tapp/modern"))
    state = game.new_deal(TableState(), list(range(game.pack.size)))
    state.apply(game.A_PLAY)
    state.apply(game.A_WEG)
    state.apply(game.A_WEG)  # a Ramsch: forehand leads, any card of twelve
    seat = state.current_player()
    legal = state.legal_actions()
    assert {BlunderBot(First(), 0.0, random.Random(i)).act(state, seat) for i in range(20)} == {legal[0]}
    picks = {BlunderBot(First(), 1.0, random.Random(i)).act(state, seat) for i in range(60)}
    assert picks == set(legal)
    state = game.new_deal(TableState(), list(range(game.pack.size)))
    for _ in range(3):
        state.apply(game.A_WEG)
    while len(state.legal_actions()) != 1:  # a Ramsch, played on until a seat has one card to play
        state.apply(state.legal_actions()[0])
    only = state.legal_actions()
    assert BlunderBot(RandomBot(), 1.0).act(state, state.current_player()) == only[0]
    with pytest.raises(ValueError):
        BlunderBot(First(), 1.5)
