"""The web table holds against floods, slow clients, database hiccups and odd input.

One section per kind of abuse or fault; each test states a limit the server keeps."""

from __future__ import annotations

import json
import random
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace

import pytest
from fastapi.testclient import TestClient
from server_helpers import WsClient, bearer, create_table, play_until_terminal, stored_record, sync, ws_connect

from stammtisch.record import replay
from stammtisch.server.app import create_app
from stammtisch.server.limits import ServerLimits
from stammtisch.server.live_table import LiveTable
from stammtisch.server.refusals import Refusal
from stammtisch.server.table_turns import TurnClock
from stammtisch.table import Table

BOTS3 = [{"name": "a", "bot": "random"}, {"name": "b", "bot": "random"}, {"name": "c", "bot": "random"}]


def make_app(tmp_path, name="st.sqlite", bot_delay=0.0, deal_pause=1000.0, api_docs=False, **limits):
    return create_app(f"sqlite:///{tmp_path / name}", bot_delay=bot_delay, deal_pause=deal_pause,
                      limits=replace(ServerLimits(), **limits), api_docs=api_docs)


@pytest.fixture()
def http(tmp_path):
    with TestClient(make_app(tmp_path)) as client:
        yield client


def start(http, t, token=None):
    r = http.post(f"/api/tables/{t['id']}/start", json={"token": token or t["admin_token"]})
    assert r.status_code == 200, r.text
    return r.json()


def connect(http, t, token):
    return ws_connect(http, t["id"], token)


def info(http, t):
    return http.get(f"/api/tables/{t['id']}").json()


#: How long a test waits for what comes at once unless the server hangs (only a hang fails).
HANG = 300.0


def starts_waiting(monkeypatch) -> threading.Event:
    """Set as a table starts waiting for a person (``TurnClock.waiting`` turns true)."""
    slot = TurnClock.__dict__["waiting"]
    became = threading.Event()

    def set_waiting(live, value):
        slot.__set__(live, value)
        if value:
            became.set()

    monkeypatch.setattr(TurnClock, "waiting", property(slot.__get__, set_waiting))
    return became


def on_turn(c0, c1):
    return {0: c0, 1: c1}[c0.view["current_player"]]


# --- table flood --------------------------------------------------------------------------


def test_table_creation_is_rate_limited_per_address(tmp_path):
    app = make_app(tmp_path, creation_burst=3, creations_per_minute=0.001)
    with TestClient(app) as http, TestClient(app, client=("10.0.0.2", 4000)) as other:
        for _ in range(3):
            create_table(http)
        r = http.post("/api/tables", json={"ruleset": "tippen/grupp-1975", "seats": [
            {"name": "A"}, {"name": "B"}, {"name": "C"}]})
        assert r.status_code == 429 and r.json()["rule"] == "rate"
        assert "try again" in r.json()["error"] and r.headers["retry-after"]
        create_table(other)  # another address has its own allowance


def test_live_tables_are_capped_and_expired_tables_make_room(tmp_path):
    """Beyond max_live_tables a new table is refused while every table is in play (a seated
    person connected); once one expires, it is archived and there is room again."""
    app = make_app(tmp_path, max_live_tables=2)
    with TestClient(app) as http:
        a, b = create_table(http), create_table(http)
        manager = app.state.manager
        with connect(http, a, a["seats"][0]["token"]) as wa, connect(http, b, b["seats"][0]["token"]) as wb:
            WsClient(wa).until(lambda m: m["type"] == "state")
            WsClient(wb).until(lambda m: m["type"] == "state")
            r = http.post("/api/tables", json={"ruleset": "tippen/grupp-1975", "seats": HUMANS3})
            assert r.status_code == 429 and r.json()["rule"] == "capacity" and r.headers["retry-after"]
            assert manager.evictions == 0
        later = time.time() + app.state.limits.lonely_after + 1
        manager.tables[a["id"]].last_activity = later  # as if somebody had just been there
        assert http.portal.call(manager.sweep, later) == 1  # nobody came to b for so long
        gone = http.get(f"/api/tables/{b['id']}")
        assert gone.status_code == 410 and gone.json()["rule"] == "archived"
        assert info(http, a)["id"] == a["id"]
        create_table(http)  # room again
        assert manager.evictions == 0


def test_a_flood_of_tables_nobody_plays_cannot_keep_a_player_out(tmp_path):
    """50 addresses, each within its own limits, make 10 tables at once: the 500 live tables
    the server holds. A player's new table then gives up one of those nobody plays (the
    longest idle of an address that made the most) instead of being refused; a table with a
    seated person connected is never given up."""
    limits = ServerLimits()
    app = make_app(tmp_path)
    flooders = [TestClient(app, client=(f"198.51.100.{i}", 5000)) for i in range(50)]
    with TestClient(app) as http:
        player = TestClient(app, client=("203.0.113.9", 5000))
        mine = player.post("/api/tables", json={"ruleset": "tippen/grupp-1975", "seats": HUMANS3})
        assert mine.status_code == 201
        mine = mine.json()
        made = {}
        with connect(http, mine, mine["seats"][0]["token"]) as ws:
            WsClient(ws).until(lambda m: m["type"] == "state")
            for _ in range(limits.creation_burst):
                for client in flooders:
                    r = client.post("/api/tables", json={"ruleset": "tippen/grupp-1975", "seats": HUMANS3})
                    if len(made) + 1 < limits.max_live_tables:
                        assert r.status_code == 201, r.text
                    made[r.json().get("id")] = client.base_url
            manager = app.state.manager
            assert len(manager.tables) == limits.max_live_tables
            r = player.post("/api/tables", json={"ruleset": "tippen/grupp-1975", "seats": HUMANS3})
            assert r.status_code == 201, r.text
            assert len(manager.tables) == limits.max_live_tables and manager.evictions >= 1
            assert mine["id"] in manager.tables  # in play: kept
            gone = [tid for tid in made if tid not in manager.tables]
            assert gone and all(http.get(f"/api/tables/{tid}").json()["rule"] == "archived"
                                for tid in gone)


