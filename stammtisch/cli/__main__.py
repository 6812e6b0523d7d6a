"""``python -m stammtisch.cli`` is the ``stammtisch`` command."""

from . import main

main()
