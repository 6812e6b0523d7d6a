"""The web table's database across versions: a new database is made at the latest schema, an
older one is brought up to it once at start-up (on SQLite and PostgreSQL), a newer one is
refused."""

from __future__ import annotations

import asyncio
import json

import pytest
from sqlalchemy import inspect, text

from stammtisch.server.limits import ServerLimits
from stammtisch.server.migrations import LATEST, VERSION_TABLE
from stammtisch.server.storage import Storage, StoredSeat, StoredSocial


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'st.sqlite'}"
    return request.getfixturevalue("postgres_url")


def version(storage: Storage) -> int:
    with storage.engine.connect() as conn:
        return int(conn.execute(text(f"SELECT version FROM {VERSION_TABLE}")).scalar_one())


def test_a_new_database_is_made_at_the_latest_version(database_url):
    storage = Storage(database_url)
    assert version(storage) == LATEST
    columns = {c["name"] for c in inspect(storage.engine).get_columns("st_table_social")}
    assert {"creator", "lobby_seats", "humans", "rematch_claimed", "pace", "hints",
            "evening"} <= columns
    storage.close()
    storage = Storage(database_url)  # opened again: nothing to do
    assert version(storage) == LATEST
    storage.close()


def test_a_database_from_before_versions_is_migrated_once(database_url):
    """A database of the servers before (no version, no owner columns) whose listed table
    has an open seat with a link its creator was given: the seat becomes the lobby's and that
    link stops working; the other seats keep theirs."""
    storage = Storage(database_url)
    storage.create_table("t1", "tippen/grupp-1975", {"players": 3},
                         [StoredSeat(0, "Anna", None, "d0"), StoredSeat(1, "Gast", None, "d1"),
                          StoredSeat(2, "Carla", "random", None)], "admin", "spectator",
                         social=StoredSocial(listed=True, open_seats=[1]))
    with storage.engine.begin() as conn:  # as the schema was
        conn.execute(text(f"DROP TABLE {VERSION_TABLE}"))
        for column in ("creator", "lobby_seats", "humans", "rematch_claimed", "pace", "hints"):
            conn.execute(text(f"ALTER TABLE st_table_social DROP COLUMN {column}"))
    storage.close()

    storage = Storage(database_url)
    assert version(storage) == LATEST
    st = storage.load_table("t1")
    assert st is not None
    assert st.social.lobby_seats == [1] and st.social.open_seats == [1]
    assert [s.token_digest for s in st.seats] == ["d0", None, None]
    assert st.social.creator == "" and st.social.humans == [] and st.social.rematch_claimed == []
    assert st.social.pace is None and st.social.hints is False
    storage.set_humans("t1", [0])
    storage.close()
    storage = Storage(database_url)  # the steps ran once: what came after them stays
    st = storage.load_table("t1")
    assert st is not None and st.social.humans == [0]
    storage.close()


def test_a_version_2_database_gains_the_table_choices(database_url):
    """A database at version 2 (owners and lobby seats, no pace or hints yet) gets the
    columns of step 3 and keeps its rows."""
    storage = Storage(database_url)
    storage.create_table("t2", "tippen/grupp-1975", {"players": 3},
                         [StoredSeat(0, "Anna", None, "d0"), StoredSeat(1, "Ben", None, "d1"),
                          StoredSeat(2, "Carla", "random", None)], "admin", "spectator",
                         social=StoredSocial(creator="10.0.0.1"))
    with storage.engine.begin() as conn:
        conn.execute(text(f"UPDATE {VERSION_TABLE} SET version = 2"))
        for column in ("pace", "hints"):
            conn.execute(text(f"ALTER TABLE st_table_social DROP COLUMN {column}"))
    storage.close()
    storage = Storage(database_url)
    assert version(storage) == LATEST
    st = storage.load_table("t2")
    assert st is not None and st.social.creator == "10.0.0.1"
    assert st.social.pace is None and st.social.hints is False
    storage.close()


