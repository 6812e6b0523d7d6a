"""The WebSocket message reader: orjson reads the usual message, json the rest, and every
message must come out read, or refused, exactly as json alone reads or refuses it."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from stammtisch.server.app import MESSAGES, json_depth_exceeds, parse_message

DEPTH = 32


def parse_with_json_only(text: str, max_depth: int) -> tuple[Any, str, str]:
    """A reader on the standard json module alone: the reference the orjson reader must match."""
    try:
        msg = json.loads(text)
    except RecursionError:
        return None, "depth", MESSAGES["depth"].format(n=max_depth)
    except ValueError:
        return None, "protocol", MESSAGES["protocol"]
    if json_depth_exceeds(msg, max_depth):
        return None, "depth", MESSAGES["depth"].format(n=max_depth)
    if not isinstance(msg, dict) or not isinstance(msg.get("type"), str):
        return None, "protocol", MESSAGES["protocol"]
    return msg, "", ""


def same(text: str) -> None:
    got, want = parse_message(text, DEPTH), parse_with_json_only(text, DEPTH)
    # repr: NaN is not equal to itself, and an int must not come back as a float
    assert repr(got) == repr(want), text[:200]


SCALARS = st.one_of(
    st.none(), st.booleans(), st.text(max_size=12),
    st.integers(-(2**80), 2**80),  # beyond 64 bits orjson reads a float, json an int
    st.floats(allow_nan=True, allow_infinity=True),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=4),
    max_leaves=20,
)
FIELDS = st.dictionaries(
    st.sampled_from(["type", "action", "event", "seq", "text", "x"]) | st.text(max_size=5),
    VALUES, max_size=5)


@settings(max_examples=400, deadline=None)
@given(FIELDS, st.booleans())
@example({"type": "action", "action": "play:AH", "event": 2**70}, True)
@example({"type": "ping", "seq": float("nan")}, True)
@example({"type": "chat", "text": "\ud800"}, False)  # a lone surrogate: json reads it
def test_a_message_is_read_as_json_reads_it(fields: dict[str, Any], ascii_only: bool) -> None:
    same(json.dumps(fields, ensure_ascii=ascii_only))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_any_text_is_read_or_refused_as_json_would(text: str) -> None:
    same(text)


@given(st.integers(1, 3000), st.sampled_from(["[", "{\"a\":"]))
@settings(max_examples=60, deadline=None)
def test_deep_nesting_is_refused_as_json_would(depth: int, opener: str) -> None:
    closer = "]" if opener == "[" else "}"
    same(opener * depth + "1" + closer * depth)
    same('{"type":"x","deep":' + opener * depth + "1" + closer * depth + "}")