def test_the_table_given_up_is_one_nobody_plays_of_the_address_that_made_most(tmp_path):
    app = make_app(tmp_path, max_live_tables=6)
    addresses = iter(f"192.0.2.{i}" for i in range(10, 250))

    def new(address: str | None = None) -> dict:
        client = TestClient(app, client=(address or next(addresses), 5000))
        r = client.post("/api/tables", json={"ruleset": "tippen/grupp-1975", "seats": HUMANS3})
        assert r.status_code == 201, r.text
        return r.json()

    with TestClient(app) as http:
        manager = app.state.manager
        quiet = new("192.0.2.1")
        busy = [new("192.0.2.2") for _ in range(4)]
        busy_old, busy_new, busy_watched, busy_started = busy
        start(http, busy_started)
        playing = new()
        now = time.time()
        # idle, but not yet for so long that they expire (unstarted_after)
        for t, idle in ((quiet, 3000), (busy_old, 600), (busy_new, 60), (busy_watched, 1000),
                        (busy_started, 2000)):
            manager.tables[t["id"]].last_activity = now - idle
        with connect(http, playing, playing["seats"][0]["token"]) as seated, \
                connect(http, busy_watched, busy_watched["spectator"]["token"]) as watching:
            WsClient(seated).until(lambda m: m["type"] == "state")
            spectator = WsClient(watching)
            spectator.until(lambda m: m["type"] == "state")
            given_up = []
            for _ in range(4):  # each from an address of its own
                before = set(manager.tables)
                new()
                given_up += sorted(before - set(manager.tables))
            # the address that made the most first; of its tables one that never started
            # before one that did, one nobody watches before one a spectator watches, the
            # longest idle first; once it holds no more than the others, the longest idle of
            # all that never started
            assert given_up == [busy_old["id"], busy_new["id"], busy_watched["id"], quiet["id"]]
            assert spectator.next_error()["rule"] == "archived"  # told, then closed for good
            assert playing["id"] in manager.tables and busy_started["id"] in manager.tables
        assert manager.evictions == 4


def test_one_address_holds_a_quota_of_live_tables(tmp_path):
    """A patient client cannot fill the server: one address holds at most tables_per_address
    live tables (the others are still served), and what it made counts until archived."""
    app = make_app(tmp_path, tables_per_address=2, creations_per_minute=1000, creation_burst=1000)
    with TestClient(app) as http:
        mine = [create_table(http), create_table(http)]
        r = http.post("/api/tables", json={"ruleset": "tippen/grupp-1975", "seats": HUMANS3})
        assert r.status_code == 429 and r.json()["rule"] == "quota" and r.headers["retry-after"]
        other = TestClient(app, client=("203.0.113.9", 50000))  # another address
        assert other.post("/api/tables", json={"ruleset": "tippen/grupp-1975",
                                               "seats": HUMANS3}).status_code == 201
        manager = app.state.manager
        manager.tables[mine[0]["id"]].closed = True
        assert http.portal.call(manager.sweep) == 1  # closed and empty: archived, room again
        create_table(http)


def test_search_bots_per_address_and_the_deals_of_a_bot_table_are_capped(tmp_path):
    """One client cannot take the search bots' worker for itself: the pimc and Expert seats of
    the live tables an address made are capped, and a table of bots plays at most
    bot_table_max_deals deals (a maximum it may ask below, never above)."""
    app = make_app(tmp_path, search_bots_per_address=3, bot_table_max_deals=50)
    pimc3 = [{"name": f"P{i}", "bot": "pimc"} for i in range(3)]
    with TestClient(app) as http:
        r = http.post("/api/tables", json={"ruleset": "tapp/modern", "seats": pimc3, "max_deals": 51})
        assert r.status_code == 400 and r.json()["rule"] == "max_deals"
        r = http.post("/api/tables", json={"ruleset": "tapp/modern", "seats": pimc3, "max_deals": 20})
        assert r.status_code == 201 and r.json()["max_deals"] == 20
        r = http.post("/api/tables", json={"ruleset": "tapp/modern", "seats": pimc3[:1] + HUMANS3[:2]})
        assert r.status_code == 429 and r.json()["rule"] == "search bots"
        r = http.post("/api/tables", json={"ruleset": "tapp/modern", "seats": [
            {"name": "H", "bot": "heuristic"}, *HUMANS3[:2]]})
        assert r.status_code == 201  # other bots are not capped
        r = http.post("/api/tables", json={"ruleset": "tapp/modern", "seats": [
            {"name": f"H{i}", "bot": "heuristic"} for i in range(3)]})
        assert r.status_code == 201 and r.json()["max_deals"] == 50  # the default is the cap


def test_tables_that_never_started_or_never_had_two_people_live_short(tmp_path):
    """A table that never started is archived after unstarted_after without events or
    clients; one that never had two people at it after lonely_after; a table two people
    played at lives until abandoned_after."""
    app = make_app(tmp_path)
    limits = app.state.limits
    with TestClient(app) as http:
        idle, lonely, two = create_table(http), create_table(http), create_table(http)
        for t in (lonely, two):
            start(http, t)
        for t, seats in ((lonely, (0,)), (two, (0, 1))):
            for seat in seats:
                with connect(http, t, t["seats"][seat]["token"]) as ws:
                    WsClient(ws).until(lambda m: m["type"] == "state")
        manager = app.state.manager
        now = time.time()
        for t in (idle, lonely, two):
            manager.tables[t["id"]].last_activity = now
        assert http.portal.call(manager.sweep, now + limits.unstarted_after + 1) == 1
        assert manager.get(idle["id"]) is None
        assert http.portal.call(manager.sweep, now + limits.lonely_after + 1) == 1
        assert manager.get(lonely["id"]) is None and manager.get(two["id"]) is not None
        assert http.portal.call(manager.sweep, now + limits.abandoned_after - 1) == 0
    with TestClient(make_app(tmp_path)) as http:  # the humans seen are kept over a restart
        assert http.app.state.manager.get(two["id"]).humans == {0, 1}


def test_archived_tables_are_not_loaded_at_start_up(tmp_path):
    with TestClient(make_app(tmp_path)) as http:
        kept, left = create_table(http), create_table(http)
        for t in (kept, left):
            with connect(http, t, t["seats"][0]["token"]) as ws:
                WsClient(ws).until(lambda m: m["type"] == "state")
        manager = http.app.state.manager
        manager.tables[kept["id"]].last_activity = time.time()
        manager.tables[left["id"]].last_activity = time.time() - manager.limits.abandoned_after - 1
        assert http.portal.call(manager.sweep) == 1
    with TestClient(make_app(tmp_path)) as http:
        assert set(http.app.state.manager.tables) == {kept["id"]}
        assert http.get(f"/api/tables/{left['id']}").status_code == 410
        # the archived table's record stays available to its seats
        r = http.get(f"/api/tables/{left['id']}/record", headers=bearer(left["seats"][0]["token"]))
        assert r.status_code == 200 and r.json()["format"] == "stammtisch-record/1"


