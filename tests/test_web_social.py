"""The web table's social features, through the REST API and the WebSocket
protocol: seat counts per rule set, the turn timer and its stand-in bot, the lobby's list of
open tables, rematch, and the table chat. Browser tests: test_web_social_browser.py."""

from __future__ import annotations

import random

import pytest
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st
from server_helpers import WsClient, sync, ws_connect
from starlette.websockets import WebSocketDisconnect

from stammtisch.rules import PRESETS, ruleset
from stammtisch.server.app import create_app
from stammtisch.server.limits import ServerLimits
from stammtisch.server.protocol import FINAL_CLOSE_CODES
from stammtisch.server.refusals import Refusal
from stammtisch.server.table_social import clean_chat

pytestmark = pytest.mark.timeout(120)

SEATS = [{"name": "Anna"}, {"name": "Bernd"}, {"name": "Carla", "bot": "random"}]


def make_client(path, **limits):
    app = create_app(f"sqlite:///{path}", bot_delay=0, deal_pause=1000,
                     limits=ServerLimits(**{"turn_seconds_min": 1, **limits}))
    return TestClient(app)


@pytest.fixture()
def http(tmp_path):
    with make_client(tmp_path / "st.sqlite") as client:
        yield client


def create(http, seats=None, status=201, **extra):
    body = {"ruleset": "tippen/grupp-1975", "seats": seats or SEATS, **extra}
    r = http.post("/api/tables", json=body)
    assert r.status_code == status, r.text
    return r.json()


def start(http, t):
    r = http.post(f"/api/tables/{t['id']}/start", json={"token": t["admin_token"]})
    assert r.status_code == 200, r.text


def connect(http, t, token):
    return ws_connect(http, t["id"], token)


def token_of(t, seat):
    return t["seats"][seat]["token"]


def play_until(http, t, me: WsClient, stop, rng, bot_seats=(2,), limit=300):
    """Seat 0 (``me``) plays random legal actions, bots play theirs, any other seat's turn is
    waited for (a stand-in bot), until ``stop(view)``; a finished deal is followed by the next."""
    for _ in range(limit):
        sync(http, t["id"], [me], bot_seats)
        view = me.view
        if stop(view):
            return view
        before = me.state["event"]
        if view["terminal"]:
            me.ws.send_json({"type": "next"})
        elif view["current_player"] == me.hello["seat"]:
            me.send_action(rng.choice(view["legal_actions"]))
        me.until_event(before + 1)
    raise AssertionError("never came")


def on_turn(seat):
    return lambda v: not v["terminal"] and v["current_player"] == seat


def seat_flags(msg, key):
    return [s[key] for s in msg["table"]["seats"]]


def is_state(m):
    return m["type"] == "state"


# --- 1. the lobby offers what the rule set allows ---------------------------------------


def test_rulesets_give_each_preset_its_seat_counts_and_only_its_options(http):
    data = {r["id"]: r for r in http.get("/api/rulesets").json()}
    assert set(data) == set(PRESETS)
    for rid, r in data.items():
        preset = PRESETS[rid]
        assert r["min_players"] == preset.min_players
        assert r["max_players"] == (preset.max_players_whist52 or preset.max_players)
        assert [o["name"] for o in r["options"]] == list(preset.options)
        # every count the lobby offers builds; one more or one fewer does not
        for n in (r["min_players"], r["max_players"]):
            ruleset(rid, {"players": n})
        for n in (r["min_players"] - 1, r["max_players"] + 1):
            with pytest.raises(ValueError):
                ruleset(rid, {"players": n})
        if r["family"] == "tippen":  # the 32-card pack seats no more than this
            ruleset(rid, {"players": r["max_players_piquet32"], "pack": "piquet32"})
            with pytest.raises(ValueError):
                ruleset(rid, {"players": r["max_players_piquet32"] + 1, "pack": "piquet32"})
        else:
            assert r["max_players_piquet32"] is None
    assert data["tapp/modern"]["max_players"] == 4 and data["tapp/classic-1879"]["max_players"] == 3


# --- 2. the turn timer --------------------------------------------------------------------


def test_turn_timer_bounds_are_refused_clearly_and_create_nothing(http):
    before = len(http.app.state.manager.tables)
    for bad in (-1, 10_000):
        r = http.post("/api/tables", json={"ruleset": "tippen/grupp-1975", "seats": SEATS,
                                            "turn_seconds": bad})
        assert r.status_code == 400
        assert r.json()["rule"] == "turn timer" and "0 (off) or 1–600 seconds" in r.json()["error"]
    r = http.post("/api/tables", json={"ruleset": "tippen/grupp-1975", "seats": SEATS,
                                        "turn_seconds": "soon"})
    assert r.status_code == 422 and "turn_seconds" in r.json()["error"]
    assert len(http.app.state.manager.tables) == before
    assert create(http, turn_seconds=0)["turn_seconds"] == 0  # off, the default


