"""Deal keys: a deal's actions are rows of ``st_moves`` keyed by (deal key, idx); the deals of a
database from before deal keys keep theirs in ``st_actions``, and both load as one record."""

from __future__ import annotations

import asyncio
import json

import pytest
from sqlalchemy import inspect, text

from stammtisch.server.limits import ServerLimits
from stammtisch.server.spill import Spill
from stammtisch.server.storage import Storage, StoredSeat
from stammtisch.server.tables import TableManager


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'st.sqlite'}"
    return request.getfixturevalue("postgres_url")


def new_table(storage: Storage, table_id: str) -> None:
    storage.create_table(table_id, "tippen/grupp-1975", {"players": 3},
                         [StoredSeat(i, f"p{i}", None, None) for i in range(3)], "a", "s")


def count(storage: Storage, sql: str) -> int:
    with storage.engine.connect() as conn:
        return int(conn.execute(text(sql)).scalar() or 0)


def test_a_live_table_writes_its_actions_as_moves_of_its_deal_and_reloads_them(tmp_path):
    """Played through ``LiveTable``: every action is a row of ``st_moves`` under the key of its
    deal (one key per deal, rising), none goes to ``st_actions``; the table loads with the same
    decks and actions, and a rebuilt table goes on with the latest deal's key."""
    url = f"sqlite:///{tmp_path / 'st.sqlite'}"

    async def play() -> tuple[str, list, list[int]]:
        storage = Storage(url)
        manager = TableManager(storage, bot_delay=0, deal_pause=1000,
                               limits=ServerLimits(commit_window=0.0))
        made = await manager.create("tippen/grupp-1975", {"players": 3},
                                    [("a", None), ("b", None), ("c", None)])
        live = made["table"]
        await live.start()
        keys = [live.deal_key]
        for _ in range(40):  # through a few deals
            t = live.table
            if not t.in_deal:
                await live.next_deal()
                keys.append(live.deal_key)
                continue
            st = t.state
            await live.act(st.current_player(), st.action_to_string(st.legal_actions()[0]))
        live.cancel_pending()
        deals = [(deck, actions) for deck, actions in storage.load_table(live.id).deals]
        storage.close()
        return live.id, deals, keys

    table_id, deals, keys = asyncio.run(play())
    assert len(keys) >= 3 and keys == sorted(set(keys)) and None not in keys
    storage = Storage(url)
    assert count(storage, "SELECT COUNT(*) FROM st_actions") == 0
    assert count(storage, "SELECT COUNT(*) FROM st_moves") == sum(len(a) for _, a in deals) > 0
    with storage.engine.connect() as conn:
        stored_keys = [r[0] for r in conn.execute(text(
            "SELECT deal_key FROM st_deals WHERE table_id = :t ORDER BY number"), {"t": table_id})]
    assert stored_keys == keys
    st = storage.load_table(table_id)
    assert st is not None and st.deals == deals and st.last_deal_key == keys[-1]
    manager = TableManager(storage, bot_delay=0, deal_pause=1000)
    manager.load_all()
    assert manager.tables[table_id].deal_key == keys[-1]
    assert storage.new_deal_key() == keys[-1] + 1
    storage.close()