# --- bot tables that never stop -----------------------------------------------------------


def test_bots_play_only_while_somebody_watches(tmp_path, monkeypatch):
    waits = starts_waiting(monkeypatch)
    app = make_app(tmp_path, watcher_grace=0.0, deal_pause=0.0)
    with TestClient(app) as http:
        t = create_table(http, seats=BOTS3)
        start(http, t)
        assert waits.wait(HANG) and info(http, t)["waiting"]
        live = app.state.manager.get(t["id"])
        assert live.turns.pending is None  # nothing is scheduled: the table waits for a person
        waited_at = info(http, t)["events"]
        with connect(http, t, t["spectator"]["token"]) as ws:
            c = WsClient(ws)
            c.until_event(waited_at + 5)
            assert not c.state["table"]["waiting"]
            waits.clear()
        assert waits.wait(HANG) and info(http, t)["waiting"]


def test_a_bot_table_waits_after_a_restart(tmp_path):
    with TestClient(make_app(tmp_path, deal_pause=0.0)) as http:
        t = create_table(http, seats=BOTS3)
        start(http, t)
    with TestClient(make_app(tmp_path, deal_pause=0.0)) as http:
        assert info(http, t)["waiting"]
        assert http.app.state.manager.get(t["id"]).turns.pending is None
        before = info(http, t)["events"]
        with connect(http, t, t["spectator"]["token"]) as ws:
            WsClient(ws).until_event(before + 3)


def test_a_table_stops_at_its_deal_limit(tmp_path):
    app = make_app(tmp_path, deal_pause=0.0, bot_table_max_deals=7)
    with TestClient(app) as http:
        assert create_table(http, seats=BOTS3)["max_deals"] == 7  # the default for bot tables
        r = http.post("/api/tables", json={"ruleset": "tippen/grupp-1975", "seats": BOTS3,
                                           "max_deals": 2})
        t = r.json()
        assert t["max_deals"] == 2
        start(http, t)
        with connect(http, t, t["spectator"]["token"]) as ws:
            c = WsClient(ws)
            c.until(lambda m: m["type"] == "state" and m["table"]["deal_number"] == 2
                    and not m["table"]["in_deal"])
        final = info(http, t)
        assert final["deal_number"] == 2 and final["next_deal_at"] is None
        assert app.state.manager.get(t["id"]).turns.pending is None
        assert len(final["score"]) == 2


def test_the_score_sheet_in_each_message_stays_short_however_long_the_table_plays(tmp_path):
    app = make_app(tmp_path, deal_pause=0.0)
    with TestClient(app) as http:
        r = http.post("/api/tables", json={"ruleset": "tippen/grupp-1975", "seats": BOTS3,
                                           "max_deals": 23})
        t = r.json()
        start(http, t)
        with connect(http, t, t["spectator"]["token"]) as ws:
            c = WsClient(ws)
            last = c.until(lambda m: m["type"] == "state" and m["table"]["deal_number"] == 23
                           and not m["table"]["in_deal"])["table"]
        assert [e["deal"] for e in last["score"]] == list(range(4, 24))  # the last 20
        assert last["score_earlier"] == 3
        assert info(http, t)["score_earlier"] == 3
        # the per-deal parts spliced into the cached JSON: the same as the info itself
        live = app.state.manager.get(t["id"])
        assert json.loads(live.fanout.info_bytes().decode()) == json.loads(json.dumps(live.info()))
        # the live table keeps only its latest deal, its score sheet only the rows shown ...
        assert len(live.table.deals) == 1 and live.table.deal_count == 23
        assert [e["deal"] for e in live.score] == list(range(4, 24))
        # ... and the record (from the database) still has every deal, summing to the balances
        record = stored_record(http, t["id"])
        assert len(record["deals"]) == 23
        assert list(replay(record).table.balances().values()) == last["balances"]


HUMANS3 = [{"name": "Anna"}, {"name": "Bernd"}, {"name": "Carla"}]


def play_out(http, live, rng):
    """Random legal actions for whoever is on turn until the deal is over."""
    while live.table.in_deal:
        seat = live.table.state.current_player()
        http.portal.call(live.act, seat, rng.choice(live.view(seat)["legal_actions"]))


def what_seats_see(live):
    """The table part and each seat's and a spectator's view of the current event."""
    shown = ("events", "deal_number", "in_deal", "dealer", "balances", "pot", "reserve",
             "score", "score_earlier", "explanation")
    return ({k: v for k, v in live.info().items() if k in shown},
            [live.view(s) for s in (0, 1, 2, None)])


def test_a_live_table_keeps_only_its_latest_deal_and_undo_still_restores_every_counter(
        tmp_path, monkeypatch):
    app = make_app(tmp_path, commit_deadline=0.2, spill_after=None)
    rng = random.Random(8)
    with TestClient(app) as http:
        t = create_table(http, seats=HUMANS3)
        start(http, t)
        manager, storage = app.state.manager, app.state.storage
        live = manager.get(t["id"])
        for _ in range(22):  # past the score sheet's 20 rows shown
            play_out(http, live, rng)
            http.portal.call(live.next_deal)
        assert live.table.deal_count == 23 and len(live.table.deals) == 1
        assert len(live.committed) == 1 and live.deal_start.deals_before == 22
        assert live.scored == 22 and len(live.score) == 20

        def broken(*a, **k):
            raise OSError("disk full")

        # a refused action in the middle of a deal, then a refused deal: both undone
        for _ in range(2):
            seat = live.table.state.current_player()
            http.portal.call(live.act, seat, rng.choice(live.view(seat)["legal_actions"]))
        seen = what_seats_see(live)
        monkeypatch.setattr(storage, "write_batch", broken)
        seat = live.table.state.current_player()
        with pytest.raises(Refusal, match="try again"):
            http.portal.call(live.act, seat, live.view(seat)["legal_actions"][0])
        assert what_seats_see(live) == seen
        monkeypatch.undo()
        play_out(http, live, rng)  # the deal that ends here is scored from the restored table
        seen = what_seats_see(live)
        assert seen[0]["score"][-1]["deal"] == 23 and seen[0]["score_earlier"] == 3
        monkeypatch.setattr(storage, "write_batch", broken)
        with pytest.raises(Refusal, match="try again"):
            http.portal.call(live.next_deal, True)
        assert what_seats_see(live) == seen
        monkeypatch.undo()
        http.portal.call(live.next_deal)
        play_out(http, live, rng)
        # the live table is the one its database record makes
        rebuilt = LiveTable.from_stored(manager, storage.load_table(t["id"]))
        assert what_seats_see(rebuilt) == what_seats_see(live)
        assert live.table.deal_count == 24 and len(live.table.deals) == 1


