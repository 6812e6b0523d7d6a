"""``python -m stammtisch …`` is the ``stammtisch`` command (for when pip's script folder is
not on PATH)."""

from .cli import main

main()
