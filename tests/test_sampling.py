"""World sampling: ``state.resample(seat, rng)``.

Properties over every preset with random valid options: the sampled state shows ``seat`` the
same view and the same known cards, conserves the cards, is the state its own deck and log
replay to (so every past action was legal in the sampled world), and plays to the end; the
hidden cards really vary; and on tiny positions the sampled worlds are uniform over the
consistent worlds enumerated by brute force.
"""

from __future__ import annotations

import random
from collections import Counter
from itertools import permutations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_tippen_properties import tippen_rules

from stammtisch.cards import cards_in
from stammtisch.games import TableState, new_game
from stammtisch.games import tippen as T
from stammtisch.games.sampling import count_deals, deal_uniform, plays_by, shuffle, trick_forbidden
from stammtisch.games.tapp import MODERN_CONTRACTS, TappState
from stammtisch.games.tapp import Phase as TP
from stammtisch.games.tapp.dealt import dealt_deck
from stammtisch.games.tippen import TippenState
from stammtisch.games.tricks import legal_follows
from stammtisch.rules import ruleset
from stammtisch.rules.tapp import TAPP_PRESETS

TAPP_CONFIGS = [(rid, {}) for rid in sorted(TAPP_PRESETS)] + [
    ("tapp/modern", {"players": 4}),
    ("tapp/modern", {"pack": "skat32"}),
    ("tapp/modern", {"rufer_in_tapp": "swap"}),
    ("tapp/modern", {"pack": "skat32", "players": 4, "rufer_in_tapp": "swap"}),
    ("tapp/classic-1879", {"pot": True}),
]


# ------------------------------------------------------------------ consistency by replay
def replayed(s, deck):
    g = s.game
    r = g.new_deal(s.table, deck)
    for seat, a in s.log:
        assert r.current_player() == seat
        r.apply(a)
    return r


def fields(s):
    cls = TippenState if isinstance(s, TippenState) else TappState
    skip = {"game", "table", "_result", "_legal", "_net"}
    return {k: getattr(s, k) for k in cls.__slots__ if k not in skip}


def check_world(state, world, seat):
    """``world`` is a consistent state that ``seat`` cannot tell from ``state``."""
    assert type(world) is type(state)
    assert world.view(seat) == state.view(seat)
    assert world.known_mask(seat) == state.known_mask(seat)
    known = state.known_mask(seat)
    if isinstance(state, TippenState):
        sets = world.card_sets()
        assert sum(m.bit_count() for m in sets.values()) == world.game.size
        assert world.deck and sorted(world.deck) == list(range(world.game.size))
        for name, m in state.card_sets().items():  # the known cards lie where they lay
            assert sets[name] & known == m & known, name
        for x in range(state.game.num_players):
            assert world.hands[x] & known == state.hands[x] & known
        deck = list(world.deck)
    else:
        parts = [*world.hands, world.tapp, plays_by(world.log, world.game.N, -1) or sum(
            1 << a for _, a in world.log if a < world.game.N)]
        assert sum(p.bit_count() for p in parts) == world.game.N
        for x in range(state.n):
            assert world.hands[x] & known == state.hands[x] & known
        assert world.tapp & known == state.tapp & known
        deck = dealt_deck(world)
    # the world is what its deal and the public log replay to: every past action was legal
    assert fields(replayed(world, deck)) == fields(world)


def play_out(world, rng):
    w = world.clone()
    while not w.is_terminal():
        w.apply(rng.choice(w.legal_actions()))
    assert w.result() is not None
    assert len(w.returns()) == w.game.num_players


def random_states(game, rng, deals=1):
    """Every state of ``deals`` random deals with random play."""
    for _ in range(deals):
        deck = list(range(game.pack.size))
        rng.shuffle(deck)
        s = game.new_deal(TableState(dealer=rng.randrange(game.num_players),
                                     pot=rng.choice([0, 0, 3 * game.num_players])), deck)
        yield s.clone()
        while not s.is_terminal():
            s.apply(rng.choice(s.legal_actions()))
            yield s.clone()


# ------------------------------------------------------------------ properties
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tippen_rules(), st.randoms(use_true_random=False))
def test_tippen_resample_is_consistent_for_every_seat(rules, rnd):
    game = new_game(rules)
    rng = random.Random(rnd.random())
    for s in random_states(game, rng):
        for seat in [None, *range(game.num_players)]:
            w = s.resample(seat, rng)
            check_world(s, w, seat)
            play_out(w, rng)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(TAPP_CONFIGS), st.randoms(use_true_random=False))