def test_an_absent_seat_is_played_by_the_bot_after_the_timer_until_it_returns(http):
    rng = random.Random(1)
    t = create(http, turn_seconds=2)  # Bernd, back, must act within it on a busy machine
    start(http, t)
    with connect(http, t, token_of(t, 0)) as ws:  # Bernd (seat 1) never comes
        anna = WsClient(ws)
        play_until(http, t, anna, on_turn(1), rng)
        waiting = anna.state
        assert waiting["table"]["turn_seconds"] == 2
        assert waiting["table"]["turn_deadline"] is not None
        assert seat_flags(waiting, "away") == [False, False, False]
        event = waiting["event"]
        # the timer runs out: the seat is shown as played by the bot, then the bot's move comes
        marked = anna.until(lambda m: is_state(m) and m["table"]["seats"][1]["away"])
        assert marked["event"] == event  # nothing was played before the seat was marked
        moved = anna.until(lambda m: is_state(m) and m["event"] == event + 1)
        assert moved["view"]["log"][-1][0] == 1  # seat 1's move, by the stand-in
        assert seat_flags(moved, "away") == [False, True, False]
        # Bernd's later turns follow at once, without waiting for the timer again
        play_until(http, t, anna, lambda v: v["terminal"], rng)
        # Bernd comes: he plays himself again, and everybody sees it
        with connect(http, t, token_of(t, 1)) as ws2:
            bernd = WsClient(ws2)
            first = bernd.until(is_state)
            assert seat_flags(first, "away") == [False, False, False]
            anna.until(lambda m: is_state(m) and not m["table"]["seats"][1]["away"])
            ws2.send_json({"type": "next"})  # seated again: the next deal waits for him too
            play_until(http, t, anna, on_turn(1), rng)
            bernd.until_event(anna.state["event"])
            before = bernd.state["event"]
            bernd.send_action(rng.choice(bernd.view["legal_actions"]))
            bernd.until_event(before + 1)
            assert bernd.view["log"][-1][0] == 1
            assert bernd.errors == []


def test_an_idle_seat_is_taken_over_and_says_it_is_back(http):
    rng = random.Random(2)
    t = create(http, turn_seconds=1)
    start(http, t)
    with connect(http, t, token_of(t, 0)) as ws0, connect(http, t, token_of(t, 1)) as ws1:
        anna, bernd = WsClient(ws0), WsClient(ws1)
        play_until(http, t, anna, on_turn(1), rng)
        bernd.until(lambda m: is_state(m) and m["table"]["seats"][1]["away"])  # Bernd dozed off
        ws1.send_json({"type": "back"})
        back = bernd.until(lambda m: is_state(m) and not m["table"]["seats"][1]["away"])
        assert bernd.errors == []
        if not back["view"]["terminal"] and back["view"]["current_player"] == 1:
            assert back["table"]["turn_deadline"] is not None  # his own time again
        # "back" from a seat that is not away changes nothing and is not an error
        ws1.send_json({"type": "back"})
        ws1.send_json({"type": "ping", "seq": 1})
        bernd.until(lambda m: m["type"] == "pong")
        assert bernd.errors == []


def test_when_a_bot_plays_every_person_the_table_waits_after_the_deal(http):
    t = create(http, seats=[{"name": "Anna"}, {"name": "Robo", "bot": "random"},
                            {"name": "Rita", "bot": "random"}], turn_seconds=1)
    start(http, t)
    with connect(http, t, token_of(t, 0)) as ws:  # Anna watches but never acts
        anna = WsClient(ws)
        anna.until(lambda m: is_state(m) and m["table"]["seats"][0]["away"])
        done = anna.until(lambda m: is_state(m) and m["view"]["terminal"])
        assert done["table"]["next_deal_at"] is None and done["table"]["waiting"] is True
        ws.send_json({"type": "back"})
        back = anna.until(lambda m: is_state(m) and not m["table"]["seats"][0]["away"])
        assert back["table"]["waiting"] is False  # with a person back, deals go on: at her Next
        ws.send_json({"type": "next"})
        anna.until(lambda m: is_state(m) and m["table"]["deal_number"] == 2)


# --- 3. listed tables -------------------------------------------------------------------


LOBBY_SEATS = [{"name": "Anna"}, {"name": "Gast", "open": True}, {"name": "Carla", "bot": "random"}]


def test_a_listed_table_is_shown_in_the_lobby_and_a_stranger_takes_its_free_seat(http):
    hidden = create(http)  # not listed
    t = create(http, seats=LOBBY_SEATS, listed=True)
    listing = http.get("/api/tables").json()["tables"]
    assert [x["id"] for x in listing] == [t["id"]]
    entry = listing[0]
    assert entry["ruleset"] == "tippen/grupp-1975" and entry["free"] == 1 and entry["taken"] == 2
    assert [s["free"] for s in entry["seats"]] == [False, True, False]
    assert hidden["id"] not in {x["id"] for x in listing}
    # the stranger takes the free seat and gets his own link, as an invite
    r = http.post(f"/api/tables/{t['id']}/take", json={"seat": None})
    assert r.status_code == 200, r.text
    took = r.json()
    assert took["seat"] == 1 and took["name"] == "Gast" and took["link"] == f"/t/{t['id']}#{took['token']}"
    with connect(http, t, took["token"]) as ws:
        me = WsClient(ws)
        me.until(is_state)
        assert me.hello["role"] == "seat" and me.hello["seat"] == 1
        assert [s["open"] for s in me.state["table"]["seats"]] == [False, False, False]
    # the seat is no longer free: the lobby drops the table, a second stranger is refused
    assert http.get("/api/tables").json()["tables"] == []
    for seat in (None, 1):
        r = http.post(f"/api/tables/{t['id']}/take", json={"seat": seat})
        assert r.status_code == 409 and r.json()["rule"] == "no free seat"
    # the creator never held a link of that seat, and cannot have one made
    assert "token" not in t["seats"][1] and "link" not in t["seats"][1]
    r = http.post(f"/api/tables/{t['id']}/reissue", json={"token": t["admin_token"], "seat": 1})
    assert r.status_code == 400 and r.json()["rule"] == "lobby seat"


