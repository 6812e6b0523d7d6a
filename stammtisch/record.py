"""Game records, format ``stammtisch-record/1`` (layer 5 of docs/engine-conventions.md).

A record holds the rule set, the options that differ from its preset, the players, the first
dealer, and per deal the deck (full pack order after shuffle and cut, top first) and the
actions. Replay re-applies every action through the engine and so verifies the record.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .cards import CardError
from .explain import explain
from .games.base import IllegalAction
from .rules import RuleError, options_differing, ruleset
from .table import Table, summarise_deal

FORMAT = "stammtisch-record/1"
#: the web table's download of a table in play: each deal as one seat saw it (server/app.py)
REDACTED_FORMAT = "stammtisch-redacted/1"
#: A record as JSON data (the format above).
Record = dict[str, Any]


class RecordError(ValueError):
    """A record that cannot be replayed. ``where`` says which deal and action."""

    def __init__(self, message: str, deal: int | None = None, action: int | None = None,
                 rule: str | None = None):
        self.deal, self.action, self.rule, self.detail = deal, action, rule, message
        where = []
        if deal is not None:
            where.append(f"deal {deal + 1}")
        if action is not None:
            where.append(f"action {action + 1}")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)


def table_to_record(table: Table) -> Record:
    if table.deals_forgotten:  # the web table keeps its record in its database
        raise ValueError(f"this table no longer holds its first {table.deals_forgotten} deals")
    rules = table.rules
    return {
        "format": FORMAT,
        "ruleset": rules.id,
        "options": options_differing(rules),
        "players": list(table.players),
        "first_dealer": table.players[table.first_dealer],
        "deals": [{"deck": list(d.deck), "actions": list(d.actions)} for d in table.deals],
    }


@dataclass
class Replay:
    table: Table

    def summary(self, lang: str = "en") -> dict[str, Any]:
        """The ``replay --json`` object: balances, pot (pot + reserve), deals; each deal's
        ``explanation`` (plain text lines in ``lang``) says why it ended as it did."""
        t = self.table
        names = t.players
        suits = "german" if getattr(t.rules, "suits", "french") == "german" else "french"
        deals: list[dict[str, Any]] = []
        for d in t.deals:
            r = d.result
            if r is None:
                deals.append({"dealer": None, "complete": False, "actions": len(d.actions)})
                continue
            deal = summarise_deal(r, t.num_players)
            entry: dict[str, Any] = {
                "dealer": names[deal["dealer"]],
                "outcome": deal["outcome"],
                "tricks": {names[s]: n for s, n in deal["tricks"].items()},
                "net": {names[p]: v for p, v in enumerate(deal["net"])},
            }
            if "contract" in deal:
                declarer = deal["declarer"]
                entry["declarer"] = names[declarer] if declarer is not None else None
                entry["contract"] = deal["contract"]
                entry["card_points"] = {
                    (names[int(k)] if str(k).isdigit() else k): v
                    for k, v in deal["card_points"].items()
                }
            entry["explanation"] = explain(r.summary, names, lang, suits)
            deals.append(entry)
        return {
            "ruleset": t.rules.id,
            "players": list(names),
            "balances": t.balances(),
            "pot": t.ledger.pot + t.ledger.reserve,
            "reserve": t.ledger.reserve,
            "deals": deals,
        }


def load(source: str | Path | Record) -> Record:
    """Read a record (a path, a JSON string, or a parsed dict) and check its shape."""
    if isinstance(source, dict):
        data = source
    else:
        text = Path(source).read_text(encoding="utf-8") if not str(source).lstrip().startswith("{") else str(source)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise RecordError(f"not JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    if not isinstance(data, dict):
        raise RecordError("a record is a JSON object")
    if data.get("format") == REDACTED_FORMAT:
        raise RecordError("a redacted record (the web table's download during play) leaves out the cards "
                          "nobody was shown, so it cannot be replayed; once the table has ended any seat "
                          "can download the full record", rule="redacted record")
    if data.get("format") != FORMAT:
        raise RecordError(f"unknown record format {data.get('format')!r}; expected {FORMAT!r}")
    for key, kind in (("ruleset", str), ("players", list), ("deals", list)):
        if not isinstance(data.get(key), kind):
            raise RecordError(f"the record's {key!r} is missing or not a {kind.__name__}")
    if not isinstance(data.get("options", {}), dict):
        raise RecordError("the record's 'options' must be an object")
    return data


def replay(source: str | Path | Record, allow_incomplete: bool = False,
           on_deal: Callable[[Table], None] | None = None,
           on_action: Callable[[Table, str], None] | None = None) -> Replay:
    """Re-apply every action of a record, verifying each. Raises RecordError.

    ``on_deal(table)`` is called after each finished deal (e.g. to add it to a summary while
    the table is as it was then); ``on_action(table, text)`` before each action is applied
    (e.g. to analyse the position it is played in)."""
    data = load(source)
    players = [str(p) for p in data["players"]]
    options = dict(data.get("options", {}))
    # The players list fixes the number of players when the options do not name it.
    if "players" not in options:
        options["players"] = len(players)
    elif str(options["players"]).strip() != str(len(players)):
        raise RecordError(f"the options say players={options['players']!r} but the record names "
                          f"{len(players)} players")
    try:
        rules = ruleset(data["ruleset"], options)
    except RuleError as e:
        raise RecordError(str(e)) from None
    first = data.get("first_dealer", players[0] if players else None)
    if first not in players:
        raise RecordError(f"first_dealer {first!r} is not one of the players")
    try:
        table = Table(rules, players, players.index(first))
    except ValueError as e:
        raise RecordError(str(e)) from None
    deals = data["deals"]
    for i, deal in enumerate(deals):
        if not isinstance(deal, dict) or not isinstance(deal.get("deck"), list):
            raise RecordError("a deal needs a 'deck' list", deal=i)
        actions = deal.get("actions", [])
        if not isinstance(actions, list):
            raise RecordError("'actions' must be a list", deal=i)
        try:
            table.start_deal(table.game.deck_from_strings(deal["deck"]))
        except (CardError, ValueError, TypeError, AttributeError) as e:
            raise RecordError(f"bad deck: {e}", deal=i) from None
        for j, item in enumerate(actions):
            seat = None
            if isinstance(item, dict):
                name, text = item.get("player"), item.get("action")
                if name not in players:
                    raise RecordError(f"unknown player {name!r}", deal=i, action=j)
                seat = players.index(name)
            else:
                text = item
            if not isinstance(text, str):
                raise RecordError(f"an action is a string, not {text!r}", deal=i, action=j)
            if on_action is not None:
                on_action(table, text)
            try:
                table.apply(text, seat)
            except IllegalAction as e:
                raise RecordError(f"{text}: {e.message}", deal=i, action=j, rule=e.rule) from None
        if table.in_deal and not (allow_incomplete and i == len(deals) - 1):
            raise RecordError(
                f"the actions end before the deal is over ({players[table.current_state().current_player()]} "
                "is to act)", deal=i
            )
        if on_deal is not None and not table.in_deal:
            on_deal(table)
    return Replay(table)


def save(record: Record, path: str | Path) -> None:
    Path(path).write_text(json.dumps(record, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
