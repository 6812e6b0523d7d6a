"""What the web table tells a player beyond the view: the menu entries of his choices (goal and
value of a contract, from the same place the terminal takes them), the pace between deals (the
next deal waits for every seated player), past deals as he saw them, and the bid to beat."""

from __future__ import annotations

import random

import pytest
from fastapi.testclient import TestClient
from server_helpers import WsClient, bearer, create_table, sync, ws_connect

from stammtisch.engine_facts import choice_message_for
from stammtisch.i18n import render
from stammtisch.rules import ruleset
from stammtisch.server.app import create_app
from stammtisch.server.limits import ServerLimits
from stammtisch.server.records import redacted_record

pytestmark = pytest.mark.timeout(300)


@pytest.fixture()
def http(tmp_path):
    app = create_app(f"sqlite:///{tmp_path / 'st.sqlite'}", bot_delay=0, deal_pause=1000,
                     limits=ServerLimits(pace_min=1))
    with TestClient(app) as client:
        yield client


def start(http, t):
    assert http.post(f"/api/tables/{t['id']}/start", json={"token": t["admin_token"]}).status_code == 200


def connect(http, t, token):
    return ws_connect(http, t["id"], token)


def is_state(m):
    return m["type"] == "state"


def play_out(http, t, clients, rng, bot_seats, stop):
    """The connected seats play random legal actions (bots theirs) until ``stop(message)``."""
    for _ in range(500):
        sync(http, t["id"], list(clients.values()), bot_seats)
        first = next(iter(clients.values()))
        if stop(first.state):
            return first.state
        view = first.view
        if view["terminal"]:
            raise AssertionError("the deal ended before the stop")
        me = clients.get(view["current_player"])
        if me is not None:
            before = me.state["event"]
            me.send_action(rng.choice(me.view["legal_actions"]))
            me.until_event(before + 1)
    raise AssertionError("never stopped")


def test_the_seat_on_turn_gets_its_choices_in_words_with_goal_and_value(http):
    """In the auction the seat on turn's state message carries a menu entry per legal action,
    rendered by the page as the terminal renders the same messages: a contract names its goal
    and its value in the table's unit. In the play phase (cards) none: the page names cards."""
    t = create_table(http, ruleset="tapp/modern", options={"frage_value": "10"},
                     seats=[{"name": "Anna"}, {"name": "Bernd"}, {"name": "Carla"}])
    start(http, t)
    rules = ruleset("tapp/modern", {"frage_value": 10, "players": 3})
    clients = {}
    with connect(http, t, t["seats"][0]["token"]) as w0, connect(http, t, t["seats"][1]["token"]) as w1, \
            connect(http, t, t["seats"][2]["token"]) as w2:
        for seat, w in enumerate((w0, w1, w2)):
            clients[seat] = WsClient(w)
            clients[seat].until(is_state)
        rng = random.Random(1)
        seen_contract = False
        for _ in range(30):
            on_turn = clients[clients[0].view["current_player"]]
            m = on_turn.state
            for c in clients.values():
                if c is not on_turn:
                    assert "choices" not in c.state  # only the seat on turn
            view = m["view"]
            if view["phase"] == "play":
                assert "choices" not in m
                break
            choices = m["choices"]
            assert len(choices) == len(view["legal_actions"])
            for action, choice in zip(view["legal_actions"], choices, strict=True):
                assert choice == choice_message_for(rules, action)
                if action.startswith("contract:") and action != "contract:pass":
                    seen_contract = True
                    assert "cents" in render(choice, "en") and "Cent" in render(choice, "de")
            if "contract:frage" in view["legal_actions"]:  # the table's own Frage value
                frage = choices[view["legal_actions"].index("contract:frage")]
                assert render(frage, "en").endswith("; 10 cents from each defender")
            action = next((a for a in view["legal_actions"] if a in ("play", "contract:herzsolo")),
                          rng.choice(view["legal_actions"]))
            before = m["event"]
            on_turn.send_action(action)
            for c in clients.values():
                c.until_event(before + 1)
        assert seen_contract


def test_the_next_deal_waits_for_every_seated_player(http):
    t = create_table(http, seats=[{"name": "Anna"}, {"name": "Bernd"}, {"name": "Robo", "bot": "random"}])
    start(http, t)
    with connect(http, t, t["seats"][1]["token"]) as w1:
        bernd = WsClient(w1)
        with connect(http, t, t["seats"][0]["token"]) as w0:
            anna = WsClient(w0)
            bernd.until(is_state)
            done = play_out(http, t, {0: anna, 1: bernd}, random.Random(2), (2,),
                            lambda m: m["view"]["terminal"])
            assert done["table"]["pace"] == "wait" and done["table"]["next_deal_at"] is None
            w1.send_json({"type": "next"})
            ready = anna.until(lambda m: is_state(m) and m["table"]["next_ready"] == [1])
            assert ready["table"]["deal_number"] == 1 and ready["view"]["terminal"]  # the result stays
        # Bernd pressed; Anna leaves instead: nobody holds the next deal up any more
        bernd.until(lambda m: is_state(m) and m["table"]["deal_number"] == 2 and m["table"]["next_ready"] == [])