def test_the_record_is_refused_with_try_again_while_the_database_lacks_finished_deals(
        tmp_path, monkeypatch):
    app = make_app(tmp_path)
    with TestClient(app) as http:
        t = create_table(http, seats=HUMANS3)
        start(http, t)
        storage = app.state.storage
        live = app.state.manager.get(t["id"])
        rng = random.Random(3)
        for _ in range(2):
            play_out(http, live, rng)
            http.portal.call(live.next_deal)
        play_out(http, live, rng)  # three finished deals
        load = storage.load_table

        def short(table_id):  # as while its last events wait in the spill file
            st = load(table_id)
            return replace(st, deals=st.deals[:2])

        def gap(table_id):  # an action in the spill file, the ones after it in the database
            st = load(table_id)
            deck, actions = st.deals[-1]
            return replace(st, deals=[*st.deals[:-1], (deck, actions[:1] + actions[2:])])

        for behind in (short, gap):
            monkeypatch.setattr(storage, "load_table", behind)
            for token in (t["admin_token"], t["seats"][0]["token"], t["spectator"]["token"]):
                r = http.get(f"/api/tables/{t['id']}/record", headers=bearer(token))
                assert r.status_code == 503 and r.json()["rule"] == "storage", r.text
                assert "try again" in r.json()["error"] and r.headers["retry-after"]
            monkeypatch.undo()
        full = stored_record(http, t["id"])
        seen = http.get(f"/api/tables/{t['id']}/record", headers=bearer(t["seats"][0]["token"]))
        assert len(full["deals"]) == len(seen.json()["deals"]) == 3
        assert list(replay(full).table.balances().values()) == live.table.ledger.player_balances()


def test_reading_a_record_does_not_hold_up_the_commits_of_play(tmp_path, monkeypatch):
    app = make_app(tmp_path, spill_after=None)  # without a spill file an event waits for its commit
    with TestClient(app) as http:
        t = create_table(http, seats=HUMANS3)
        start(http, t)
        storage = app.state.storage
        live = app.state.manager.get(t["id"])
        load, reading, done = storage.load_table, threading.Event(), threading.Event()

        def slow_load(table_id):  # a long table's record, or a slow disk: until the test says
            reading.set()
            done.wait(HANG)
            return load(table_id)

        monkeypatch.setattr(storage, "load_table", slow_load)
        with ThreadPoolExecutor(2) as pool:
            answer = pool.submit(http.get, f"/api/tables/{t['id']}/record",
                                 headers=bearer(t["admin_token"]))
            try:
                assert reading.wait(HANG)
                seat = live.table.state.current_player()
                acted = pool.submit(http.portal.call, live.act, seat, live.view(seat)["legal_actions"][0])
                acted.result(timeout=HANG)  # committed while the read still waits
                assert not answer.done()
            finally:
                done.set()
            assert answer.result(timeout=HANG).status_code == 200


def test_a_stored_record_is_replayed_off_the_event_loop(tmp_path, monkeypatch):
    """Replaying a long table takes milliseconds: never on the event loop every table shares."""
    from stammtisch.server import records as records_module

    app = make_app(tmp_path)
    with TestClient(app) as http:
        t = create_table(http, seats=HUMANS3)
        start(http, t)
        live = app.state.manager.get(t["id"])
        play_out(http, live, random.Random(4))
        loop_thread = http.portal.call(threading.current_thread)
        real, threads = records_module.replay_deals, []

        def spy(table, st):
            threads.append(threading.current_thread())
            yield from real(table, st)

        monkeypatch.setattr(records_module, "replay_deals", spy)
        for token in (t["seats"][1]["token"], t["seats"][0]["token"], t["spectator"]["token"]):
            r = http.get(f"/api/tables/{t['id']}/record", headers=bearer(token))
            assert r.status_code == 200, r.text
        r = http.get(f"/api/tables/{t['id']}/analysis/1", headers=bearer(t["seats"][0]["token"]))
        assert r.status_code == 200, r.text
        assert len(threads) == 4 and loop_thread not in threads
        # the same download again is the one built: nothing is replayed
        r = http.get(f"/api/tables/{t['id']}/record", headers=bearer(t["admin_token"]))
        assert r.status_code == 200 and r.json()["seat"] is None and len(threads) == 4


def test_the_table_json_of_every_broadcast_is_the_table_info_itself(tmp_path, monkeypatch):
    """``TableFanout.info_bytes`` is built from cached parts (only the event number changes with
    most events): at every broadcast it is byte for byte ``info()`` with the per-deal keys
    last, through deals, a seat that comes and goes, a turn timer and the close."""
    from stammtisch.server.fanout import dumps
    from stammtisch.server.live_table import LiveTable

    checked, wrong, seen = [0], [], set()
    broadcast = LiveTable.broadcast_state

    def checking(self: LiveTable) -> None:
        fresh = self.info()
        for k in ("score", "score_earlier", "explanation"):  # the per-deal keys come last
            fresh[k] = fresh.pop(k)
        if self.fanout.info_bytes().decode() != dumps(fresh):  # noted, not raised: the table must go on
            wrong.append((self.events, self.fanout.info_bytes().decode(), dumps(fresh)))
        checked[0] += 1
        seen.update(k for k in ("turn_deadline", "next_deal_at", "closed") if fresh[k])
        broadcast(self)

    monkeypatch.setattr(LiveTable, "broadcast_state", checking)
    app = make_app(tmp_path, deal_pause=0.0, turn_seconds_min=1, pace_min=0)
    with TestClient(app) as http:
        t = http.post("/api/tables", json={"ruleset": "tippen/grupp-1975", "turn_seconds": 1,
                                           "seats": [{"name": "Anna"}, *BOTS3[1:]],
                                           "max_deals": 4, "pace": 0}).json()
        start(http, t)
        rng = random.Random(5)
        with connect(http, t, t["seats"][0]["token"]) as ws:
            anna = WsClient(ws)
            with connect(http, t, t["spectator"]["token"]) as watcher:  # comes and goes
                WsClient(watcher).until(lambda m: m["type"] == "state")
            while True:  # Anna plays at once when it is her turn (her timer runs meanwhile)
                m = anna.until(lambda m: m["type"] == "state")
                if m["table"]["deal_number"] == 4 and not m["table"]["in_deal"]:
                    break
                view = m["view"]
                if view and not view["terminal"] and view["current_player"] == 0:
                    anna.send_action(rng.choice(view["legal_actions"]), event=m["event"])
            assert http.post(f"/api/tables/{t['id']}/close",
                             json={"token": t["admin_token"]}).status_code == 200
            anna.until(lambda m: m["type"] == "state" and m["table"]["closed"])
    assert wrong == []
    assert checked[0] > 10 and seen == {"turn_deadline", "next_deal_at", "closed"}