def test_no_link_the_creator_holds_shows_an_open_seat_s_hand(http):
    """An open seat is played by a stand-in bot until a stranger takes it: the creation's
    answer holds no link of it, none of the creator's links shows its cards, the admin cannot
    have one made (before or after a stranger sat down), and the stranger's hand was never
    shown to anybody else."""
    from conftest import cards_shown

    t = create(http, seats=LOBBY_SEATS, listed=True, turn_seconds=10)
    assert "token" not in t["seats"][1] and "link" not in t["seats"][1]
    start(http, t)
    creator_links = [t["admin_token"], t["spectator"]["token"], token_of(t, 0)]
    seen: set[str] = set()
    for token in creator_links:
        with connect(http, t, token) as ws:
            c = WsClient(ws)
            state = c.until(is_state)
            assert c.hello["seat"] != 1
            seen |= cards_shown(state["view"])
    r = http.post(f"/api/tables/{t['id']}/reissue", json={"token": t["admin_token"], "seat": 1})
    assert r.status_code == 400 and r.json()["rule"] == "lobby seat"
    took = http.post(f"/api/tables/{t['id']}/take", json={}).json()
    with connect(http, t, took["token"]) as ws:
        view = WsClient(ws).until(is_state)["view"]
    hand = {*view["hand"], *(view["folded"] or [])}  # a stand-in may have passed for him
    assert len(hand) == 3 and not hand & seen  # what the creator saw held none of the stranger's cards
    r = http.post(f"/api/tables/{t['id']}/reissue", json={"token": t["admin_token"], "seat": 1})
    assert r.status_code == 400 and r.json()["rule"] == "lobby seat"


def test_a_free_seat_is_played_by_the_bot_until_a_stranger_takes_it(http):
    rng = random.Random(6)
    t = create(http, seats=LOBBY_SEATS, listed=True)  # no turn timer: the table must not stall
    start(http, t)
    with connect(http, t, token_of(t, 0)) as ws:
        anna = WsClient(ws)
        first = anna.until(is_state)
        assert seat_flags(first, "away") == [False, True, False]
        assert seat_flags(first, "open") == [False, True, False]
        play_until(http, t, anna, lambda v: any(seat == 1 for seat, _ in v["log"]), rng)
        took = http.post(f"/api/tables/{t['id']}/take", json={}).json()
        with connect(http, t, took["token"]) as ws2:
            mine = WsClient(ws2).until(is_state)
            assert seat_flags(mine, "away") == [False, False, False]
            assert seat_flags(mine, "open") == [False, False, False]


def test_the_stranger_brings_his_name_to_a_table_not_started(http):
    t = create(http, seats=[{"name": "Anna"}, {"name": "Gast", "open": True},
                            {"name": "Gast 2", "open": True}], listed=True)
    for name, status, rule in (("anna", 400, "names"), ("Gast 2", 400, "names"),
                               ("   ", 422, "invalid")):
        r = http.post(f"/api/tables/{t['id']}/take", json={"name": name})
        assert r.status_code == status and r.json()["rule"] == rule, r.text
    assert http.get("/api/tables").json()["tables"][0]["free"] == 2  # nothing taken
    took = http.post(f"/api/tables/{t['id']}/take", json={"name": " Zoë "}).json()
    assert took["seat"] == 1 and took["name"] == "Zoë"
    assert http.get(f"/api/tables/{t['id']}").json()["players"] == ["Anna", "Zoë", "Gast 2"]
    start(http, t)  # a started table keeps the names of its deals
    took = http.post(f"/api/tables/{t['id']}/take", json={"name": "Xaver"}).json()
    assert took["seat"] == 2 and took["name"] == "Gast 2"
    info = http.get(f"/api/tables/{t['id']}").json()
    assert info["players"] == ["Anna", "Zoë", "Gast 2"] and info["deal_number"] == 1


def test_taking_seats_refuses_clearly_and_changes_nothing(http):
    t = create(http, seats=[{"name": "Anna"}, {"name": "Gast", "open": True},
                            {"name": "Gast 2", "open": True}], listed=True)
    for seat, rule in ((0, "taken"), (7, "taken")):
        r = http.post(f"/api/tables/{t['id']}/take", json={"seat": seat})
        assert r.status_code == 409 and r.json()["rule"] == rule
    r = http.post(f"/api/tables/{t['id']}/take", json={"seat": 12})
    assert r.status_code == 422
    assert http.get("/api/tables").json()["tables"][0]["free"] == 2
    assert http.post("/api/tables/nope/take", json={}).status_code == 404
    # an unlisted table has no seat for strangers; open seats need a listed table, and a person
    plain = create(http)
    r = http.post(f"/api/tables/{plain['id']}/take", json={})
    assert r.status_code == 409 and r.json()["rule"] == "no free seat"
    r = http.post("/api/tables", json={"ruleset": "tippen/grupp-1975", "seats": LOBBY_SEATS})
    assert r.status_code == 400 and r.json()["rule"] == "open seat"
    bot_open = [{"name": "A"}, {"name": "B"}, {"name": "C", "bot": "random", "open": True}]
    r = http.post("/api/tables", json={"ruleset": "tippen/grupp-1975", "seats": bot_open,
                                        "listed": True})
    assert r.status_code == 400 and r.json()["rule"] == "open seat"