def test_a_table_may_ask_for_a_pace_and_a_table_of_bots_keeps_the_server_s(http):
    seats = [{"name": "Anna"}, {"name": "Robo", "bot": "random"}, {"name": "Rita", "bot": "random"}]
    bots = [{"name": "A", "bot": "random"}, {"name": "B", "bot": "random"}, {"name": "C", "bot": "random"}]
    r = http.post("/api/tables", json={"ruleset": "tippen/grupp-1975", "seats": seats, "pace": 100})
    assert r.status_code == 400 and r.json()["rule"] == "pace"
    r = http.post("/api/tables", json={"ruleset": "tippen/grupp-1975", "seats": bots, "pace": "wait"})
    assert r.status_code == 400 and r.json()["rule"] == "pace"
    assert http.get(f"/api/tables/{create_table(http, seats=bots)['id']}").json()["pace"] == 1000
    t = http.post("/api/tables", json={"ruleset": "tippen/grupp-1975", "seats": seats, "pace": 5}).json()
    start(http, t)
    with connect(http, t, t["seats"][0]["token"]) as w0:
        anna = WsClient(w0)
        anna.until(is_state)
        done = play_out(http, t, {0: anna}, random.Random(3), (1, 2), lambda m: m["view"]["terminal"])
        assert done["table"]["pace"] == 5 and done["table"]["next_deal_at"] is not None
        w0.send_json({"type": "next"})  # at a timed table Next deals at once
        anna.until(lambda m: is_state(m) and m["table"]["deal_number"] == 2)


def test_a_past_deal_is_reopened_as_the_seat_saw_it(http):
    t = create_table(http, seats=[{"name": "Anna"}, {"name": "Robo", "bot": "random"},
                                  {"name": "Rita", "bot": "random"}])
    start(http, t)
    tid = t["id"]
    with connect(http, t, t["seats"][0]["token"]) as w0:
        anna = WsClient(w0)
        anna.until(is_state)
        rng = random.Random(4)
        ends = []
        for deal in (1, 2):
            ends.append(play_out(http, t, {0: anna}, rng, (1, 2), lambda m: m["view"]["terminal"]))
            if deal == 1:
                r = http.get(f"/api/tables/{tid}/deals/2", headers=bearer(t["seats"][0]["token"]))
                assert r.status_code == 409 and r.json()["rule"] == "deal in progress"
                w0.send_json({"type": "next"})
                anna.until(lambda m: is_state(m) and m["table"]["deal_number"] == 2)
    assert http.get(f"/api/tables/{tid}/deals/1").status_code == 403
    st = http.app.state.storage.load_table(tid)
    for token, seat in ((t["seats"][0]["token"], 0), (t["spectator"]["token"], None), (t["admin_token"], None)):
        got = http.get(f"/api/tables/{tid}/deals/1", headers=bearer(token))
        assert got.status_code == 200, got.text
        deal = got.json()
        assert deal["deal"] == 1 and deal["players"] == ["Anna", "Robo", "Rita"]
        assert deal["view"] == redacted_record(st, seat)["deals"][0]["view"]  # what it saw, no more
        if seat == 0:
            assert deal["view"]["hand"] == ends[0]["view"]["hand"]
    deal = http.get(f"/api/tables/{tid}/deals/1", headers=bearer(t["seats"][0]["token"])).json()
    assert deal["explanation"] and all("key" in line for line in deal["explanation"])
    played = [(seat, action[5:]) for seat, action in deal["view"]["log"] if action.startswith("play:")]
    assert [tuple(card) for trick in deal["tricks"] for card in trick["cards"]] == played
    assert all(trick["leader"] == trick["cards"][0][0] for trick in deal["tricks"])


def test_the_bid_to_beat_is_in_every_seat_s_view_of_a_tapp_auction():
    from stammtisch.table import Table

    rules = ruleset("tapp/classic-1879")
    table = Table(rules, ["A", "B", "C"], 0)
    table.start_deal(table.game.deck_from_strings(list(table.game.pack.cards)))
    state = table.state
    assert state.view(None)["standing"] is None
    forehand = state.current_player()
    state.apply(state.string_to_action("bid:frage"))
    assert all(state.view(s)["standing"] == {"seat": forehand, "bid": "bid:frage"} for s in (None, 0, 1, 2))
    over = state.current_player()
    state.apply(state.string_to_action("bid:solo"))
    assert state.view(None)["standing"] == {"seat": over, "bid": "bid:solo"}
    state.apply(state.string_to_action("hold"))  # forehand holds the solo
    assert state.view(None)["standing"] == {"seat": forehand, "bid": "bid:solo"}


def test_tippen_tables_may_show_german_suits():
    rules = ruleset("tippen/grupp-1975", {"suits": "german"})
    assert rules.suits == "german"
    assert render(choice_message_for(rules, "play:CQ"), "de") == "Eichel-Ober spielen"
    assert render(choice_message_for(ruleset("tippen/grupp-1975"), "play:CQ"), "de") == "Kreuz-Dame spielen"