# --- body limit while streaming (real server: see test_server_wire.py) --------------------


def test_declared_body_over_the_limit_is_refused_on_every_route(http):
    for path in ("/api/tables", "/api/tables/x/start", "/api/rulesets", "/nothing"):
        r = http.post(path, content=b"x" * 70_000, headers={"content-type": "application/json"})
        assert r.status_code == 413 and r.json()["rule"] == "size", path


# --- a stalled database write -------------------------------------------------------------


class DatabaseLock:
    """Another process's exclusive write lock on the SQLite file (as `sqlite3` would hold it)."""

    def __init__(self, path):
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)

    def __enter__(self):
        self.db.execute("BEGIN EXCLUSIVE")
        return self

    def __exit__(self, *exc):
        self.db.execute("ROLLBACK")
        self.db.close()


def two_humans_started(http):
    t = create_table(http)
    start(http, t)
    return t


@contextmanager
def two_humans_playing(http):
    """A started table of two humans and a bot, both humans connected and in step: yields
    the table, the human on turn, the other one and the events so far."""
    t = two_humans_started(http)
    with connect(http, t, t["seats"][0]["token"]) as w0, connect(http, t, t["seats"][1]["token"]) as w1:
        c0, c1 = WsClient(w0), WsClient(w1)
        events = sync(http, t["id"], [c0, c1], bot_seats=(2,))["events"]
        me = on_turn(c0, c1)
        yield t, me, c1 if me is c0 else c0, events


def test_a_locked_database_holds_up_only_its_table_and_the_action_commits_after(tmp_path):
    # without a spill file, an event waits for the database
    app = make_app(tmp_path, commit_deadline=60.0, sqlite_busy_ms=50, spill_after=None)
    with TestClient(app) as http:
        other = create_table(http)
        with two_humans_playing(http) as (t, me, _, events):
            action = me.view["legal_actions"][0]
            with DatabaseLock(tmp_path / "st.sqlite"):
                me.send_action(action)
                # the event loop is free: another table answers while the write waits
                assert http.get(f"/api/tables/{other['id']}").json()["id"] == other["id"]
                assert http.get("/api/rulesets").status_code == 200
            me.until_event(events + 1)  # retried after the lock went away: committed
            assert not me.errors
        stored = app.state.storage.load_table(t["id"]).deals[0][1]
        assert stored[events - 1] == (me.hello["seat"], action)  # event 1 is the deal itself


@pytest.mark.parametrize("spill", ["off", "broken"])
def test_a_commit_that_keeps_failing_is_refused_with_try_again_and_nothing_changes(tmp_path, spill):
    app = make_app(tmp_path, commit_deadline=0.3, sqlite_busy_ms=20,
                   spill_after=None if spill == "off" else 0.02)
    if spill == "broken":  # the spill file cannot be written either (a full disk, say)
        app.state.manager.store.spill.path = tmp_path / "missing-directory" / "st.sqlite.spill"
    with TestClient(app) as http:
        with two_humans_playing(http) as (t, me, other, events):
            snapshot = me.view
            action = me.view["legal_actions"][0]
            with DatabaseLock(tmp_path / "st.sqlite"):
                me.send_action(action)
                err = me.next_error()
            assert err["rule"] == "storage" and "try again" in err["message"]
            assert info(http, t)["events"] == events
            assert len(app.state.storage.load_table(t["id"]).deals[0][1]) == events - 1  # not stored
            other.ws.send_json({"type": "ping"})
            assert other.until(lambda m: m["type"] in ("pong", "state"))["type"] == "pong"  # no broadcast
            assert me.view == snapshot
            me.send_action(action)  # the same action, now that the database is back
            me.until_event(events + 1)


def test_a_locked_database_does_not_stop_play_the_spill_file_holds_the_events(tmp_path):
    # the commit deadline is far beyond the wait below: an answer while the lock is held can
    # only come through the spill file (without one: "try again" once the deadline is over)
    app = make_app(tmp_path, commit_deadline=2 * HANG, sqlite_busy_ms=500, spill_after=0.05)
    spill = tmp_path / "st.sqlite.spill"
    emptied = threading.Event()
    clear = app.state.manager.store.spill.clear

    def clear_and_tell():
        clear()
        emptied.set()

    app.state.manager.store.spill.clear = clear_and_tell
    with TestClient(app) as http:
        with two_humans_playing(http) as (t, me, other, events):
            action = me.view["legal_actions"][0]
            # (the lock goes first: a receive still waiting then ends, and so does the pool)
            with ThreadPoolExecutor(1) as pool, DatabaseLock(tmp_path / "st.sqlite"):
                me.send_action(action)
                answering = pool.submit(me.until, lambda m: m["type"] in ("state", "error"))
                try:
                    answer = answering.result(timeout=HANG)  # answered while the lock is held
                except TimeoutError:
                    raise AssertionError("no answer while the database was locked") from None
                assert answer["type"] == "state" and answer["event"] == events + 1
                assert b'"action"' in spill.read_bytes()
                assert len(app.state.storage.load_table(t["id"]).deals[0][1]) == events - 1
                other.until_event(events + 1)
            # the lock is gone: the drain moves the row into the database and empties the file
            assert emptied.wait(HANG)
            assert len(app.state.storage.load_table(t["id"]).deals[0][1]) >= events
            assert spill.stat().st_size == 0
        stored = app.state.storage.load_table(t["id"]).deals[0][1]
        assert stored[events - 1] == (me.hello["seat"], action)


