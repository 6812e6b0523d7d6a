"""Imported by multiprocessing's fork server, and by nothing else: it ignores Ctrl-C there.

The fork server notes its signal handlers after importing what it preloads, and every worker
it forks starts with them. So a batch's workers ignore a Ctrl-C from their first instruction:
one that reaches the terminal's process group while a worker is still starting (importing,
or in its initializer, before ``batch._ignore_sigint`` has run) cannot end it with a
traceback. The driver alone decides what a Ctrl-C does (``batch``).
"""

import signal

signal.signal(signal.SIGINT, signal.SIG_IGN)
