"""scripts/protocol_hash.py, the web server's protocol transcript hash: the same hashes on
every run (a rebuild of the server is compared by them), and a hash that sees one byte."""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(300)

# a few scenarios at one deal: a play table, the refusals and the rematch (two tables)
ONLY = "play:tapp/modern,refusals,rematch"


def load_script():
    path = Path(__file__).resolve().parents[1] / "scripts" / "protocol_hash.py"
    spec = importlib.util.spec_from_file_location("protocol_hash", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_transcript_hashes_are_the_same_every_run_and_see_one_byte(tmp_path):
    script = load_script()
    runs = []
    for i in range(2):
        out = io.StringIO()
        results = script.main(["--deals", "1", "--only", ONLY, "--dump", str(tmp_path / str(i))],
                              out=out)
        assert [json.loads(line) for line in out.getvalue().splitlines()] == results
        runs.append(results)
    assert [r["scenario"] for r in runs[0]] == ["play:tapp/modern", "refusals", "rematch"]
    assert runs[0] == runs[1]
    # the hash is the SHA-256 of the dumped transcript; the recorder's digest of it with one
    # byte of one message changed is another
    for result in runs[0]:
        dumped = tmp_path / "0" / (result["scenario"].replace("/", "_").replace(":", "_") + ".jsonl")
        data = dumped.read_bytes()
        assert hashlib.sha256(data).hexdigest() == result["sha256"]
        lines = data.decode().splitlines()
        assert len(lines) == result["messages"] > 10
        rec = script.Recorder(result["scenario"])
        rec.lines = lines
        assert rec.digest() == result["sha256"]
        k = next(i for i, line in enumerate(lines) if '"type":"state"' in line)
        at = lines[k].index('"event":') + len('"event":')
        rec.lines = [*lines[:k], lines[k][:at] + "9" + lines[k][at + 1:], *lines[k + 1:]]
        assert rec.lines != lines and rec.digest() != result["sha256"]


def test_every_varying_value_is_normalised():
    script = load_script()
    rec = script.Recorder("x")
    rec.secret("abcDEF123456", "<table1>")
    rec.add("c", {"type": "chat", "messages": [{"text": "hi", "at": 1712345678.25}],
                  "table": "abcDEF123456", "next_deal_at": None, "turn_deadline": 3.5})
    assert rec.lines == ['["c",{"messages":[{"at":"<time>","text":"hi"}],"next_deal_at":null,'
                         '"table":"<table1>","turn_deadline":"<time>","type":"chat"}]']


def test_every_message_of_the_scenarios_is_its_declared_type():
    """Each message the server sent in every transcript scenario is valid as the type
    ``protocol.py`` declares for it (no field it does not declare, none missing)."""
    from stammtisch.server.protocol import SERVER_MESSAGES

    by_type = {m.model_fields["type"].default: m for m in SERVER_MESSAGES}
    script = load_script()
    message = script.Recorder.message
    seen: dict[str, int] = {}

    def checked(rec, who, role, m):
        declared = by_type.get(m.get("type"))
        assert declared is not None, m
        declared.model_validate(m)
        seen[m["type"]] = seen.get(m["type"], 0) + 1
        message(rec, who, role, m)

    script.Recorder.message = checked
    try:
        script.main(["--deals", "1"], out=io.StringIO())
    finally:
        script.Recorder.message = message
    # the scenarios reach every message type but the hints (no search bot runs there)
    assert set(seen) >= set(by_type) - {"hint", "hint asked"}, seen
