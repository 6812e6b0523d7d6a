"""Write docs/protocol.md, the web table's WebSocket protocol, from the message types in
stammtisch/server/protocol.py (``--check``: exit 1 when the committed page is out of date).

    python scripts/protocol_doc.py [--check]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from stammtisch.server.protocol import render_protocol

PAGE = Path(__file__).resolve().parent.parent / "docs" / "protocol.md"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only check that the page is up to date")
    args = ap.parse_args()
    text = render_protocol()
    if args.check:
        if not PAGE.exists() or PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE} is out of date: run python scripts/protocol_doc.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