def test_listing_and_open_seats_survive_a_restart(tmp_path):
    path = tmp_path / "st.sqlite"
    with make_client(path) as http:
        t = create(http, seats=[{"name": "Anna"}, {"name": "Gast", "open": True},
                                {"name": "Gast 2", "open": True}], listed=True, turn_seconds=30)
        assert http.post(f"/api/tables/{t['id']}/take", json={"seat": 2, "name": "Nina"}).status_code == 200
    with make_client(path) as http:
        entry = http.get("/api/tables").json()["tables"][0]
        assert entry["id"] == t["id"] and [s["free"] for s in entry["seats"]] == [False, True, False]
        assert [s["name"] for s in entry["seats"]] == ["Anna", "Gast", "Nina"]
        assert entry["turn_seconds"] == 30


# --- 4. rematch -------------------------------------------------------------------------


def test_rematch_takes_every_seat_to_the_same_seat_of_a_new_table(http):
    rng = random.Random(4)
    t = create(http, turn_seconds=30, options={"stake": "6"})
    start(http, t)
    spectator = t["spectator"]["token"]
    with connect(http, t, token_of(t, 0)) as ws0, connect(http, t, token_of(t, 1)) as ws1, \
            connect(http, t, spectator) as ws2:
        anna, bernd, watcher = WsClient(ws0), WsClient(ws1), WsClient(ws2)
        for c in (bernd, watcher):
            c.until(is_state)
        # not during a deal
        ws0.send_json({"type": "rematch"})
        assert anna.next_error()["rule"] == "rematch"
        assert http.get(f"/api/tables/{t['id']}").json()["closed"] is False

        play_deal_with_two(http, t, anna, bernd, rng)
        # Bernd asks: the rematch waits for Anna, the other seated player (the spectator and
        # the bot have no say), and so does the next deal
        ws1.send_json({"type": "rematch"})
        asked = anna.until(lambda m: m["type"] == "state" and m["table"]["rematch_votes"] == [1])
        assert asked["table"]["rematch"] is None and asked["table"]["next_deal_at"] is None
        ws0.send_json({"type": "next"})
        assert anna.next_error()["rule"] == "rematch asked"
        ws0.send_json({"type": "rematch", "agree": True})
        links = {}
        for seat, c in ((0, anna), (1, bernd), (None, watcher)):
            m = c.until(lambda m: m["type"] == "rematch")
            links[seat] = m["link"]
            new_id = m["table"]
        assert len(set(links.values())) == 3 and all(x.startswith(f"/t/{new_id}#") for x in links.values())
        old = http.get(f"/api/tables/{t['id']}").json()
        assert old["closed"] is True and old["rematch"] == new_id and old["rematch_votes"] == []
        new = http.get(f"/api/tables/{new_id}").json()
        assert new["players"] == old["players"] and new["ruleset"] == old["ruleset"]
        assert new["options"] == old["options"] and new["turn_seconds"] == 30
        assert [s["bot"] for s in new["seats"]] == [None, None, "random"]
        assert new["started"] is True and new["deal_number"] == 1
        # asking again sends the asker his link again; it makes no second table
        tables = len(http.app.state.manager.tables)
        ws0.send_json({"type": "rematch"})
        assert anna.until(lambda m: m["type"] == "rematch")["link"] == links[0]
        assert len(http.app.state.manager.tables) == tables
    for seat, link in links.items():
        with ws_connect(http, new_id, link.split("#")[1]) as ws:
            c = WsClient(ws)
            c.until(is_state)
            assert c.hello["seat"] == seat
    # once the old table is archived (closed, nobody there), the old link of a seat whose link
    # went on already opens the old table read-only: it never takes the seat from the player
    # who sits there at the rematch
    manager = http.app.state.manager
    assert http.portal.call(manager.sweep) >= 1 and manager.get(t["id"]) is None
    with ws_connect(http, new_id, links[1].split("#")[1]) as ws_new:
        sitting = WsClient(ws_new)
        sitting.until(is_state)
        for _ in range(3):
            with connect(http, t, token_of(t, 1)) as ws:
                got = ended_table(ws)
                assert got["hello"]["seat"] == 1 and got["state"]["table"]["rematch"] == new_id
                assert got["state"]["table"]["archived"] and got["code"] in FINAL_CLOSE_CODES
        ws_new.send_json({"type": "ping", "seq": 1})
        assert sitting.until(lambda m: m["type"] in ("pong", "error"))["type"] == "pong"
    with connect(http, t, "not-a-token") as ws:  # a stranger learns nothing
        assert ws.receive_json()["rule"] == "unknown table"


