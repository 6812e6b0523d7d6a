"""Hints at a practice table, over the WebSocket protocol: the seat on turn asks, the search bot
answers that seat alone with one of its legal actions and a line of why; every client (the
spectator too) is told that a hint was asked, never the hint. A table without hints, a seat not
on turn and a spectator are refused by rule, and the table is unchanged."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import pytest
from fastapi.testclient import TestClient
from server_helpers import WsClient, ws_connect

from stammtisch.i18n import render
from stammtisch.server.app import create_app
from stammtisch.server.limits import ServerLimits

pytestmark = pytest.mark.timeout(300)

SEATS = [{"name": "Anna"}, {"name": "Bernd"}, {"name": "Carla"}]


@pytest.fixture()
def http(tmp_path):
    app = create_app(f"sqlite:///{tmp_path / 'st.sqlite'}", bot_delay=0, deal_pause=1000,
                     limits=ServerLimits(hint_rate=100.0, hint_burst=100.0))
    with TestClient(app) as client:
        yield client


def table(http, hints: bool, ruleset: str = "tippen/grupp-1975") -> dict:
    r = http.post("/api/tables", json={"ruleset": ruleset, "seats": SEATS, "hints": hints})
    assert r.status_code == 201, r.text
    t = r.json()
    assert t["hints"] is hints
    assert http.post(f"/api/tables/{t['id']}/start", json={"token": t["admin_token"]}).status_code == 200
    return t


def is_state(m):
    return m["type"] == "state"


@contextmanager
def connected(http, t: dict, spectator: bool = False) -> Iterator[list[WsClient]]:
    """A client per seat (and the spectator's last), each past its first state."""
    tokens = [s["token"] for s in t["seats"]] + ([t["spectator"]["token"]] if spectator else [])
    with ExitStack() as stack:
        clients = [WsClient(stack.enter_context(ws_connect(http, t["id"], tok)))
                   for tok in tokens]
        for c in clients:
            c.until(is_state)
        yield clients


@pytest.mark.parametrize("ruleset", ["tippen/grupp-1975", "tapp/modern"])
def test_the_seat_on_turn_gets_a_hint_and_everybody_hears_it_was_asked(http, ruleset):
    t = table(http, True, ruleset)
    with connected(http, t, spectator=True) as clients:
        assert clients[0].table["hints"] is True
        on_turn = clients[0].view["current_player"]
        asker = clients[on_turn]
        event = asker.state["event"]
        legal = asker.view["legal_actions"]
        asker.ws.send_json({"type": "hint", "seq": 3})
        before_hint = []
        hint = asker.until(lambda m: before_hint.append(m) or m["type"] == "hint")
        assert hint["seq"] == 3 and hint["event"] == event
        assert hint["action"] in legal
        for lang in ("en", "de"):
            line = render(hint["why"], lang)
            assert line and "{" not in line
        # every client, the asker and the spectator too, is told who asked; only the asker
        # gets the hint: the others' next messages are the notice, then the next state
        told = {"type": "hint asked", "seat": on_turn, "name": SEATS[on_turn]["name"]}
        assert told in before_hint  # the asker hears it too, before the hint comes
        for i, c in enumerate(clients):
            if i != on_turn:
                assert c.until(lambda m: m["type"] == "hint asked") == told
        asker.send_action(hint["action"])
        for i, c in enumerate(clients):
            if i == on_turn:
                c.until_event(event + 1)
                continue
            seen = []
            while c.state["event"] < event + 1:
                seen.append(c.recv())
            assert all(m["type"] != "hint" for m in seen)
        # the seat that acted is no longer on turn: its next ask is refused, nothing changes
        if clients[0].view["current_player"] != on_turn:
            asker.ws.send_json({"type": "hint"})
            assert asker.next_error()["rule"] == "hint turn"
        spectator = clients[3]
        spectator.ws.send_json({"type": "hint"})
        assert spectator.next_error()["rule"] == "spectator"


def test_a_table_without_hints_refuses_and_stays(http):
    t = table(http, False)
    with connected(http, t) as clients:
        assert clients[0].table["hints"] is False
        asker = clients[clients[0].view["current_player"]]
        event = asker.state["event"]
        asker.ws.send_json({"type": "hint"})
        error = asker.next_error()
        assert error["rule"] == "hints"
        assert http.get(f"/api/tables/{t['id']}").json()["events"] == event


def test_hints_too_fast_are_refused(tmp_path):
    app = create_app(f"sqlite:///{tmp_path / 'st.sqlite'}", bot_delay=0, deal_pause=1000,
                     limits=ServerLimits(hint_rate=0.001, hint_burst=1.0))
    with TestClient(app) as http:
        t = table(http, True)
        with connected(http, t) as clients:
            asker = clients[clients[0].view["current_player"]]
            asker.ws.send_json({"type": "hint"})
            asker.until(lambda m: m["type"] == "hint")
            asker.ws.send_json({"type": "hint"})
            assert asker.next_error()["rule"] == "hint rate"


def test_the_lobby_says_whether_a_listed_table_gives_hints(http):
    seats = [{"name": "Anna"}, {"name": "Bernd", "open": True}, {"name": "Carla", "bot": "random"}]
    made = {}
    for hints in (True, False):
        r = http.post("/api/tables", json={"ruleset": "tippen/grupp-1975", "seats": seats, "listed": True,
                                           "hints": hints})
        assert r.status_code == 201, r.text
        made[r.json()["id"]] = hints
    listed = {x["id"]: x["hints"] for x in http.get("/api/tables").json()["tables"]}
    assert listed == made


def test_a_hint_counts_for_the_address_that_asks_not_the_tables_creator(tmp_path, monkeypatch):
    """A stranger from the lobby asks at a listed practice table: his hint takes his own turn at
    the search bots' worker and his own allowance of hints, not the creator's; two seats played
    from one address share that address's allowance."""
    app = create_app(f"sqlite:///{tmp_path / 'st.sqlite'}", bot_delay=0, deal_pause=1000,
                     limits=ServerLimits(hint_rate=0.001, hint_burst=1.0))
    owners: list[str] = []

    async def advise(deal, seat, seed, owner="", table=None):
        owners.append(owner)
        return {"action": "pass", "why": {"key": "hint.no_card"}}

    with TestClient(app) as http, TestClient(app, client=("10.0.0.7", 5000)) as stranger:
        monkeypatch.setattr(app.state.manager.thinker, "advise", advise)
        seats = [{"name": "Anna"}, {"name": "Bernd"}, {"name": "Carla", "open": True}]
        r = http.post("/api/tables", json={"ruleset": "tippen/grupp-1975", "seats": seats, "listed": True,
                                           "hints": True})
        t = r.json()
        took = stranger.post(f"/api/tables/{t['id']}/take", json={"seat": 2}).json()
        with ExitStack() as stack:
            clients = {i: WsClient(stack.enter_context(ws_connect(
                http, t['id'], t['seats'][i]['token']))) for i in (0, 1)}
            clients[2] = WsClient(stack.enter_context(ws_connect(
                stranger, t['id'], took['token'])))
            for c in clients.values():
                c.until(is_state)
            # started once the stranger is there: until his page connects, a stand-in plays
            # the seat he took (it was a free seat), and could take his first turn
            assert http.post(f"/api/tables/{t['id']}/start",
                             json={"token": t["admin_token"]}).status_code == 200
            for c in clients.values():
                c.until(lambda m: is_state(m) and m["table"]["in_deal"])
            answers: dict[int, dict] = {}  # per seat: its answer to its first hint
            while len(answers) < 3:  # each seat asks when it is first on turn (the first round
                on_turn = clients[0].view["current_player"]  # of tap or pass)
                me = clients[on_turn]
                if on_turn not in answers:
                    me.ws.send_json({"type": "hint"})
                    answers[on_turn] = me.until(lambda m: m["type"] in ("hint", "error"))
                before = me.state["event"]
                # pass where it may: two taps could end the round before the third seat's turn
                legal = me.view["legal_actions"]
                me.send_action("pass" if "pass" in legal else legal[0])
                for c in clients.values():
                    c.until_event(before + 1)
        order = list(answers)
        first, second = [seat for seat in order if seat != 2]  # the creator's two seats
        assert answers[2]["type"] == "hint"  # the stranger's: his own allowance
        assert answers[first]["type"] == "hint"
        assert answers[second]["type"] == "error" and answers[second]["rule"] == "hint rate"
        # each hint asked the worker in the name of the address that asked
        assert owners == ["10.0.0.7" if seat == 2 else "testclient" for seat in order if seat != second]