def test_a_version_5_database_gains_the_rematch_evening(database_url):
    """A database at version 5 (no evening yet) gets the column of step 6 and keeps its
    rows; a table made then has an empty evening, a rematch's evening is stored."""
    storage = Storage(database_url)
    seats = [StoredSeat(0, "Anna", None, "d0"), StoredSeat(1, "Ben", None, "d1"),
             StoredSeat(2, "Carla", "random", None)]
    storage.create_table("t5", "tippen/grupp-1975", {"players": 3}, seats, "admin",
                         "spectator", social=StoredSocial(creator="10.0.0.5", pace="wait"))
    with storage.engine.begin() as conn:
        conn.execute(text(f"UPDATE {VERSION_TABLE} SET version = 5"))
        conn.execute(text("ALTER TABLE st_table_social DROP COLUMN evening"))
    storage.close()
    storage = Storage(database_url)
    assert version(storage) == LATEST
    st = storage.load_table("t5")
    assert st is not None and st.social.creator == "10.0.0.5" and st.social.pace == "wait"
    assert st.social.evening == []
    evening = [{"table": "t5", "deals": 3, "balances": [4, -2, -2]}]
    storage.create_table("t6", "tippen/grupp-1975", {"players": 3}, seats, "admin2",
                         "spectator2", social=StoredSocial(evening=evening,
                                                           chat=[(1, "again?", 1.5, None)], chat_count=1))
    st = storage.load_table("t6")
    assert st is not None and st.social.evening == evening
    assert st.social.chat == [(1, "again?", 1.5, None)] and st.social.chat_count == 1
    storage.close()


def test_a_version_6_database_gains_the_spectators_chat(database_url):
    """A database at version 6 (no spectator lines, no switch) gets the columns of step 7 and
    keeps its lines; its tables let spectators chat, a switch and a spectator's name are kept."""
    storage = Storage(database_url)
    seats = [StoredSeat(0, "Anna", None, "d0"), StoredSeat(1, "Ben", None, "d1"),
             StoredSeat(2, "Carla", "random", None)]
    storage.create_table("t6", "tippen/grupp-1975", {"players": 3}, seats, "admin",
                         "spectator", social=StoredSocial(creator="10.0.0.6"))
    storage.add_chat("t6", 0, 1, "hallo", 1.0)
    with storage.engine.begin() as conn:
        conn.execute(text(f"UPDATE {VERSION_TABLE} SET version = 6"))
        conn.execute(text("ALTER TABLE st_chat DROP COLUMN name"))
        conn.execute(text("ALTER TABLE st_table_social DROP COLUMN spectator_chat"))
    storage.close()
    storage = Storage(database_url)
    assert version(storage) == LATEST
    st = storage.load_table("t6")
    assert st is not None and st.social.creator == "10.0.0.6"
    assert st.social.spectator_chat is True and st.social.chat == [(1, "hallo", 1.0, None)]
    storage.set_spectator_chat("t6", False)
    storage.add_chat("t6", 1, -1, "bravo", 2.0, "Zoë")
    st = storage.load_table("t6")
    assert st is not None and st.social.spectator_chat is False
    assert st.social.chat == [(1, "hallo", 1.0, None), (-1, "bravo", 2.0, "Zoë")]
    storage.close()


def test_a_version_7_database_seats_the_expert_where_ismcts_sat(database_url):
    """The retired ``ismcts`` bot's seats play on as the Expert after step 8; other seats stay."""
    storage = Storage(database_url)
    seats = [StoredSeat(0, "Anna", None, "d0"), StoredSeat(1, "Ben", "ismcts", None),
             StoredSeat(2, "Carla", "random", None)]
    storage.create_table("t7", "tippen/grupp-1975", {"players": 3}, seats, "admin", "spectator")
    with storage.engine.begin() as conn:
        conn.execute(text(f"UPDATE {VERSION_TABLE} SET version = 7"))
    storage.close()
    storage = Storage(database_url)
    assert version(storage) == LATEST == 8
    st = storage.load_table("t7")
    assert st is not None and [s.bot for s in st.seats] == [None, "expert", "random"]
    storage.close()


