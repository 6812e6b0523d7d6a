"""Write the guide's "when to tap" section (docs/guide/{en,de}/tippen.md) from the trained
equilibrium (``stammtisch/bots/equilibrium.json``), so no number in it is typed by hand.

    python scripts/equilibrium_guide.py           # rewrite the section in both languages
    python scripts/equilibrium_guide.py --check   # exit 1 if a page differs from the data

The section runs from its marker ``<!-- section: when-to-tap -->`` to the next marker; a page
without it gets it before the sources section.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from stammtisch.guide import LANGUAGES, WHEN_TO_TAP, when_to_tap_section

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "guide"
MARKER = f"<!-- section: {WHEN_TO_TAP} -->"
_NEXT = re.compile(r"^<!--\s*(ruleset|section|variant|term):", re.MULTILINE)


def updated(text: str, section: str) -> str:
    block = MARKER + "\n" + section + "\n"
    start = text.find(MARKER)
    if start < 0:
        sources = text.find("<!-- section: sources -->")
        at = sources if sources >= 0 else len(text)
        return text[:at] + block + text[at:]
    after = _NEXT.search(text, start + len(MARKER))
    end = after.start() if after else len(text)
    return text[:start] + block + text[end:]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    stale = []
    for lang in LANGUAGES:
        path = GUIDE / lang / "tippen.md"
        text = path.read_text(encoding="utf-8")
        new = updated(text, when_to_tap_section(lang))
        if new != text:
            stale.append(str(path))
            if not args.check:
                path.write_text(new, encoding="utf-8")
    if args.check and stale:
        print("out of date: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
