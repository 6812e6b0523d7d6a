"""The server's connections fit its open-file limit (``transport.fit_open_files``): the soft
limit is raised as far as ``max_connections`` needs (up to the hard limit), and where the hard
limit is too low, ``max_connections`` is lowered to what it leaves, with one warning. Each case
runs in a process of its own whose limits are set before it starts."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from collections.abc import Callable

from stammtisch.server.limits import ServerLimits
from stammtisch.server.transport import OPEN_FILES_RESERVED

CHECK = """
import json, resource
from stammtisch.server.limits import ServerLimits
from stammtisch.server.transport import fit_open_files
fitted = fit_open_files(ServerLimits())
print(json.dumps({"max_connections": fitted.max_connections,
                  "limit": resource.getrlimit(resource.RLIMIT_NOFILE)}))
"""


def fitted_in(preexec: Callable[[], None]) -> tuple[dict, str]:
    """What ``fit_open_files(ServerLimits())`` makes of the limits ``preexec`` sets; and its log."""
    done = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=120,
                          preexec_fn=preexec)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr


def test_a_low_hard_limit_lowers_max_connections_with_one_warning():
    def low() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))

    fitted, log = fitted_in(low)
    assert fitted == {"max_connections": 256 - OPEN_FILES_RESERVED, "limit": [256, 256]}
    lines = [line for line in log.splitlines() if line.strip()]
    assert len(lines) == 1, log
    assert f"max_connections lowered from 2000 to {256 - OPEN_FILES_RESERVED}" in lines[0]
    assert f"at least {2000 + OPEN_FILES_RESERVED}" in lines[0]


def test_a_high_hard_limit_raises_the_soft_one_and_keeps_max_connections():
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = ServerLimits().max_connections + OPEN_FILES_RESERVED
    assert hard == resource.RLIM_INFINITY or hard >= need, "this machine's hard limit is too low"

    def stock() -> None:  # as a stock Linux process starts: 1,024 files, a high hard limit
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))

    fitted, log = fitted_in(stock)
    assert fitted == {"max_connections": 2000, "limit": [need, hard]}
    assert log == ""


def test_a_soft_limit_high_enough_is_left_alone():
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = ServerLimits().max_connections + OPEN_FILES_RESERVED
    soft = need + 100
    assert hard == resource.RLIM_INFINITY or hard >= soft, "this machine's hard limit is too low"

    def high() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    fitted, log = fitted_in(high)
    assert fitted == {"max_connections": 2000, "limit": [soft, hard]}
    assert log == ""
