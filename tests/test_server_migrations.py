"""The web table's database across versions: a new database is made at the latest schema, an
older one is brought up to it once at start-up (on SQLite and PostgreSQL), a newer one is
refused."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import inspect, text

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
    assert {"creator", "lobby_seats", "humans", "rematch_claimed", "pace", "hints"} <= columns
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