def test_tapp_resample_is_consistent_for_every_seat(config, rnd):
    game = new_game(ruleset(*config))
    rng = random.Random(rnd.random())
    for s in random_states(game, rng):
        for seat in [None, *range(game.num_players)]:
            w = s.resample(seat, rng)
            check_world(s, w, seat)
            play_out(w, rng)


def test_hidden_cards_vary_and_known_cards_stay():
    rng = random.Random(7)
    for rid, opts in [("tapp/modern", {}), ("tippen/grupp-1975", {})]:
        game = new_game(ruleset(rid, opts))
        states = [s for s in random_states(game, rng) if s.phase == (TP.PLAY if rid.startswith("tapp")
                                                                         else T.PLAY)]
        s = states[len(states) // 3]
        for seat in range(game.num_players):
            worlds = [s.resample(seat, rng) for _ in range(30)]
            others = {tuple(h for x, h in enumerate(w.hands) if x != seat) for w in worlds}
            assert len(others) > 10, (rid, seat)
            assert all(w.hands[seat] == s.hands[seat] for w in worlds)


# ------------------------------------------------------------------ the voids, exactly
@settings(max_examples=300, deadline=None)
@given(st.integers(0, (1 << 32) - 1), st.integers(0, 31), st.integers(0, 31), st.integers(0, 31),
       st.integers(0, 3), st.sampled_from(["always", "untrumped", "never"]), st.booleans())
def test_trick_forbidden_is_legal_follows_read_backwards(hand, card, lead, win, trump, must, head):
    suits = tuple(0xFF << (8 * k) for k in range(4))
    tm = suits[trump]
    led = suits[lead // 8]
    if not ((win // 8 == lead // 8 and win >= lead) or (tm >> win) & 1):
        win = lead  # the winning card is the lead, a higher card of its suit, or a trump
    if card in (lead, win):
        return
    hand = (hand | 1 << card) & ~(1 << lead) & ~(1 << win)
    legal = legal_follows(hand, led, tm, win, suits[win // 8], must, head)
    forbidden = trick_forbidden(card, led, tm, win, suits[win // 8], must, head)
    assert bool((legal >> card) & 1) == (hand & forbidden == 0)


# ------------------------------------------------------------------ uniformity
def chi_square_bound(cells: int, z: float = 4.0) -> float:
    """A quantile of the chi-square law with ``cells - 1`` degrees of freedom far in the tail
    (Wilson–Hilferty, z standard deviations): a fixed-seed test that fails only when the
    counts are not uniform."""
    k = cells - 1
    return float(k * (1 - 2 / (9 * k) + z * (2 / (9 * k)) ** 0.5) ** 3)


def assert_uniform(counts: Counter, worlds: set, draws: int):
    assert set(counts) == worlds  # no inconsistent world, and every consistent one appears
    expected = draws / len(worlds)
    chi2 = sum((counts[w] - expected) ** 2 / expected for w in worlds)
    assert chi2 < chi_square_bound(len(worlds)), (chi2, len(worlds))


def brute_deals(pool, places):
    cards = cards_in(pool)
    out = set()
    for perm in permutations(cards):
        deal, pos = [], 0
        for size, forbidden in places:
            m = sum(1 << c for c in perm[pos:pos + size])
            if m & forbidden:
                break
            deal.append(m)
            pos += size
        else:
            out.add(tuple(deal))
    return out


PLACES = {
    "distinct voids": [(2, 1 << 3 | 1 << 4 | 1 << 5), (3, 1 << 9), (2, 1 << 6 | 1 << 7 | 1 << 8)],
    # two hands with the same void (merged, then split) and two places that forbid nothing
    "merged and free": [(1, 0b111 << 3), (2, 0b111 << 3), (2, 0), (1, 1 << 9), (1, 0)],
}


@pytest.mark.parametrize("tries", [0, 1, 24])
@pytest.mark.parametrize("shape", sorted(PLACES))
def test_deal_uniform_is_uniform_over_the_consistent_deals(tries, shape):
    pool = 0b1111111 << 3  # cards 3..9
    places = PLACES[shape]
    worlds = brute_deals(pool, places)
    assert count_deals(pool, places) == len(worlds)
    rng = random.Random(11)
    draws = 40 * len(worlds)
    counts = Counter(tuple(deal_uniform(pool, places, rng, tries=tries)) for _ in range(draws))
    assert_uniform(counts, worlds, draws)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 255), min_size=3, max_size=3), st.integers(0, 2))
def test_count_deals_is_the_brute_force_count(forbidden, split):
    pool = 0b11111111
    sizes = [(3, 3, 2), (2, 2, 4), (1, 4, 3)][split]
    places = list(zip(sizes, forbidden, strict=True))
    assert count_deals(pool, places) == len(brute_deals(pool, places))


def _consistent(state, hands, follow_rule):
    """Would every play of ``state``'s log have been legal had the seats held ``hands`` now?
    (An account of the rules independent of the sampler: replay the plays on the hands.)"""
    g = state.game
    n_cards = g.pack.size
    held = [hands[x] | plays_by(state.log, n_cards, x) for x in range(len(hands))]
    trick = []
    per_trick = state.n_active if isinstance(state, TippenState) else state.n
    for x, a in state.log:
        if a >= n_cards:
            continue
        if trick and not (follow_rule(held[x], trick) >> a) & 1:
            return False
        held[x] &= ~(1 << a)
        trick = [] if len(trick) + 1 == per_trick else [*trick, a]
    return True


def _late_state(game, seat_filter, tricks_left, seed, want):
    rng = random.Random(seed)
    for s in random_states(game, rng, deals=200):
        if want(s) and all(h.bit_count() <= tricks_left for h in s.hands) and seat_filter(s):
            return s
    raise AssertionError("no such position in 200 deals")


def test_tippen_worlds_are_uniform_late_in_a_deal():
    # Loup with 5 players: 30 cards dealt, 2 in the talon; head the trick, trump while untrumped
    game = new_game(ruleset("tippen/loup-1821", {"players": 5, "head_trick": True,
                                                 "void_must_trump": "untrumped"}))
    s = _late_state(game, lambda s: not s.trick, 1, 3,
                    lambda s: s.phase == T.PLAY and s.n_active == 5)
    seat = s.cur
    g = s.game
    known = s.known_mask(seat)
    others = [x for x in range(5) if x != seat]
    hidden = cards_in(g.pack.full_mask & ~known)

    def follow(hand, trick):
        led = g.suit_masks[g.suit_of[trick[0]]]
        win = trick[0]
        for c in trick[1:]:
            if (g.beaters[s.trump_mask][win] >> c) & 1:
                win = c
        return legal_follows(hand, led, s.trump_mask, win, g.suit_masks[g.suit_of[win]],
                             "untrumped", True)

    worlds = set()
    for perm in permutations(hidden):
        hands = list(s.hands)
        for x, c in zip(others, perm, strict=False):
            hands[x] = 1 << c
        if _consistent(s, hands, follow):
            worlds.add((tuple(hands), perm[len(others):]))
    rng = random.Random(5)
    draws = 30 * len(worlds)
    counts = Counter()
    for _ in range(draws):
        w = s.resample(seat, rng)
        counts[(tuple(w.hands), w.talon[w.talon_pos:])] += 1
    assert len(worlds) < 6 * 5 * 4 * 3 * 2  # the voids rule worlds out
    assert_uniform(counts, worlds, draws)


def test_tapp_worlds_are_uniform_late_in_a_deal():
    game = new_game(ruleset("tapp/modern", {}))
    s = _late_state(game, lambda s: s.trick == [] and s.declarer >= 0 and s.called < 0,
                    2, 4, lambda s: s.phase == TP.PLAY)
    seat = next(x for x in range(3) if x != s.declarer)
    g = s.game
    known = s.known_mask(seat)
    hidden = cards_in(g.full & ~known)
    sizes = [(s.hands[x] & ~known).bit_count() for x in range(3)] + [s.tapp.bit_count()]

    def follow(hand, trick):
        return legal_follows(hand, g.suitmask_of[trick[0]], s.trump_mask, trick[0], 0, "always", False)

    worlds = set()
    for perm in permutations(hidden):
        parts, pos = [], 0
        for size in sizes:
            parts.append(sum(1 << c for c in perm[pos:pos + size]))
            pos += size
        hands = [(s.hands[x] & known) | parts[x] for x in range(3)]
        if _consistent(s, hands, follow):
            worlds.add((tuple(hands), parts[3]))
    rng = random.Random(9)
    draws = 40 * len(worlds)
    counts = Counter()
    for _ in range(draws):
        w = s.resample(seat, rng)
        counts[(tuple(w.hands), w.tapp)] += 1
    assert_uniform(counts, worlds, draws)


def test_rufer_holder_is_drawn_as_the_deal_would_have_placed_the_called_card():
    """A third seat cannot tell who held the called card: another hand of 11 or (swap) the
    tapp of 3. Uniform worlds give the hand 11/14 of them, before and after the give."""
    game = new_game(ruleset("tapp/modern", {"rufer_in_tapp": "swap"}))
    rng = random.Random(13)
    call = game.A_CONTRACT + next(i for i, c in enumerate(MODERN_CONTRACTS) if c.calls_card)
    for _ in range(200):
        deck = list(range(game.N))
        rng.shuffle(deck)
        s = game.new_deal(TableState(), deck)
        s.apply(game.A_PLAY)  # forehand plays, the others say weg
        s.apply(game.A_WEG)
        s.apply(game.A_WEG)
        if call not in s.legal_actions():
            continue
        s.apply(call)
        s.apply(rng.choice(s.legal_actions()))  # the call
        if s.phase == TP.GIVE:
            break
    assert s.phase == TP.GIVE
    declarer = s.declarer
    third = next(x for x in range(3) if x not in (declarer, s.holder))
    other = next(x for x in range(3) if x not in (declarer, third))
    after = s.clone()
    after.apply(after.legal_actions()[0])  # the give
    for state in (s, after):
        draws = 4000
        hand = sum(state.resample(third, rng).holder == other for _ in range(draws))
        expected = draws * 11 / 14
        sd = (draws * 11 / 14 * 3 / 14) ** 0.5
        assert abs(hand - expected) < 4 * sd, (state.phase, hand, expected)


# ------------------------------------------------------------------ identity public, place hidden
def _rufer_after_give(rules, seed):
    """A Rufer deal just after the give, with a third seat (neither declarer nor holder)."""
    game = new_game(rules)
    rng = random.Random(seed)
    call = game.A_CONTRACT + next(i for i, c in enumerate(MODERN_CONTRACTS) if c.calls_card)
    for _ in range(500):
        deck = list(range(game.N))
        rng.shuffle(deck)
        s = game.new_deal(TableState(), deck)
        s.apply(game.A_PLAY)  # forehand plays, the others say weg
        s.apply(game.A_WEG)
        s.apply(game.A_WEG)
        if call not in s.legal_actions():
            continue
        s.apply(call)
        s.apply(rng.choice(s.legal_actions()))  # the call
        if s.phase == TP.GIVE and s.holder >= 0:
            s.apply(rng.choice(s.legal_actions()))  # the give
            return s
    raise AssertionError("no Rufer deal with a holder in 500 deals")


@pytest.mark.parametrize("opts", [{}, {"rufer_in_tapp": "swap"}])
def test_after_the_give_only_declarer_and_holder_know_where_the_called_card_is(opts):
    s = _rufer_after_give(ruleset("tapp/modern", opts), 21)
    c = 1 << s.called
    third = next(x for x in range(3) if x not in (s.declarer, s.holder))
    assert not s.known_mask(third) & c
    assert not s.known_mask(None) & c
    assert s.known_mask(s.declarer) & c and s.known_mask(s.holder) & c
    # once played, it is known to all
    while not s.is_terminal() and not (s.known_mask(None) & c):
        s.apply(sorted(s.legal_actions(), key=lambda a: a != s.called)[0])
    assert s.known_mask(third) & c or s.is_terminal()


def test_a_third_seat_cannot_tell_whether_the_called_card_was_given_back():
    """Uniform worlds: the declarer gave back any of his 12 cards, so the called card is
    back with the holder (hand of 11, or with swap the tapp of 3) in 1/12 of them; the
    holder is the other hand in 11/14 of them."""
    s = _rufer_after_give(ruleset("tapp/modern", {"rufer_in_tapp": "swap"}), 5)
    d, c = s.declarer, s.called
    third = next(x for x in range(3) if x not in (d, s.holder))
    other = next(x for x in range(3) if x not in (d, third))
    rng = random.Random(17)
    draws = 3000
    back = with_other = 0
    for i in range(draws):
        w = s.resample(third, rng)
        if i < 50:
            check_world(s, w, third)
        if (w.hands[d] >> c) & 1:
            assert w.given != c
        else:  # given back: with the holder, or in the tapp he swapped it from
            back += 1
            assert w.given == c
            assert (w.tapp if w.called_in_tapp else w.hands[w.holder]) >> c & 1
        with_other += w.holder == other
    for hits, p in ((back, 1 / 12), (with_other, 11 / 14)):
        sd = (draws * p * (1 - p)) ** 0.5
        assert abs(hits - draws * p) < 4 * sd, (hits, draws * p)
    # the declarer and the holder know: their worlds keep the called card where it is
    for seat in (d, s.holder):
        for _ in range(20):
            w = s.resample(seat, rng)
            assert w.given == s.given and w.holder == s.holder
            assert w.hands[d] >> c & 1 == s.hands[d] >> c & 1


def _dealer_laid_away(rules, seed, want):
    """A Tippen state right after the dealer, holding the public trump card, laid cards away."""
    game = new_game(rules)
    rng = random.Random(seed)
    W = game.WORD_BASE
    for _ in range(500):
        deck = list(range(game.pack.size))
        rng.shuffle(deck)
        s = game.new_deal(TableState(dealer=rng.randrange(game.num_players)), deck)
        while not s.is_terminal():
            legal = s.legal_actions()
            a = W + T.W_SNIFF if W + T.W_SNIFF in legal else rng.choice(legal)
            if s.phase == T.DECLARE:
                a = W + T.W_TAP
            mover = s.cur
            s.apply(a)
            if mover == s.dealer and want(s.game, a):
                return s
    raise AssertionError("no such deal in 500 deals")


TRUMP_LAID_AWAY = {
    # a 1859 sniffer took the upcard (shown to all), then discards one card face down
    "1859 sniff": (ruleset("tippen/dreiblatt-1859", {"sniffing": "1859"}),
                   lambda g, a: g.DISCARD_BASE <= a < g.WORD_BASE),
    # the dealer's own last card fixed trumps; he exchanges cards
    "dealer-last exchange": (ruleset("tippen/drei-karten-1821", {"exchange": True}),
                             lambda g, a: a > g.EXCHANGE_BASE),
}


@pytest.mark.parametrize("case", sorted(TRUMP_LAID_AWAY))
def test_a_trump_card_laid_away_face_down_is_known_by_identity_not_by_place(case):
    rules, want = TRUMP_LAID_AWAY[case]
    s = _dealer_laid_away(rules, 3, want)
    g, d, t = s.game, s.dealer, s.trump_card
    assert s.view(None)["trump_card"] == g.card_names[t]  # its identity stays public
    others = [x for x in range(g.num_players) if x != d]
    for seat in [None, *others]:
        assert not (s.known_mask(seat) >> t) & 1, seat
    assert (s.known_mask(d) >> t) & 1
    rng = random.Random(29)
    for seat in [None, *others]:
        in_discards = 0
        for i in range(300):
            w = s.resample(seat, rng)
            if i < 30:
                check_world(s, w, seat)
            laid = 0
            for x, a in w.log:
                if x == d and g.DISCARD_BASE <= a < g.WORD_BASE:
                    laid |= 1 << (a - g.DISCARD_BASE)
                elif x == d and a >= g.EXCHANGE_BASE:
                    laid |= a - g.EXCHANGE_BASE
            assert ((w.hands[d] | w.folded[d] | laid) >> t) & 1, (seat, "trump card left the dealer")
            in_discards += (laid >> t) & 1
        assert 0 < in_discards < 300, (seat, in_discards)


def test_a_1859_sniffers_trump_card_is_in_his_discard_as_often_as_a_uniform_deal_says():
    """He held his 3 cards and the upcard and laid one of the 4 away: 1 in 4 worlds."""
    rules, want = TRUMP_LAID_AWAY["1859 sniff"]
    s = _dealer_laid_away(rules, 8, want)
    g, d, t = s.game, s.dealer, s.trump_card
    seat = (d + 1) % g.num_players
    rng = random.Random(31)
    draws = 2000
    hits = sum(not (s.resample(seat, rng).hands[d] >> t) & 1 for _ in range(draws))
    sd = (draws * 0.25 * 0.75) ** 0.5
    assert abs(hits - draws / 4) < 4 * sd, hits


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**64), st.integers(0, 60), st.integers(0, 3))
def test_shuffle_is_randoms_own(seed, size, before):
    """``sampling.shuffle`` (the deck of every simulated deal) gives the order ``random.Random.shuffle``
    gives and leaves the generator where it leaves it; a generator of another class shuffles itself."""
    ours, theirs = random.Random(seed), random.Random(seed)
    for _ in range(before):
        ours.random(), theirs.random()
    mine, other = list(range(size)), list(range(size))
    shuffle(mine, ours)
    theirs.shuffle(other)
    assert mine == other and ours.getstate() == theirs.getstate()

    class Counting(random.Random):
        shuffled = 0

        def shuffle(self, x):
            Counting.shuffled += 1
            super().shuffle(x)

    shuffle(list(range(size)), Counting(seed))
    assert Counting.shuffled == 1