#: The tables of several processes as the servers before made them (no lease epoch yet, the
#: shared settings in ``st_cluster``), beside the numbered steps.
OLD_PEER_TABLES = (
    "CREATE TABLE st_processes (id TEXT PRIMARY KEY, url TEXT NOT NULL, "
    "heartbeat DOUBLE PRECISION NOT NULL)",
    "CREATE TABLE st_leases (table_id TEXT PRIMARY KEY, owner TEXT NOT NULL, "
    "expires DOUBLE PRECISION NOT NULL)",
    "CREATE TABLE st_cluster (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE st_address_buckets (kind TEXT NOT NULL, address TEXT NOT NULL, "
    "tokens DOUBLE PRECISION NOT NULL, at DOUBLE PRECISION NOT NULL, PRIMARY KEY (kind, address))",
)
PEER_TABLES = {"st_processes", "st_leases", "st_service", "st_address_buckets"}


def test_a_new_database_has_the_tables_of_several_processes(database_url):
    storage = Storage(database_url)
    names = set(inspect(storage.engine).get_table_names())
    assert PEER_TABLES <= names and "st_cluster" not in names
    with storage.engine.begin() as conn:
        conn.execute(text("INSERT INTO st_leases (table_id, owner, expires) VALUES ('t', 'p', 1)"))
        assert conn.execute(text("SELECT epoch FROM st_leases")).scalar_one() == 0
    storage.close()


def test_the_tables_several_processes_made_before_gain_the_epoch_and_keep_their_rows(database_url):
    """A database at version 4 whose processes made their tables themselves, without the
    lease's epoch: the leases get epoch 0, the peer secret moves to ``st_service``, every other
    row stays."""
    storage = Storage(database_url)
    with storage.engine.begin() as conn:
        conn.execute(text(f"UPDATE {VERSION_TABLE} SET version = 4"))
        for name in PEER_TABLES:
            conn.execute(text(f"DROP TABLE {name}"))
        for statement in OLD_PEER_TABLES:
            conn.execute(text(statement))
        conn.execute(text("INSERT INTO st_processes VALUES ('p1', 'http://a:8000', 100.5)"))
        conn.execute(text("INSERT INTO st_leases VALUES ('t1', 'p1', 105.5)"))
        conn.execute(text("INSERT INTO st_cluster VALUES ('peer_secret', 's3cret')"))
        conn.execute(text("INSERT INTO st_address_buckets VALUES ('create', '10.0.0.1', 2.5, 99)"))
    storage.close()

    storage = Storage(database_url)
    assert version(storage) == LATEST
    assert "st_cluster" not in set(inspect(storage.engine).get_table_names())
    with storage.engine.begin() as conn:
        assert conn.execute(text("SELECT * FROM st_processes")).all() == [("p1", "http://a:8000", 100.5)]
        assert conn.execute(text("SELECT table_id, owner, expires, epoch FROM st_leases")).all() == [
            ("t1", "p1", 105.5, 0)]
        assert conn.execute(text("SELECT name, value FROM st_service")).all() == [("peer_secret", "s3cret")]
        assert conn.execute(text("SELECT * FROM st_address_buckets")).all() == [("create", "10.0.0.1", 2.5, 99)]
        # a take counts the epoch up from there
        conn.execute(text("UPDATE st_leases SET epoch = epoch + 1"))
        assert conn.execute(text("SELECT epoch FROM st_leases")).scalar_one() == 1
    storage.close()
    storage = Storage(database_url)  # opened again: nothing to do
    assert version(storage) == LATEST
    storage.close()


def test_a_database_newer_than_the_server_is_refused(tmp_path):
    url = f"sqlite:///{tmp_path / 'st.sqlite'}"
    Storage(url).close()
    storage = Storage(url)
    with storage.engine.begin() as conn:
        conn.execute(text(f"UPDATE {VERSION_TABLE} SET version = :v"), {"v": LATEST + 1})
    storage.close()
    with pytest.raises(RuntimeError, match="newer than this server"):
        Storage(url)


