"""The parsing of a client's WebSocket message: ``protocol.parse_client`` against reading the
fields of the parsed JSON by hand (what the server did before the typed protocol), and
against validating the ``Action`` model with pydantic, for the usual action message.

Prints one JSON line: µs per message of each (best of ``--repeat`` rounds, alternating).

    python bench/ws_parse.py [--messages 200000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

from stammtisch.server.protocol import Action, message_seq, parse_client, parse_message

TEXT = '{"type":"action","action":"play:HA","event":41,"seq":7}'


def by_hand() -> Any:
    msg, _, _ = parse_message(TEXT, 32)
    assert msg is not None
    seq = message_seq(msg)
    action, event = msg.get("action"), msg.get("event")
    if not isinstance(action, str) or not action or len(action) > 200:
        raise ValueError("action")
    if not isinstance(event, int) or isinstance(event, bool):
        raise ValueError("event")
    return action, event, seq


def typed() -> Any:
    return parse_client(TEXT, 32)


def pydantic() -> Any:
    msg, _, _ = parse_message(TEXT, 32)
    return Action.model_validate(msg)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    ways: dict[str, Callable[[], Any]] = {"by_hand": by_hand, "parse_client": typed,
                                          "model_validate": pydantic}
    best = dict.fromkeys(ways, float("inf"))
    for _ in range(args.repeat):
        for name, fn in ways.items():
            start = time.process_time()
            for _ in range(args.messages):
                fn()
            best[name] = min(best[name], time.process_time() - start)
    print(json.dumps({"messages": args.messages,
                      **{f"{k}_us": round(v / args.messages * 1e6, 2) for k, v in best.items()}}))


if __name__ == "__main__":
    main()