def test_a_decline_ends_the_rematch_question_and_the_table_plays_on(http):
    rng = random.Random(7)
    t = create(http)
    start(http, t)
    with connect(http, t, token_of(t, 0)) as ws0, connect(http, t, token_of(t, 1)) as ws1:
        anna, bernd = WsClient(ws0), WsClient(ws1)
        bernd.until(is_state)
        play_deal_with_two(http, t, anna, bernd, rng)
        ws0.send_json({"type": "rematch"})
        bernd.until(lambda m: m["type"] == "state" and m["table"]["rematch_votes"] == [0])
        ws1.send_json({"type": "rematch", "agree": False})
        after = anna.until(lambda m: m["type"] == "state" and m["table"]["rematch_votes"] == [])
        assert after["table"]["rematch"] is None and not after["table"]["closed"]
        ws1.send_json({"type": "rematch", "agree": "yes"})
        assert bernd.next_error()["rule"] == "protocol"
        ws0.send_json({"type": "next"})  # the table plays on, once both pressed Next
        ws1.send_json({"type": "next"})
        anna.until(lambda m: m["type"] == "state" and m["table"]["deal_number"] == 2)
    assert len(http.app.state.manager.tables) == 1


def test_a_rematch_goes_on_with_the_evening_s_score_sheet_and_chat(http):
    """The group keeps one tally for the evening: the rematch shows the tables before it
    (their deals and balances) and the evening's total per seat, and its chat goes on."""
    rng = random.Random(11)
    t = create(http)
    start(http, t)
    with connect(http, t, token_of(t, 0)) as ws0, connect(http, t, token_of(t, 1)) as ws1:
        anna, bernd = WsClient(ws0), WsClient(ws1)
        bernd.until(is_state)
        anna.until(is_state)
        assert anna.table["evening"] is None  # no table before this one
        ws1.send_json({"type": "chat", "text": "good luck"})
        anna.until(lambda m: m["type"] == "chat")
        play_deal_with_two(http, t, anna, bernd, rng)
        first = http.get(f"/api/tables/{t['id']}").json()
        ws0.send_json({"type": "rematch"})
        ws1.send_json({"type": "rematch"})
        link = anna.until(lambda m: m["type"] == "rematch")["link"]
        links = [link, bernd.until(lambda m: m["type"] == "rematch")["link"]]
    second_id = link.split("/t/")[1].split("#")[0]
    new = http.get(f"/api/tables/{second_id}").json()
    assert new["evening"] == {"tables": [{"deals": 1, "balances": first["balances"]}],
                              "total": [a + b for a, b in zip(first["balances"],
                                                              new["balances"], strict=True)]}
    with ws_connect(http, second_id, links[0].split("#")[1]) as ws0, \
            ws_connect(http, second_id, links[1].split("#")[1]) as ws1:
        anna, bernd = WsClient(ws0), WsClient(ws1)
        history = anna.until(lambda m: m["type"] == "chat")
        assert history["history"] and [(c["seat"], c["name"], c["text"]) for c in
                                       history["messages"]] == [(1, "Bernd", "good luck")]
        bernd.until(lambda m: m["type"] == "chat")
        ws0.send_json({"type": "chat", "text": "again"})  # the chat goes on after the carried line
        assert bernd.until(lambda m: m["type"] == "chat")["messages"][0]["text"] == "again"
        play_deal_with_two(http, {**t, "id": second_id}, anna, bernd, rng)
        second = http.get(f"/api/tables/{second_id}").json()
        ws0.send_json({"type": "rematch"})
        ws1.send_json({"type": "rematch"})
        third_id = anna.until(lambda m: m["type"] == "rematch")["table"]
    third = http.get(f"/api/tables/{third_id}").json()["evening"]
    assert third["tables"] == [{"deals": 1, "balances": first["balances"]},
                               {"deals": 1, "balances": second["balances"]}]
    assert third["total"] == [a + b for a, b in zip(first["balances"], second["balances"],
                                                    strict=True)]
    # it outlives a restart: stored with the table
    manager = http.app.state.manager
    stored = manager.storage.load_table(third_id)
    assert [e["table"] for e in stored.social.evening] == [t["id"], second_id]


def test_a_rematch_counts_as_a_table_made_by_the_seat_that_asked(tmp_path):
    """A rematch chain may not make tables faster than the creation limit of its asker's
    address: the rematch is refused like a creation, and the table plays on."""
    seats = [{"name": "Anna"}, {"name": "Bot 1", "bot": "random"}, {"name": "Bot 2", "bot": "random"}]
    with make_client(tmp_path / "st.sqlite", creations_per_minute=0.001, creation_burst=1) as http:
        t = create(http, seats=seats)  # the one creation the address may make
        start(http, t)
        with connect(http, t, token_of(t, 0)) as ws0:
            anna = WsClient(ws0)
            anna.until(is_state)
            play_until(http, t, anna, lambda v: v["terminal"], random.Random(3), bot_seats=(1, 2))
            ws0.send_json({"type": "rematch"})
            assert anna.next_error()["rule"] == "rate"
            info = http.get(f"/api/tables/{t['id']}").json()
            assert info["rematch"] is None and info["rematch_votes"] == [] and not info["closed"]
            ws0.send_json({"type": "next"})  # the table plays on
            anna.until(lambda m: m["type"] == "state" and m["table"]["deal_number"] == 2)
        assert len(http.app.state.manager.tables) == 1