def test_the_owner_columns_round_trip(tmp_path):
    storage = Storage(f"sqlite:///{tmp_path / 'st.sqlite'}")
    social = StoredSocial(listed=True, open_seats=[2], creator="198.51.100.7", lobby_seats=[1, 2],
                          humans=[0], rematch_claimed=[])
    storage.create_table("t2", "tippen/grupp-1975", {"players": 3},
                         [StoredSeat(i, f"p{i}", None, None) for i in range(3)], "a", "s",
                         social=social)
    storage.set_rematch_claimed("t2", [0])
    st = storage.load_table("t2")
    assert st is not None
    assert (st.social.creator, st.social.lobby_seats, st.social.humans, st.social.rematch_claimed) == \
        ("198.51.100.7", [1, 2], [0], [0])
    assert json.loads(json.dumps(st.social.open_seats)) == [2]
    storage.close()


#: ``st_actions`` as the servers before kept it: the actions of a deal keyed by (table, deal, idx).
OLD_ACTIONS_DDL = ("CREATE TABLE st_actions (table_id VARCHAR(32) NOT NULL REFERENCES st_tables (id), "
                   "deal INTEGER NOT NULL, idx INTEGER NOT NULL, seat INTEGER, "
                   "action VARCHAR(200) NOT NULL, created FLOAT NOT NULL, "
                   "PRIMARY KEY (table_id, deal, idx))")


def play_tables(url: str, plays: list[int]) -> dict[str, list]:
    """Tables played through the server's table manager, ``plays[i]`` actions each (their
    deals go on as they end); each table's stored deals."""
    from stammtisch.server.manager import TableManager

    async def play() -> dict[str, list]:
        storage = Storage(url)
        manager = TableManager(storage, bot_delay=0, deal_pause=1000,
                               limits=ServerLimits(commit_window=0.0))
        out = {}
        for n in plays:
            made = await manager.create("tippen/grupp-1975", {"players": 3},
                                        [("a", None), ("b", None), ("c", None)])
            live = made["table"]
            await live.start()
            for _ in range(n):
                t = live.table
                if not t.in_deal:
                    await live.next_deal()
                    continue
                st = t.state
                await live.act(st.current_player(), st.action_to_string(st.legal_actions()[0]))
            live.turns.cancel()
            out[live.id] = storage.load_table(live.id).deals
        manager.shutdown()
        storage.close()
        return out

    return asyncio.run(play())


