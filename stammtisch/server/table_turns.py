"""The timers of a live table: its bots and stand-in bots, the turn timer, the next deal.

Bots act and deals follow each other only while a person (a human seat or a spectator) is
connected, and ``watcher_grace`` seconds after the last one left: a table of bots is for
watching, not for filling the disk. A bot or the next-deal timer meeting a transient error
(storage) tries again later: a transient database error never breaks a table. A search bot
(pimc, ismcts) thinks in the thinker's worker process, with the table's lock released.
"""

from __future__ import annotations

import logging

log = logging.getLogger("stammtisch.server")

#: A search bot's decisions that fail in a row before the table shows the seat's trouble, and
#: the longest pause before it is asked again (seconds).
BOT_TROUBLE_AFTER = 3
BOT_RETRY_MAX = 60.0
