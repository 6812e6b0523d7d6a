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

from ..games.base import IllegalAction
from ..record import RecordError, load
from ..rules import RuleError, ruleset
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
    """Replay one record (verifying it) and summarise it as ``simulate`` does; returns (rules, summary)."""
    data = load(source)
    try:
        rules = ruleset(data["ruleset"], data.get("options", {}))
    except RuleError as e:
        raise RecordError(str(e)) from None
    players = [str(p) for p in data["players"]]
    first = data.get("first_dealer", players[0] if players else None)
    if first not in players:
        raise RecordError(f"first_dealer {first!r} is not one of the players")
    try:
        table = Table(rules, players, players.index(first))
    except ValueError as e:
        raise RecordError(str(e)) from None
    summary = SimulationSummary(players=players)
    for i, deal in enumerate(data["deals"]):
        if not isinstance(deal, dict) or not isinstance(deal.get("deck"), list):
            raise RecordError("a deal needs a 'deck' list", deal=i)
        try:
            state = table.start_deal(table.game.deck_from_strings(deal["deck"]))
        except (ValueError, TypeError, AttributeError) as e:
            raise RecordError(f"bad deck: {e}", deal=i) from None
        for j, item in enumerate(deal.get("actions", [])):
            name, text = (item.get("player"), item.get("action")) if isinstance(item, dict) else (None, item)
            if not isinstance(text, str) or (name is not None and name not in players):
                raise RecordError(f"bad action {item!r}", deal=i, action=j)
            try:
                table.apply(text, players.index(name) if name is not None else None)
            except IllegalAction as e:
                raise RecordError(f"{text}: {e.message}", deal=i, action=j, rule=e.rule) from None
        if not state.is_terminal():
            raise RecordError("the actions end before the deal is over", deal=i)
        account_deal(summary, table, state)
    close_session(summary, table)
    return rules, summary


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