def test_events_a_crash_left_in_the_spill_file_are_replayed_at_start_up(tmp_path):
    app = make_app(tmp_path, commit_deadline=60.0, sqlite_busy_ms=2000, spill_after=0.05)
    lock = DatabaseLock(tmp_path / "st.sqlite")
    with TestClient(app) as http:
        with two_humans_playing(http) as (t, me, _, events):
            action = me.view["legal_actions"][0]
            lock.__enter__()
            me.send_action(action)
            me.until_event(events + 1)  # (the bot may act after it: into the spill file too)
    live = app.state.manager.get(t["id"])  # what the server had when it went
    before = {"events": live.events, "balances": live.table.ledger.player_balances()}
    assert before["events"] >= events + 1
    lock.__exit__(None, None, None)  # the server is gone with its events still in the spill file
    spill = tmp_path / "st.sqlite.spill"
    with spill.open("ab") as f:
        f.write(b'["action",{"table_id":"torn')  # a crash in the middle of a later append
    assert len(app.state.storage.load_table(t["id"]).deals[0][1]) == events - 1
    with TestClient(make_app(tmp_path)) as http:
        after = info(http, t)
        assert after["events"] == before["events"] and after["balances"] == before["balances"]
    assert spill.stat().st_size == 0


def test_a_bot_table_survives_a_locked_database(tmp_path):
    app = make_app(tmp_path, commit_deadline=0.1, sqlite_busy_ms=10, deal_pause=0.0)
    app.state.manager.retry_later = 0.05
    with TestClient(app) as http:
        t = create_table(http, seats=BOTS3)
        start(http, t)
        with connect(http, t, t["spectator"]["token"]) as ws:
            c = WsClient(ws)
            c.until_event(3)
            with DatabaseLock(tmp_path / "st.sqlite"):
                time.sleep(0.5)  # several bot turns meet the lock
            seen = info(http, t)["events"]
            c.until_event(seen + 5)  # the bots play on
        assert info(http, t)["broken"] is None


# --- numbers ------------------------------------------------------------------------------


@pytest.mark.parametrize("options, needle", [
    ({"stake": "3" + "0" * 4299}, "too long"),
    ({"stake": 10 ** 30}, "at most 1000"),
    ({"stake": 1002}, "at most 1000"),
    ({"max_bete": 10 ** 9}, "at most 100000"),
])
def test_numeric_options_are_bounded(http, options, needle):
    r = http.post("/api/tables", json={"ruleset": "tippen/grupp-1975", "options": options,
                                       "seats": [{"name": "A"}, {"name": "B"}, {"name": "C"}]})
    assert r.status_code == 400 and needle in r.json()["error"], r.text


def test_rulesets_document_the_maxima(http):
    grupp = next(r for r in http.get("/api/rulesets").json() if r["id"] == "tippen/grupp-1975")
    stake = next(o for o in grupp["options"] if o["name"] == "stake")
    assert stake["maximum"] == 1000


def test_a_deal_the_engine_cannot_make_is_never_committed(http, monkeypatch):
    t = two_humans_started(http)
    tid = t["id"]
    with connect(http, t, t["seats"][0]["token"]) as w0, connect(http, t, t["seats"][1]["token"]) as w1:
        c0, c1 = WsClient(w0), WsClient(w1)
        play_until_terminal(http, tid, {0: c0, 1: c1}, bot_seats=(2,))
        events = info(http, t)["events"]
        real = Table.start_deal

        def failing(self, deck):
            if len(self.deals) == 1:
                raise OverflowError("int too large")
            return real(self, deck)

        monkeypatch.setattr(Table, "start_deal", failing)
        w1.send_json({"type": "next"})  # the next deal comes when both asked for it
        c0.until(lambda m: m["type"] == "state" and m["table"]["next_ready"] == [1])
        w0.send_json({"type": "next"})
        assert c0.next_error()["rule"] == "server"
        assert len(http.app.state.storage.load_table(tid).deals) == 1  # nothing committed
        monkeypatch.undo()
        assert info(http, t)["events"] == events and info(http, t)["broken"] is None
        w0.send_json({"type": "next"})
        c0.until_event(events + 1)
        assert c0.state["table"]["deal_number"] == 2


# --- deep JSON ----------------------------------------------------------------------------


def test_deep_json_gets_a_clear_error_and_the_connection_stays(http):
    t = two_humans_started(http)
    with connect(http, t, t["seats"][0]["token"]) as w0:
        c0 = WsClient(w0)
        c0.until(lambda m: m["type"] == "state")
        w0.send_text("[" * 2000 + "]" * 2000)
        err = c0.next_error()
        assert err["rule"] == "depth" and "nested" in err["message"]
        deep = {"type": "ping"}
        for _ in range(40):
            deep = {"x": deep}
        w0.send_text(json.dumps({"type": "action", "action": "pass", "event": 0, "x": deep}))
        assert c0.next_error()["rule"] == "depth"
        w0.send_json({"type": "ping"})
        assert c0.until(lambda m: m["type"] == "pong")


# --- names --------------------------------------------------------------------------------


def test_names_are_cleaned_and_look_alikes_refused(http):
    t = create_table(http, seats=[{"name": "An\u200bna\u202e"}, {"name": "Bernd\u0007 "},
                                  {"name": "Re\u0301ne"}])
    assert [s["name"] for s in t["seats"]] == ["Anna", "Bernd", "R\u00e9ne"]  # NFC: one code point for é
    for pair in (["Anna", "\u0410nna"], ["Anna", "ANNA"], ["Paul", "Pau1"], ["Marie", "Ma\u0280ie"]):
        seats = [{"name": pair[0]}, {"name": pair[1]}, {"name": "Zora"}]
        r = http.post("/api/tables", json={"ruleset": "tippen/grupp-1975", "seats": seats})
        if pair[1] == "Ma\u0280ie":  # small capital R is not in our table: allowed
            assert r.status_code == 201
            continue
        assert r.status_code == 400 and r.json()["rule"] == "names", (pair, r.text)
    for bad in ("\u200b\u200d", "x" * 25, "\u202e\u0007"):
        r = http.post("/api/tables", json={"ruleset": "tippen/grupp-1975", "seats": [
            {"name": bad}, {"name": "B"}, {"name": "C"}]})
        assert r.status_code == 422 and "seats.0.name" in r.json()["error"], bad


# --- finished-deal disclosure -------------------------------------------------------------


