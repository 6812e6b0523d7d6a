"""How many cases the slowest property tests try: a share in the suite, many more in the deep run.

The suite (``bash scripts/test``) stays within minutes on two cores; ``bash scripts/test-deep``
(``STAMMTISCH_DEEP=1``) runs the same tests with their deep counts, as a scheduled job does.
"""

from __future__ import annotations

import os

DEEP = os.environ.get("STAMMTISCH_DEEP", "") not in ("", "0")


def cases(suite: int, deep: int) -> int:
    """``suite`` cases in the suite, ``deep`` in the deep run."""
    return deep if DEEP else suite
