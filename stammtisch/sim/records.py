"""The records of a chunked simulation: one game record per chunk, merged back into one summary.

``simulate --records DIR`` writes one ``stammtisch-record/1`` file per chunk (a chunk is one
table session). ``merge_records`` replays each of them through the engine (which verifies every
action) and adds them up in chunk order: the summary equals the one ``simulate`` printed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..record import RecordError, replay
from ..table import Table
from .simulate import SimulationSummary, account_deal, close_session

CHUNK_FILE = re.compile(r"-chunk(\d+)\.json$")


def chunk_record_name(ruleset_id: str, seed: int, chunk_index: int) -> str:
    """File name of a chunk's record: sorts in chunk order, names the seed that made it."""
    return f"{ruleset_id.replace('/', '_')}-seed{seed}-chunk{chunk_index:06d}.json"


def record_files(sources: Iterable[Path]) -> list[Path]:
    """The record files named by ``sources`` (files, or folders of ``*.json``), in chunk order."""
    files: list[Path] = []
    for source in sources:
        files.extend(sorted(source.glob("*.json")) if source.is_dir() else [source])

    def order(path: Path) -> tuple[str, int]:
        match = CHUNK_FILE.search(path.name)
        return (CHUNK_FILE.sub("", path.name), int(match.group(1))) if match else (path.name, -1)

    return sorted(files, key=order)


def summarise_record(source: Path | dict[str, Any]) -> tuple[Any, SimulationSummary]:
    """Replay one record (verifying it: ``record.replay``) and summarise it as ``simulate``
    does, deal by deal; returns (rules, summary)."""
    summaries: list[SimulationSummary] = []

    def add(table: Table) -> None:
        if not summaries:
            summaries.append(SimulationSummary(players=list(table.players)))
        account_deal(summaries[0], table, table.current_state())

    table = replay(source, on_deal=add).table
    summary = summaries[0] if summaries else SimulationSummary(players=list(table.players))
    close_session(summary, table)
    return table.rules, summary


def merge_records(sources: Iterable[Path]) -> tuple[Any, SimulationSummary, int]:
    """Summarise every record of ``sources`` and add them up in chunk order.

    Returns (rules, summary, number of records). All records must be of the same rule set and
    players; a record that does not replay raises ``RecordError`` naming the file.
    """
    files = record_files(sources)
    if not files:
        raise RecordError("no record files (*.json) found")
    rules: Any = None
    total: SimulationSummary | None = None
    for path in files:
        try:
            these_rules, summary = summarise_record(path)
        except RecordError as e:
            raise RecordError(f"{path.name}: {e}", rule=e.rule) from None
        if total is None:
            rules, total = these_rules, summary
            continue
        if these_rules != rules or summary.players != total.players:
            raise RecordError(f"{path.name}: another rule set or other players than {files[0].name}")
        total.merge(summary)
    assert total is not None
    return rules, total, len(files)