def play_deal_with_two(http, t, anna, bernd, rng):
    """Anna (seat 0) and Bernd (seat 1) play random legal actions until the deal is over."""
    for _ in range(300):
        sync(http, t["id"], [anna, bernd], (2,))
        if anna.view["terminal"]:
            return
        me = anna if anna.view["current_player"] == 0 else bernd
        before = me.state["event"]
        me.send_action(rng.choice(me.view["legal_actions"]))
        me.until_event(before + 1)
    raise AssertionError("the deal did not end")


def test_after_a_restart_an_old_link_leads_to_the_rematch_once(tmp_path):
    """Bernd was away when Anna, the only seated player, made the rematch: his link was
    made but never handed over. After a restart (the link is lost with the server's memory)
    his old link leads to a fresh link of his new seat, once; used again, it leads nowhere,
    and the player who sits there keeps his seat."""
    path = tmp_path / "st.sqlite"
    with make_client(path) as http:
        t = create(http, turn_seconds=1)  # a stand-in plays for Bernd, who is away
        start(http, t)
        with connect(http, t, token_of(t, 0)) as ws0:
            anna = WsClient(ws0)
            anna.until(is_state)
            play_until(http, t, anna, lambda v: v["terminal"], random.Random(5), bot_seats=(1, 2))
            ws0.send_json({"type": "rematch"})
            new_id = anna.until(lambda m: m["type"] == "rematch")["table"]
    with make_client(path) as http:
        assert http.get(f"/api/tables/{t['id']}").json()["rematch"] == new_id
        with connect(http, t, token_of(t, 1)) as ws:
            link = WsClient(ws).until(lambda m: m["type"] == "rematch")["link"]
        assert link.startswith(f"/t/{new_id}#")
        with ws_connect(http, new_id, link.split("#")[1]) as ws_new:
            c = WsClient(ws_new)
            c.until(is_state)
            assert c.hello["seat"] == 1
            with connect(http, t, token_of(t, 1)) as ws:  # the same old link again
                gone = WsClient(ws).until(lambda m: m["type"] in ("error", "rematch"))
                assert gone["type"] == "error" and gone["rule"] == "rematch taken"
            ws_new.send_json({"type": "ping", "seq": 2})
            assert c.until(lambda m: m["type"] in ("pong", "error"))["type"] == "pong"


def ended_table(ws) -> dict:
    """What the link of an archived table gets: hello, the table as it ended, its chat, and the
    close code (a final one: the page stays as it is, read-only)."""
    got: dict = {"chat": []}
    with pytest.raises(WebSocketDisconnect) as closed:
        while True:
            m = ws.receive_json()
            assert m["type"] in ("hello", "state", "chat"), m  # no error, no rematch
            if m["type"] == "chat":
                got["chat"] += m["messages"]
            else:
                got[m["type"]] = m
    got["code"] = closed.value.code
    return got


def test_an_ended_table_opens_read_only_for_every_link(http):
    """End the table in the middle of a deal, then let it be archived: the seat's, the
    spectator's and the admin's links still open it, read-only, with its score sheet, chat
    and record; the broken-off deal's cards stay hidden (no view), and the full record and the
    whole analysis are the seats' and the admin's now."""
    rng = random.Random(8)
    t = create(http)
    start(http, t)
    with connect(http, t, token_of(t, 0)) as ws0, connect(http, t, token_of(t, 1)) as ws1:
        anna, bernd = WsClient(ws0), WsClient(ws1)
        bernd.until(is_state)
        play_deal_with_two(http, t, anna, bernd, rng)
        ws0.send_json({"type": "next"})
        ws1.send_json({"type": "next"})
        anna.until(lambda m: m["type"] == "state" and m["table"]["deal_number"] == 2 and not m["view"]["terminal"])
        ws0.send_json({"type": "chat", "text": "one more?"})
        anna.until(lambda m: m["type"] == "chat")
        r = http.post(f"/api/tables/{t['id']}/close", json={"token": t["admin_token"]})
        assert r.status_code == 200
    manager = http.app.state.manager
    assert http.portal.call(manager.sweep) >= 1 and manager.get(t["id"]) is None
    for who, token in (("seat", token_of(t, 0)), ("spectator", t["spectator"]["token"]),
                       ("admin", t["admin_token"])):
        for _ in range(2):  # built once, then kept: the same answer
            with connect(http, t, token) as ws:
                got = ended_table(ws)
            info = got["state"]["table"]
            assert got["hello"]["role"] == who and got["code"] in FINAL_CLOSE_CODES
            assert info["closed"] is True and info["archived"] and info["deal_number"] == 2
            assert [row["deal"] for row in info["score"]] == [1] and len(info["balances"]) == 3
            assert got["state"]["view"] is None  # deal 2 was broken off: nobody sees its cards
            assert [c["text"] for c in got["chat"]] == ["one more?"]
        headers = {"authorization": f"Bearer {token}"}
        record = http.get(f"/api/tables/{t['id']}/record", headers=headers).json()
        assert record["format"] == ("stammtisch-redacted/1" if who == "spectator" else "stammtisch-record/1")
        assert http.get(f"/api/tables/{t['id']}/deals/1", headers=headers).status_code == 200
    with connect(http, t, "not-a-token") as ws:  # a stranger learns nothing
        assert ws.receive_json()["rule"] == "unknown table"