def test_a_database_from_before_deal_keys_gains_them_and_keeps_its_deals(tmp_path):
    """An SQLite file made before deal keys (no ``st_deals.deal_key``, no ``st_moves``): the
    storage adds both, the old deal's actions load from ``st_actions``, a deal started before
    the upgrade goes on there, and a new deal's moves load after it in order."""
    url = f"sqlite:///{tmp_path / 'old.sqlite'}"
    storage = Storage(url)
    new_table(storage, "t1")
    storage.write_batch([storage.deal_row("t1", 0, ["x"]),
                         storage.action_row("t1", 0, 0, 1, "tap"),
                         storage.action_row("t1", 0, 1, 2, "pass")])
    with storage.engine.begin() as conn:  # as the schema was
        conn.exec_driver_sql("DROP TABLE st_moves")
        conn.exec_driver_sql("ALTER TABLE st_deals DROP COLUMN deal_key")
        conn.exec_driver_sql("DROP TABLE st_schema")  # the servers before kept no version
    storage.close()

    storage = Storage(url)
    tables = inspect(storage.engine).get_table_names()
    assert "st_moves" in tables
    assert "deal_key" in {c["name"] for c in inspect(storage.engine).get_columns("st_deals")}
    old = storage.load_table("t1")
    assert old is not None and old.deals == [(["x"], [(1, "tap"), (2, "pass")])]
    assert old.last_deal_key is None  # the deal goes on with action rows
    key = storage.new_deal_key()
    assert key == 1
    storage.write_batch([storage.action_row("t1", 0, 2, 0, "pass"),
                         storage.deal_row("t1", 1, ["y"], key),
                         storage.move_row(key, "t1", 1, 0, 1, "tap"),
                         storage.move_row(key, "t1", 1, 1, 2, "exchange:2")], now=True)
    st = storage.load_table("t1")
    assert st is not None and st.last_deal_key == key
    assert st.deals == [(["x"], [(1, "tap"), (2, "pass"), (0, "pass")]),
                        (["y"], [(1, "tap"), (2, "exchange:2")])]
    storage.close()


def test_moves_already_in_are_recognised_and_skipped_by_the_spill_drain(database_url):
    """On both databases: a move is "already written" only with the same seat and action, a
    second move with its key is refused, and the drain inserts only the moves missing."""
    storage = Storage(database_url)
    new_table(storage, "t1")
    key = storage.new_deal_key()
    first = [storage.deal_row("t1", 0, ["x"], key), storage.move_row(key, "t1", 0, 0, 1, "tap")]
    storage.write_batch(first)
    assert storage._already_written(*first[1])
    assert not storage._already_written("move", {**first[1][1], "action": "pass"})
    with pytest.raises(Exception, match="UNIQUE constraint|duplicate key"):
        storage.write_batch([storage.move_row(key, "t1", 0, 0, 2, "pass")])
    later = storage.move_row(key, "t1", 0, 1, 2, "pass")
    storage.write_missing([*first, later])
    storage.write_missing([*first, later])
    st = storage.load_table("t1")
    assert st is not None and st.deals == [(["x"], [(1, "tap"), (2, "pass")])]
    storage.close()


def test_deal_keys_start_above_every_key_the_database_holds(tmp_path):
    """Keys read at start-up are above the deals' and the moves' keys (a move's deal may be
    in a later group of the spill file), and each new deal gets a new one."""
    url = f"sqlite:///{tmp_path / 'st.sqlite'}"
    storage = Storage(url)
    new_table(storage, "t1")
    storage.write_batch([storage.deal_row("t1", 0, ["x"], 5),
                         storage.move_row(12, "t1", 0, 0, 1, "tap")])
    storage.close()
    storage = Storage(url)
    storage.read_deal_keys()
    assert [storage.new_deal_key() for _ in range(3)] == [13, 14, 15]
    storage.close()


def test_an_old_spill_file_s_deal_rows_are_read_without_a_key(tmp_path):
    """A spill file written before deal keys: its deal rows lack ``deal_key``; read, they have
    none, and their actions go to ``st_actions`` as they were written."""
    spill = Spill(tmp_path / "old.spill")
    lines = [["deal", {"table_id": "t1", "number": 0, "deck": json.dumps(["x"]), "created": 1.0}],
             ["action", {"table_id": "t1", "deal": 0, "idx": 0, "seat": 1, "action": "tap",
                         "created": 1.0}]]
    spill.path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    rows = spill.read()
    assert rows[0] == ("deal", {**lines[0][1], "deal_key": None})
    storage = Storage(f"sqlite:///{tmp_path / 'st.sqlite'}")
    new_table(storage, "t1")
    storage.write_missing(rows)
    st = storage.load_table("t1")
    assert st is not None and st.deals == [(["x"], [(1, "tap")])] and st.last_deal_key is None
    storage.close()
