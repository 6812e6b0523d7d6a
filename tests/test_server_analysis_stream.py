"""The Analysis in parts (GET /api/tables/{id}/analysis/{n} with ``Accept: application/x-ndjson``):
the verdict on the cards played comes before the whole analysis is computed, each part holds no
card its reader was not shown, and the request counts once against the rate limits."""

from __future__ import annotations

import asyncio
import json
import random
import threading
from typing import Any

from seen_helpers import cards_in, readers, shown_per_deal
from server_helpers import HANG, bearer, create_table, roomy_limits, stored_record

from stammtisch.i18n import render
from stammtisch.server.analysis import analyse_deal

HUMANS = [{"name": "Anna"}, {"name": "Bernd"}, {"name": "Carla"}]
NDJSON = {"accept": "application/x-ndjson"}


class SlowAnalyst:
    """The app's Analyst with the whole analysis held back until the test lets it go: the first
    part (the cards played) is there at once; ``begun`` counts the analyses begun."""

    def __init__(self, real: Any, play: Any, whole: Any) -> None:
        self.real, self.play, self.whole = real, play, whole
        self.release = threading.Event()
        self.begun = 0

    def cached(self, table_id: str, deal: int) -> Any:
        return None

    def begin(self, table_id: str, deal: int, record: dict, owner: str = "", cost: float = 1.0,
              staged: bool = False) -> tuple[asyncio.Future[Any], asyncio.Future[Any]]:
        self.begun += 1
        loop = asyncio.get_running_loop()
        first, whole = loop.create_future(), loop.create_future()
        first.set_result(self.play)
        waiter = threading.Thread(target=lambda: (self.release.wait(HANG),
                                                  loop.call_soon_threadsafe(whole.set_result, self.whole)),
                                  daemon=True)
        waiter.start()
        return (first if staged else whole), whole

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def _finished_deal(http: Any) -> tuple[dict, dict]:
    """A Tippen table of three humans whose first deal has been played out (everyone taps,
    then random legal actions), and its full record."""
    t = create_table(http, seats=HUMANS)
    assert http.post(f"/api/tables/{t['id']}/start", json={"token": t["admin_token"]}).status_code == 200
    live = http.app.state.manager.get(t["id"])
    rng = random.Random(5)
    while live.table.in_deal:
        seat = live.table.state.current_player()
        legal = live.view(seat)["legal_actions"]
        http.portal.call(live.act, seat, "tap" if "tap" in legal else rng.choice(legal))
    return t, stored_record(http, t["id"])


def test_the_verdict_comes_before_the_whole_analysis_and_names_no_hidden_card(tmp_path):
    from fastapi.testclient import TestClient

    from stammtisch.server.app import create_app

    app = create_app(f"sqlite:///{tmp_path / 'st.sqlite'}", bot_delay=0, deal_pause=1000,
                     limits=roomy_limits(analyses_per_minute=0.001, analysis_burst=2))
    with TestClient(app) as http:
        t, record = _finished_deal(http)
        shown = shown_per_deal(record)[0]
        server = app.state.server
        slow = SlowAnalyst(server.analyst, analyse_deal(record, 1, "play"), analyse_deal(record, 1))
        server.analyst = slow
        url = f"/api/tables/{t['id']}/analysis/1"
        tokens = {None: t["spectator"]["token"], **{i: s["token"] for i, s in enumerate(t["seats"])}}
        with http.stream("GET", url, headers={**bearer(tokens[0]), **NDJSON}) as r:
            assert r.status_code == 200 and r.headers["content-type"].startswith("application/x-ndjson")
            lines = r.iter_lines()
            first = json.loads(next(lines))
            assert not slow.release.is_set()  # the whole analysis is still being computed
            assert first["part"] == "play" and first["decisions"] == [] and first["par"] is None
            verdict = render(first["lines"][0])
            assert verdict.startswith("Deal 1, Tippen: ") and "still being judged" in verdict
            assert cards_in(first) <= shown[0]
            slow.release.set()
            whole = json.loads(next(lines))
            assert whole["part"] == "all" and whole["decisions"] and "still" not in render(whole["lines"][0])
            assert cards_in(whole) <= shown[0]
        assert slow.begun == 1
        # the rate limit (a burst of two a token) counted that request once: one more is let
        # through (whole at once, its analysis no longer held back), the next refused
        r = http.get(url, headers={**bearer(tokens[0]), **NDJSON})
        assert r.status_code == 200 and json.loads(r.text.splitlines()[-1])["part"] == "all"
        r = http.get(url, headers={**bearer(tokens[0]), **NDJSON})
        assert r.status_code == 429 and r.json()["rule"] == "analysis rate"
        # the real analyst keeps what it computed: asked again (a first part, then the whole)
        server.analyst = slow.real
        for reader, token in tokens.items():
            server.analyst._done[(t["id"], 1)] = slow.whole
            r = http.get(url, headers={**bearer(token), **NDJSON})
            parts = [json.loads(line) for line in r.text.splitlines()]
            assert [p["part"] for p in parts] == ["all"]  # kept: whole at once, not counted
            assert cards_in(parts[0]) <= shown[reader]


def test_each_reader_reads_the_first_part_without_a_card_he_was_not_shown():
    """The first part is read per reader as the whole is (analysis/seen.py)."""
    from seen_helpers import random_deal

    from stammtisch.record import table_to_record
    from stammtisch.rules import ruleset
    from stammtisch.table import Table

    checked = 0
    for seed in range(40):
        rng = random.Random(seed)
        table = Table(ruleset("tippen/grupp-1975", {"players": 3}), ["P0", "P1", "P2"], 0)
        random_deal(table, rng)
        record = table_to_record(table)
        play = analyse_deal(record, 1, "play")
        if play.analysis is None:
            continue
        shown = shown_per_deal(record)[0]
        for reader in readers(3):
            answer = play.read_by(reader)
            assert cards_in(answer) <= shown[reader], (reader, sorted(cards_in(answer) - shown[reader]))
        checked += 1
        if checked >= 3:
            break
    assert checked >= 3