def test_record_is_redacted_during_the_session_and_full_after_close(http):
    t = two_humans_started(http)
    tid = t["id"]
    url = f"/api/tables/{tid}/record"
    with connect(http, t, t["seats"][0]["token"]) as w0, connect(http, t, t["seats"][1]["token"]) as w1, \
            connect(http, t, t["spectator"]["token"]) as ws:
        c0, c1, cs = WsClient(w0), WsClient(w1), WsClient(ws)
        play_until_terminal(http, tid, {0: c0, 1: c1}, bot_seats=(2,))
        sync(http, tid, [c0, c1, cs], bot_seats=(2,))
        assert http.get(url).status_code == 403
        assert http.get(url, headers=bearer("nonsense")).status_code == 403
        spect = http.get(url, headers=bearer(t["spectator"]["token"])).json()
        assert spect["format"] == "stammtisch-redacted/1" and "deck" not in json.dumps(spect)
        assert spect["deals"][0]["view"] == cs.view  # as the spectator saw the deal end
        seat0 = http.get(url, headers=bearer(t["seats"][0]["token"])).json()
        assert seat0["format"] == "stammtisch-redacted/1" and seat0["deals"][0]["view"] == c0.view
        # the admin too gets only what the table showed while it plays: a spectator's view (at
        # a listed table it would tell the creator what strangers folded)
        admin = http.get(url, headers=bearer(t["admin_token"])).json()
        assert admin == spect
        assert http.post(f"/api/tables/{tid}/close", json={"token": t["seats"][0]["token"]}).status_code == 403
        r = http.post(f"/api/tables/{tid}/close", json={"token": t["admin_token"]})
        assert r.status_code == 200 and r.json()["closed"]
        c0.until(lambda m: m["type"] == "state" and m["table"]["closed"])
        full = http.get(url, headers=bearer(t["admin_token"])).json()
        assert full["format"] == "stammtisch-record/1" and len(full["deals"][0]["deck"]) == 32
        after = http.get(url, headers=bearer(t["seats"][1]["token"])).json()
        assert after == full  # every seat gets the full record once the table is closed
        assert http.get(url, headers=bearer(t["spectator"]["token"])).json()["format"] == \
            "stammtisch-redacted/1"
        w0.send_json({"type": "next"})
        assert c0.next_error()["rule"] == "closed"


def archived_after_a_deal(http, t) -> None:
    """Seat 0 plays a deal of table ``t`` (the others are bots), the admin closes the table,
    nobody is there: the sweep archives it."""
    tid = t["id"]
    with connect(http, t, t["seats"][0]["token"]) as w0:
        c0 = WsClient(w0)
        play_until_terminal(http, tid, {0: c0}, bot_seats=(1, 2))
        assert http.post(f"/api/tables/{tid}/close", json={"token": t["admin_token"]}).status_code == 200
    manager = http.app.state.manager
    assert http.portal.call(manager.sweep) == 1 and manager.get(tid) is None


def counted(monkeypatch, storage, *names: str) -> dict[str, int]:
    """Calls of the storage's reads ``names``, counted."""
    calls = dict.fromkeys(names, 0)
    for name in names:
        real = getattr(storage, name)

        def counting(*args, _real=real, _name=name, **kw):
            calls[_name] += 1
            return _real(*args, **kw)

        monkeypatch.setattr(storage, name, counting)
    return calls


def test_an_archived_tables_token_is_checked_by_one_small_query_before_its_table_is_read(tmp_path, monkeypatch):
    """A wrong token for an archived table costs one lookup of the table's token digests,
    never a read of the table; each read takes from the address's allowance first, so an
    address that spent it is refused before any read, and another address is not."""
    app = make_app(tmp_path, stored_read_burst_per_address=5, stored_reads_per_minute_per_address=0.001)
    with TestClient(app) as http, TestClient(app, client=("10.0.0.2", 4000)) as other:
        t = create_table(http, seats=[{"name": "A"}, {"name": "B", "bot": "random"}, {"name": "C", "bot": "random"}])
        start(http, t)
        archived_after_a_deal(http, t)
        tid = t["id"]
        calls = counted(monkeypatch, app.state.storage, "table_tokens", "load_table")
        for path in ("record", "deals/1", "analysis/1"):
            r = http.get(f"/api/tables/{tid}/{path}", headers=bearer("a wrong token"))
            assert r.status_code == 403 and r.json()["rule"] == "token"
        assert calls == {"table_tokens": 3, "load_table": 0}
        seat = bearer(t["seats"][0]["token"])
        r = http.get(f"/api/tables/{tid}/record", headers=seat)  # two reads: the token, the table
        assert r.status_code == 200 and r.json()["format"] == "stammtisch-record/1"
        assert calls == {"table_tokens": 4, "load_table": 1}
        # the address has read five times: refused before any read, the right token too
        for params in (seat, bearer("another wrong token")):
            r = http.get(f"/api/tables/{tid}/record", headers=params)
            assert r.status_code == 429 and r.json()["rule"] == "read rate" and r.headers["retry-after"]
        assert calls == {"table_tokens": 4, "load_table": 1}
        # another address: its own allowance; the record it asks for is kept, not read again
        again = other.get(f"/api/tables/{tid}/record", headers=seat)
        assert again.status_code == 200 and again.json()["format"] == "stammtisch-record/1"
        assert calls == {"table_tokens": 5, "load_table": 1}
        # an unknown table: 404 after the lookup, a junk id before it
        assert other.get("/api/tables/nosuchtable/record", headers=seat).status_code == 404
        assert other.get("/api/tables/no%20such/record", headers=seat).status_code == 404
        assert calls == {"table_tokens": 6, "load_table": 1}


def test_a_live_tables_uncached_record_takes_the_addresss_allowance_before_the_read(tmp_path, monkeypatch):
    app = make_app(tmp_path, stored_read_burst_per_address=1, stored_reads_per_minute_per_address=0.001)
    with TestClient(app) as http:
        t = two_humans_started(http)
        calls = counted(monkeypatch, app.state.storage, "table_tokens", "load_table")
        seat0, seat1 = (bearer(t["seats"][i]["token"]) for i in (0, 1))
        url = f"/api/tables/{t['id']}/record"
        assert http.get(url, headers=seat0).status_code == 200  # read: the allowance of one spent
        assert http.get(url, headers=seat0).status_code == 200  # kept: no read
        r = http.get(url, headers=seat1)  # another seat's view: a read, refused before it
        assert r.status_code == 429 and r.json()["rule"] == "read rate"
        assert http.get(url, headers=bearer("wrong")).status_code == 403  # a live table knows its tokens
        assert calls == {"table_tokens": 0, "load_table": 1}