# --- 5. chat ----------------------------------------------------------------------------


def test_chat_is_sent_to_everybody_as_plain_text_and_kept_with_the_table(tmp_path):
    path = tmp_path / "st.sqlite"
    with make_client(path) as http:
        t = create(http)
        with connect(http, t, token_of(t, 0)) as ws0, connect(http, t, t["spectator"]["token"]) as ws1:
            anna, watcher = WsClient(ws0), WsClient(ws1)
            watcher.until(is_state)
            ws0.send_json({"type": "chat", "text": "  <b>Gut</b> Blatt!\n\u202eok  "})
            for c in (anna, watcher):
                m = c.until(lambda m: m["type"] == "chat")
                assert [(x["seat"], x["name"], x["text"]) for x in m["messages"]] == \
                    [(0, "Anna", "<b>Gut</b> Blatt!  ok")]
                assert "history" not in m  # a new line, not the lines so far
    with make_client(path) as http:  # a restart keeps the chat
        with connect(http, t, token_of(t, 1)) as ws:
            m = WsClient(ws).until(lambda m: m["type"] == "chat")
            assert [x["text"] for x in m["messages"]] == ["<b>Gut</b> Blatt!  ok"]
            assert m["history"] is True


def test_chat_refusals_are_clear_and_store_nothing(http):
    t = create(http)
    with connect(http, t, token_of(t, 0)) as ws0, connect(http, t, t["spectator"]["token"]) as ws1:
        anna, watcher = WsClient(ws0), WsClient(ws1)
        watcher.until(is_state)
        for text, rule in (("x" * 201, "chat length"), ("   \n ", "chat empty")):
            ws0.send_json({"type": "chat", "text": text, "seq": 9})
            err = anna.next_error()
            assert err["rule"] == rule and err["seq"] == 9 and err["message"]
        ws0.send_json({"type": "chat", "text": 5})
        assert anna.next_error()["rule"] == "protocol"
        ws0.send_json({"type": "chat", "text": "x" * 200})  # the longest line is fine
        # the rate: a burst of 4 lines, then a refusal
        for i in range(4):
            ws0.send_json({"type": "chat", "text": f"line {i}"})
        err = anna.next_error()
        assert err["rule"] == "chat rate"
    with connect(http, t, token_of(t, 1)) as ws:
        m = WsClient(ws).until(lambda m: m["type"] == "chat")
        assert [x["text"] for x in m["messages"]] == ["x" * 200, "line 0", "line 1", "line 2"]


def test_a_spectator_chats_under_his_name_until_the_players_switch_it_off(tmp_path):
    """A spectator's line is sent to everybody marked as a spectator's, under the name he
    chose (cleaned and bounded as a seat's name) or none; the spectators' lines count per
    link and per address. A seat switches the spectators' chat off: every client is told by
    the table's info, a spectator's line is refused, a spectator may not switch it; the admin
    switches it on again. Both the setting and the lines survive a restart."""
    path = tmp_path / "st.sqlite"
    with make_client(path) as http:
        t = create(http)
        spectator = t["spectator"]["token"]
        with connect(http, t, token_of(t, 0)) as ws0, connect(http, t, spectator) as ws1, \
                connect(http, t, t["admin_token"]) as ws2:
            anna, watcher, admin = WsClient(ws0), WsClient(ws1), WsClient(ws2)
            for c in (anna, watcher, admin):
                c.until(is_state)
                assert c.table["spectator_chat"] is True
            ws1.send_json({"type": "chat", "text": "Gut gespielt!", "name": " Zoë\u202e "})
            for c in (anna, watcher, admin):
                m = c.until(lambda m: m["type"] == "chat")
                assert [(x["seat"], x["name"], x["text"], x.get("spectator")) for x in m["messages"]] \
                    == [(None, "Zoë", "Gut gespielt!", True)]
            ws1.send_json({"type": "chat", "text": "anonym"})
            line = anna.until(lambda m: m["type"] == "chat")["messages"][0]
            assert (line["seat"], line["name"], line["spectator"]) == (None, None, True)
            ws1.send_json({"type": "chat", "text": "x", "name": "N" * 25, "seq": 3})
            err = watcher.next_error()
            assert err["rule"] == "spectator name" and err["seq"] == 3
            ws1.send_json({"type": "chat", "text": "x", "name": 5})
            assert watcher.next_error()["rule"] == "protocol"
            # the spectators' link has its chat allowance (a burst of 4), so has its address
            for i in range(3):
                ws1.send_json({"type": "chat", "text": f"more {i}"})
            assert watcher.next_error()["rule"] == "chat rate"
            ws2.send_json({"type": "chat", "text": "admin here"})  # another link, same address
            assert admin.next_error()["rule"] == "chat rate"
            ws0.send_json({"type": "chat", "text": "the seats chat on"})
            anna.until(lambda m: m["type"] == "chat" and m["messages"][0]["seat"] == 0)
            # a spectator cannot switch it; a seat switches it off
            ws1.send_json({"type": "spectator chat", "on": False, "seq": 1})
            err = watcher.next_error()
            assert err["rule"] == "spectator chat switch" and err["seq"] == 1
            ws0.send_json({"type": "spectator chat", "on": "no"})
            assert anna.next_error()["rule"] == "protocol"
            ws0.send_json({"type": "spectator chat", "on": False})
            for c in (anna, watcher, admin):
                c.until(lambda m: is_state(m) and m["table"]["spectator_chat"] is False)
            ws1.send_json({"type": "chat", "text": "still there?", "seq": 2})
            err = watcher.next_error()
            assert err["rule"] == "spectator chat" and "switched" in err["message"]
    with make_client(path) as http:  # a restart keeps the setting and the lines
        with connect(http, t, spectator) as ws1, connect(http, t, t["admin_token"]) as ws2:
            watcher, admin = WsClient(ws1), WsClient(ws2)
            m = watcher.until(lambda m: m["type"] == "chat")
            assert [(x["name"], x["text"], x.get("spectator")) for x in m["messages"]][:2] == \
                [("Zoë", "Gut gespielt!", True), (None, "anonym", True)]
            if watcher.state is None:
                watcher.until(is_state)
            assert watcher.table["spectator_chat"] is False
            ws1.send_json({"type": "chat", "text": "hello?"})
            assert watcher.next_error()["rule"] == "spectator chat"
            admin.until(is_state)
            ws2.send_json({"type": "spectator chat", "on": True})
            watcher.until(lambda m: is_state(m) and m["table"]["spectator_chat"] is True)
            ws1.send_json({"type": "chat", "text": "thanks", "name": "Zoë"})
            line = admin.until(lambda m: m["type"] == "chat" and "history" not in m)["messages"][0]
            assert (line["name"], line["text"]) == ("Zoë", "thanks")