def test_the_actions_of_the_old_layout_move_to_st_moves_once(database_url, monkeypatch):
    """A database at version 3 whose deals keep their actions in ``st_actions`` (every deal of
    one table, the first deal of another whose later deals have keys, as a server left it when
    deal keys came): migrated once, every deal has a key of its own, every action reads back
    the same from ``st_moves``, ``st_actions`` is gone, the tables replay and play on, new keys
    start above all, and a second start runs no step."""
    from stammtisch.server import migrations
    from stammtisch.server.manager import TableManager

    before = play_tables(database_url, [40, 40, 0])
    old_only, mixed, unstarted = before
    assert len(before[old_only]) >= 2 and len(before[mixed]) >= 2
    storage = Storage(database_url)
    with storage.engine.begin() as conn:  # as the schema was: actions of keyless deals in st_actions
        conn.execute(text(OLD_ACTIONS_DDL))
        keyless = ("(d.table_id = :old OR (d.table_id = :mixed AND d.number = 0))")
        conn.execute(text("INSERT INTO st_actions (table_id, deal, idx, seat, action, created) "
                          "SELECT m.table_id, m.deal, m.idx, m.seat, m.action, m.created "
                          "FROM st_moves m JOIN st_deals d ON d.deal_key = m.deal_key "
                          f"WHERE {keyless}"), {"old": old_only, "mixed": mixed})
        conn.execute(text("DELETE FROM st_moves WHERE deal_key IN (SELECT d.deal_key FROM "
                          f"st_deals d WHERE {keyless})"), {"old": old_only, "mixed": mixed})
        conn.execute(text("UPDATE st_deals SET deal_key = NULL WHERE table_id = :old OR "
                          "(table_id = :mixed AND number = 0)"), {"old": old_only, "mixed": mixed})
        conn.execute(text(f"UPDATE {VERSION_TABLE} SET version = 3"))
        moved = conn.execute(text("SELECT COUNT(*) FROM st_actions")).scalar_one()
        top = conn.execute(text("SELECT MAX(deal_key) FROM st_deals")).scalar_one()
    assert moved > 0
    storage.close()

    storage = Storage(database_url)
    assert version(storage) == LATEST
    assert "st_actions" not in inspect(storage.engine).get_table_names()
    with storage.engine.connect() as conn:
        keys = [r[0] for r in conn.execute(text("SELECT deal_key FROM st_deals"))]
        assert conn.execute(text("SELECT COUNT(*) FROM st_moves")).scalar_one() == \
            sum(len(actions) for deals in before.values() for _, actions in deals)
    assert None not in keys and len(set(keys)) == len(keys)
    for table_id, deals in before.items():
        st = storage.load_table(table_id)
        assert st is not None and st.deals == deals
        assert (st.last_deal_key is None) == (not deals)
    # the deals given keys by the migration: above every key in use, in the order dealt
    assert storage.load_table(old_only).last_deal_key > top

    async def play_on() -> None:
        manager = TableManager(storage, bot_delay=0, deal_pause=1000,
                               limits=ServerLimits(commit_window=0.0))
        manager.load_all()
        assert storage.new_deal_key() > max(keys)
        for table_id in (old_only, mixed):
            live = manager.tables[table_id]
            assert not live.broken and live.deal_key == storage.load_table(table_id).last_deal_key
            t = live.table
            if not t.in_deal:
                await live.next_deal()
            st = t.state
            await live.act(st.current_player(), st.action_to_string(st.legal_actions()[0]))
            live.turns.cancel()
        manager.shutdown()

    asyncio.run(play_on())
    for table_id in (old_only, mixed):
        st = storage.load_table(table_id)
        assert st is not None and st.deals[:len(before[table_id]) - 1] == before[table_id][:-1]
        assert sum(map(len, (a for _, a in st.deals))) == \
            sum(map(len, (a for _, a in before[table_id]))) + 1
    storage.close()

    def no_step(conn):
        raise AssertionError("a step ran again")

    monkeypatch.setattr(migrations, "STEPS", [no_step] * LATEST)
    storage = Storage(database_url)
    assert version(storage) == LATEST
    assert storage.load_table(mixed).deals[0] == before[mixed][0]
    storage.close()


def test_rows_of_st_actions_without_their_deal_are_dropped_with_a_warning(tmp_path, caplog):
    """An action whose deal has no row was never loaded: the migration leaves it out and says
    how many it left."""
    url = f"sqlite:///{tmp_path / 'st.sqlite'}"
    storage = Storage(url)
    storage.create_table("t1", "tippen/grupp-1975", {"players": 3},
                         [StoredSeat(i, f"p{i}", None, None) for i in range(3)], "a", "s")
    with storage.engine.begin() as conn:
        conn.execute(text(OLD_ACTIONS_DDL))
        conn.execute(text("INSERT INTO st_deals (table_id, number, deck, created) "
                          "VALUES ('t1', 0, '[\"x\"]', 1.0)"))
        conn.execute(text("INSERT INTO st_actions (table_id, deal, idx, seat, action, created) "
                          "VALUES ('t1', 0, 0, 1, 'tap', 1.0), ('t1', 3, 0, 1, 'tap', 1.0)"))
        conn.execute(text(f"UPDATE {VERSION_TABLE} SET version = 3"))
    storage.close()
    with caplog.at_level("WARNING", logger="stammtisch.server"):
        storage = Storage(url)
    assert "1 row(s) of st_actions belonged to no deal" in caplog.text
    st = storage.load_table("t1")
    assert st is not None and st.deals == [(["x"], [(1, "tap")])] and st.last_deal_key == 1
    storage.close()
