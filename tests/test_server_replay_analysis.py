"""A record file's deal analysed by the server (``POST /api/replay/analysis``): the full record
answered whole; a redacted one, a broken one and one too large refused with what is wrong;
under the analyses' limits per address; an answer only ever about the record sent."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path

from fastapi.testclient import TestClient

from stammtisch.server.app import create_app
from stammtisch.server.limits import ServerLimits

RECORD = Path(__file__).parent / "records" / "rules-2.4-example-6-max-bete-dreiblatt-1859.json"
URL = "/api/replay/analysis"


def full_record() -> dict:
    return json.loads(RECORD.read_text(encoding="utf-8"))


def client(tmp_path, **limits) -> TestClient:
    return TestClient(create_app(f"sqlite:///{tmp_path / 'st.sqlite'}", bot_delay=0.0, deal_pause=1000.0,
                                 limits=replace(ServerLimits(), **limits)))


def played_deal(record: dict) -> int:
    """The first deal (1-based) that came to its cards."""
    return next(i + 1 for i, d in enumerate(record["deals"])
                if any(str(a.get("action") if isinstance(a, dict) else a).startswith("play:")
                       for a in d["actions"]))


def actions_of(record: dict, deal: int) -> list[str]:
    return [a["action"] if isinstance(a, dict) else a for a in record["deals"][deal - 1]["actions"]]


def test_a_full_record_is_analysed_whole_and_the_answer_is_about_that_record(tmp_path):
    record = full_record()
    deal = played_deal(record)
    with client(tmp_path) as http:
        r = http.post(URL, json={"record": record, "deal": deal})
        assert r.status_code == 200, r.text
        found = r.json()
        assert found["played"] and found["deal"] == deal and found["players"] == record["players"]
        assert found["measure"] == "own-tricks" and isinstance(found["start_value"], dict)
        # every card played, in order, as the record has them; each with every seat's value
        plays = [a for a in actions_of(record, deal) if a.startswith("play:")]
        assert [p["action"] for p in found["plays"]] == plays
        assert all(set(p["values"]) == set(found["start_value"]) for p in found["plays"])
        assert found["lines"]
        # another record (other names, another deck) is analysed for itself, not answered
        # with the one kept
        other = copy.deepcopy(record)
        other["players"] = ["Xaver", "Yvonne", "Zenzi", "Wastl"][:len(record["players"])]
        if isinstance(other.get("first_dealer"), str):
            other["first_dealer"] = other["players"][record["players"].index(record["first_dealer"])]
        for d in other["deals"]:
            for a in d["actions"]:
                if isinstance(a, dict):
                    a["player"] = other["players"][record["players"].index(a["player"])]
        r = http.post(URL, json={"record": other, "deal": deal})
        assert r.status_code == 200, r.text
        assert r.json()["players"] == other["players"]
        assert "Anna" not in json.dumps(r.json())
        # a deal later than the record holds
        r = http.post(URL, json={"record": record, "deal": len(record["deals"]) + 1})
        assert r.status_code == 400 and r.json()["rule"] == "no such deal"


def test_a_redacted_record_is_refused_as_one(tmp_path):
    redacted = {"format": "stammtisch-redacted/1", "ruleset": "tippen/grupp-1975", "options": {},
                "players": ["Anna", "Ben", "Cora"], "seat": 0, "deals": [{"view": {}}]}
    with client(tmp_path) as http:
        r = http.post(URL, json={"record": redacted, "deal": 1})
        assert r.status_code == 400
        assert r.json()["rule"] == "redacted record"
        assert "redacted record" in r.json()["error"]


def test_a_broken_record_is_refused_with_what_is_wrong_never_a_traceback(tmp_path):
    record = full_record()
    deal = played_deal(record)
    bad_deck = copy.deepcopy(record)
    bad_deck["deals"][0]["deck"][0] = "Q9"
    bad_action = copy.deepcopy(record)
    acts = bad_action["deals"][deal - 1]["actions"]
    last = len(acts) - 1
    if isinstance(acts[last], dict):
        acts[last]["action"] = "play:XX"
    else:
        acts[last] = "play:XX"
    huge_option = {**copy.deepcopy(record), "options": {"stake": "9" * 30}}
    with client(tmp_path) as http:
        for broken, words in ((bad_deck, "bad deck"), (bad_action, f"deal {deal}"),
                              ({**record, "format": "something/2"}, "unknown record format"),
                              ({**record, "players": "Anna"}, "'players'"),
                              (huge_option, "option")):
            r = http.post(URL, json={"record": broken, "deal": deal})
            assert r.status_code == 400, r.text
            assert r.json()["rule"] and words in r.json()["error"], r.text
            assert "Traceback" not in r.text
        for body in ({"record": "not a record", "deal": 1}, {"record": record, "deal": 0}, [1, 2]):
            r = http.post(URL, json=body)
            assert r.status_code == 422 and r.json()["rule"] == "invalid", r.text
        r = http.post(URL, content=b"{not json", headers={"content-type": "application/json"})
        assert r.status_code == 422 and "Traceback" not in r.text


def test_a_record_file_may_be_larger_than_other_requests_up_to_its_own_limit(tmp_path):
    record = full_record()
    deal = played_deal(record)
    body = json.dumps({"record": record, "deal": deal}).encode()
    with client(tmp_path, max_body=1024, max_record_body=len(body) + 10) as http:
        r = http.post(URL, content=body, headers={"content-type": "application/json"})
        assert r.status_code == 200, r.text
        r = http.post("/api/replay", content=body, headers={"content-type": "application/json"})
        assert r.status_code == 200, r.text
        # other requests keep the smaller limit
        r = http.post("/api/tables", content=b" " * 2000, headers={"content-type": "application/json"})
        assert r.status_code == 413
        padded = json.dumps({"record": {**record, "note": "x" * 100}, "deal": deal}).encode()
        for url in (URL, "/api/replay"):
            r = http.post(url, content=padded, headers={"content-type": "application/json"})
            assert r.status_code == 413, r.text
            assert r.json()["rule"] == "size" and r.json()["max_bytes"] == len(body) + 10


def test_record_analyses_take_from_the_addresss_allowance_of_analyses(tmp_path):
    record = full_record()
    with client(tmp_path, analyses_per_minute_per_address=0.001, analysis_burst_per_address=2) as http:
        for deal in (1, 2):
            r = http.post(URL, json={"record": record, "deal": deal})
            assert r.status_code == 200, r.text
        r = http.post(URL, json={"record": record, "deal": 3})
        assert r.status_code == 429 and r.json()["rule"] == "analysis rate", r.text
        # a kept analysis costs nothing
        r = http.post(URL, json={"record": record, "deal": 2})
        assert r.status_code == 200, r.text