def test_spectators_and_strangers_cannot_use_seat_messages(http):
    t = create(http)
    with connect(http, t, t["spectator"]["token"]) as ws:
        c = WsClient(ws)
        c.until(is_state)
        for kind in ("rematch", "back"):
            ws.send_json({"type": kind})
            assert c.next_error()["rule"] == "spectator"
    with pytest.raises(WebSocketDisconnect), connect(http, t, "nope") as ws:
        ws.receive_json()
        ws.receive_json()


@given(st.text(max_size=300))
def test_a_chat_line_is_stored_printable_trimmed_and_bounded_or_refused(text):
    try:
        line = clean_chat(text, 200)
    except Refusal as e:
        printable = "".join(ch if ch.isprintable() else " " for ch in text).strip()
        assert (e.rule, bool(printable)) in (("chat empty", False), ("chat length", True))
        assert e.rule == "chat empty" or len(printable) > 200
        return
    assert line and line.isprintable() and line == line.strip() and len(line) <= 200
    assert clean_chat(line, 200) == line  # cleaning again changes nothing


def test_the_summary_of_a_table_tells_each_link_its_own_result_and_no_card(http):
    """"My tables" asks each table for a summary with the link's token: when it was made,
    its finished deals, this seat's balance (none for the spectator and the admin), playing
    or ended; a live table and an archived one alike; a wrong token learns nothing."""
    t = create(http)
    start(http, t)
    tid = t["id"]

    def summary(token, status=200):
        r = http.get(f"/api/tables/{tid}/summary", headers={"authorization": f"Bearer {token}"})
        assert r.status_code == status, r.text
        return r.json()

    with connect(http, t, token_of(t, 0)) as w0, connect(http, t, token_of(t, 1)) as w1:
        anna, bernd = WsClient(w0), WsClient(w1)
        rng = random.Random(5)
        for _ in range(300):
            sync(http, tid, [anna, bernd], bot_seats=(2,))
            view = anna.view
            if view["terminal"]:
                break
            me = anna if view["current_player"] == 0 else bernd
            before = me.state["event"]
            me.send_action(rng.choice(me.view["legal_actions"]))
            me.until_event(before + 1)
        balances = http.get(f"/api/tables/{tid}").json()["balances"]
    mine = summary(token_of(t, 1))
    assert mine == {"id": tid, "ruleset": "tippen/grupp-1975", "created": mine["created"],
                    "deals": 1, "role": "seat", "seat": 1, "name": "Bernd",
                    "balance": balances[1], "status": "playing"}
    assert mine["created"] > 0
    watcher = summary(t["spectator"]["token"])
    assert (watcher["seat"], watcher["balance"], watcher["role"]) == (None, None, "spectator")
    assert summary(t["admin_token"])["role"] == "admin"
    assert summary("not-the-token", status=403)["rule"] == "token"
    assert http.get(f"/api/tables/{tid}/summary").status_code == 403
    assert http.post(f"/api/tables/{tid}/close", json={"token": t["admin_token"]}).status_code == 200
    assert summary(token_of(t, 0))["status"] == "ended"
    manager = http.app.state.manager
    assert http.portal.call(manager.archive, manager.tables[tid], "test")
    assert http.get(f"/api/tables/{tid}").status_code == 410
    archived = summary(token_of(t, 1))
    # the live table's clock and the database's row were read a moment apart
    assert abs(archived.pop("created") - mine.pop("created")) < 1
    assert archived == {**mine, "status": "ended"}
    assert summary(t["spectator"]["token"])["balance"] is None
    assert summary("not-the-token", status=403)["rule"] == "token"