def test_the_analysis_of_an_archived_tables_deal_is_whole_for_a_seat_and_the_admin(tmp_path):
    from server_helpers import stored_record as full_record

    from stammtisch.server.analysis import analyse_deal

    with TestClient(make_app(tmp_path)) as http:
        t = create_table(http, seats=[{"name": "A"}, {"name": "B", "bot": "random"}, {"name": "C", "bot": "random"}])
        start(http, t)
        archived_after_a_deal(http, t)
        record = full_record(http, t["id"])
        findings = analyse_deal(record, 1)
        url = f"/api/tables/{t['id']}/analysis/1"
        for token in (t["seats"][0]["token"], t["admin_token"]):
            r = http.get(url, headers=bearer(token))
            whole = {"players": record["players"], **findings.read_by(0, whole=True)}
            assert r.status_code == 200 and r.json() == whole
        spectator = http.get(url, headers=bearer(t["spectator"]["token"])).json()
        assert spectator == {"players": record["players"], **findings.read_by(None)}
        r = http.get(f"/api/tables/{t['id']}/analysis/2", headers=bearer(t["admin_token"]))
        assert r.status_code == 409 and r.json()["rule"] == "deal in progress"


# --- connections --------------------------------------------------------------------------


def test_connections_are_capped_per_table_and_per_address(tmp_path):
    with TestClient(make_app(tmp_path, conns_per_table=2, ws_per_address=3)) as http:
        t, u = create_table(http), create_table(http)
        with connect(http, t, t["spectator"]["token"]) as a, connect(http, t, t["spectator"]["token"]) as b:
            WsClient(a).recv(), WsClient(b).recv()
            with connect(http, t, t["spectator"]["token"]) as c:
                m = c.receive_json()
                assert m["type"] == "error" and m["rule"] == "full"
            with connect(http, u, u["spectator"]["token"]) as d:
                WsClient(d).recv()
                with connect(http, u, u["spectator"]["token"]) as e:
                    m = e.receive_json()
                    assert m["type"] == "error" and m["rule"] == "address"


def test_presence_is_coalesced_and_spectators_do_not_cause_it(tmp_path):
    with TestClient(make_app(tmp_path, presence_delay=0.05)) as http:
        t = two_humans_started(http)
        with connect(http, t, t["seats"][0]["token"]) as w0:
            c0 = WsClient(w0)
            c0.until(lambda m: m["type"] == "presence")  # its own arrival
            for _ in range(15):
                with connect(http, t, t["spectator"]["token"]) as ws:
                    WsClient(ws).recv()
            with connect(http, t, t["seats"][1]["token"]) as w1:
                WsClient(w1).recv()
                c0.until(lambda m: m["type"] == "presence" and m["seats"][1]["connected"])
                w0.send_json({"type": "ping"})
                seen = []
                c0.until(lambda m: seen.append(m["type"]) or m["type"] == "pong")
        presences = [m for m in seen if m == "presence"]
        assert len(presences) <= 1


def test_the_rate_limit_is_per_seat_not_per_socket(tmp_path):
    """30 messages of one seat over two sockets: the seat's burst of 20 passes, the rest is
    refused. The bucket refills slowly here, so a slow machine's seconds add no token."""
    with TestClient(make_app(tmp_path, seat_rate=0.5, seat_burst=20.0)) as http:
        t = two_humans_started(http)
        with connect(http, t, t["seats"][0]["token"]) as a, connect(http, t, t["seats"][0]["token"]) as b:
            ca, cb = WsClient(a), WsClient(b)
            for _ in range(15):
                a.send_json({"type": "ping"})
                b.send_json({"type": "ping"})
            kinds = [ca.until(lambda m: m["type"] in ("pong", "error"))["type"] for _ in range(15)]
            kinds += [cb.until(lambda m: m["type"] in ("pong", "error"))["type"] for _ in range(15)]
            assert kinds.count("pong") <= 21 and kinds.count("error") >= 9


# --- hardening ----------------------------------------------------------------------------


def test_security_headers_and_no_api_docs_by_default(tmp_path):
    with TestClient(make_app(tmp_path)) as http:
        for path in ("/", "/api/rulesets", "/static/app.js", "/api/tables/nope"):
            h = http.get(path).headers
            csp = h["content-security-policy"]
            assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp, path
            assert h["x-content-type-options"] == "nosniff" and h["referrer-policy"] == "no-referrer"
        assert http.get("/api/docs").status_code == 404
        assert http.get("/api/openapi.json").status_code == 404
    with TestClient(make_app(tmp_path, name="docs.sqlite", api_docs=True)) as http:
        assert http.get("/api/docs").status_code == 200
        assert http.get("/api/openapi.json").status_code == 200


def test_the_admin_can_revoke_and_reissue_a_seat_link(http):
    t = two_humans_started(http)
    old = t["seats"][0]["token"]
    url = f"/api/tables/{t['id']}/reissue"
    assert http.post(url, json={"token": old, "seat": 0}).status_code == 403
    assert http.post(url, json={"token": t["admin_token"], "seat": 2}).status_code == 400  # a bot
    with connect(http, t, old) as w0:
        c0 = WsClient(w0)
        c0.until(lambda m: m["type"] == "state")
        r = http.post(url, json={"token": t["admin_token"], "seat": 0})
        assert r.status_code == 200
        new = r.json()["token"]
        assert r.json()["link"] == f"/t/{t['id']}#{new}" and new != old
        assert c0.next_error()["rule"] == "revoked"
    with connect(http, t, old) as w:
        assert w.receive_json()["rule"] == "token"
    with connect(http, t, new) as w:
        assert WsClient(w).until(lambda m: m["type"] == "hello")["seat"] == 0
    r = http.post(url, json={"token": t["admin_token"], "seat": None})
    with connect(http, t, t["spectator"]["token"]) as w:
        assert w.receive_json()["rule"] == "token"
    with connect(http, t, r.json()["token"]) as w:
        assert WsClient(w).until(lambda m: m["type"] == "hello")["role"] == "spectator"


# --- stale actions ------------------------------------------------------------------------


def test_a_stale_action_is_refused_and_the_current_state_shown(http):
    t = two_humans_started(http)
    with connect(http, t, t["seats"][0]["token"]) as w0, connect(http, t, t["seats"][1]["token"]) as w1:
        c0, c1 = WsClient(w0), WsClient(w1)
        events = sync(http, t["id"], [c0, c1], bot_seats=(2,))["events"]
        me = on_turn(c0, c1)
        action = me.view["legal_actions"][0]
        me.send_action(action, event=events - 1)
        err = me.next_error()
        assert err["rule"] == "stale" and "look again" in err["message"]
        again = me.until(lambda m: m["type"] == "state")
        assert again["event"] == events
        me.ws.send_json({"type": "action", "action": action})
        assert me.next_error()["rule"] == "event"
        assert info(http, t)["events"] == events
        me.send_action(action, event=events)
        me.until_event(events + 1)
