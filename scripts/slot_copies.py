"""Write the lines of ``TappState.clone`` that copy the deal, one per slot of
``TappState.__slots__`` (tests/test_tapp_properties.py fails when they are out of date).

The copies are written out rather than looped over: a loop over the slots copies a deal six
times slower compiled (mypyc turns each written line into a copy of a native field; a loop goes
through Python's attribute lookup) and twice as slow in Python. A slot that holds a list in a
new deal is copied as a new list; ``game`` and ``table`` are the constructor's. The slots are
read from the source: a class compiled by mypyc keeps no ``__slots__``.

    python scripts/slot_copies.py
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

from stammtisch.games import TableState, new_game
from stammtisch.rules import ruleset

SOURCE = Path(__file__).resolve().parent.parent / "stammtisch" / "games" / "tapp" / "state.py"
BEGIN = "        # the slots, one by one: written by scripts/slot_copies.py from __slots__\n"
END = "        # (end of the lines written by scripts/slot_copies.py)\n"
#: the slots the constructor sets
GIVEN = ("game", "table")


def declared_slots(source: str | None = None) -> tuple[str, ...]:
    """``TappState.__slots__`` as the source declares them."""
    tree = ast.parse(SOURCE.read_text(encoding="utf-8") if source is None else source)
    state = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "TappState")
    return next(tuple(ast.literal_eval(node.value)) for node in state.body if isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "__slots__" for t in node.targets))


def copy_lines(slots: tuple[str, ...]) -> str:
    game = new_game(ruleset("tapp/modern", {"players": 3}))
    deal = game.new_deal(TableState(dealer=0), list(range(game.pack.size)))
    lines = []
    for name in slots:
        if name not in GIVEN:
            new_list = isinstance(getattr(deal, name), list)
            lines.append(f"        c.{name} = self.{name}{'[:]' if new_list else ''}\n")
    return "".join(lines)


def written(source: str) -> str:
    """``source`` with the lines between the markers made anew."""
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    if len(pattern.findall(source)) != 1:
        raise SystemExit(f"{SOURCE}: the clone's markers are not there once")
    return pattern.sub(lambda _: BEGIN + copy_lines(declared_slots(source)) + END, source)


def main() -> int:
    source = SOURCE.read_text(encoding="utf-8")
    SOURCE.write_text(written(source), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
