"""Write the web table's three sounds, stammtisch/server/static/sounds/*.wav, synthesised here
from sines and seeded noise (no recording, no outside source: they are the project's, under its
licence). ``--check``: exit 1 when the committed files differ from what this script makes.

    python scripts/make_sounds.py [--check]

card.wav   a card laid on the felt: a short, soft knock
trick.wav  a trick gathered in: the cards swept together, then two rising notes
turn.wav   your turn: one small bell

Mono, 16 bit, 11025 Hz: a few KB each, and every sound stays below 3 kHz or so, which that rate
carries.
"""

from __future__ import annotations

import argparse
import io
import math
import random
import struct
import sys
import wave
from collections.abc import Callable
from pathlib import Path

RATE = 11025
PEAK = 0.55  # of full scale: quiet next to the page's other sounds (none), never clipping
FADE_S = 0.01  # the last moment fades to silence: no click at the end
SOUNDS_DIR = Path(__file__).resolve().parent.parent / "stammtisch" / "server" / "static" / "sounds"


def _noise(seed: int, n: int, smooth: float) -> list[float]:
    """Seeded white noise through a one-pole low-pass (``smooth`` near 1: darker)."""
    rng = random.Random(seed)
    out, y = [], 0.0
    for _ in range(n):
        y = smooth * y + (1 - smooth) * rng.uniform(-1, 1)
        out.append(y)
    peak = max(abs(x) for x in out) or 1.0
    return [x / peak for x in out]


def _tone(freq: float, t: float, partials: tuple[tuple[float, float], ...] = ((1.0, 1.0),)) -> float:
    return sum(a * math.sin(2 * math.pi * freq * m * t) for m, a in partials)


def _envelope(t: float, attack: float, decay: float) -> float:
    """A quick rise, then an exponential fall with time constant ``decay``."""
    if t < 0:
        return 0.0
    return (t / attack if t < attack else 1.0) * math.exp(-max(0.0, t - attack) / decay)


def card(n: int) -> list[float]:
    noise = _noise(1, n, 0.55)
    out = []
    for i in range(n):
        t = i / RATE
        knock = _envelope(t, 0.002, 0.012) * noise[i]
        body = 0.7 * _envelope(t, 0.003, 0.022) * _tone(170, t)
        out.append(knock + body)
    return out


def trick(n: int) -> list[float]:
    noise = _noise(2, n, 0.8)
    out = []
    for i in range(n):
        t = i / RATE
        sweep = 0.6 * noise[i] * (math.sin(math.pi * t / 0.16) if t < 0.16 else 0.0)
        notes = sum(0.5 * _envelope(t - start, 0.004, 0.06) * _tone(f, t - start, ((1.0, 1.0), (2.0, 0.25)))
                    for start, f in ((0.12, 659.25), (0.2, 987.77)))
        out.append(sweep + notes)
    return out


def turn(n: int) -> list[float]:
    # a bell's partials (1, 2, 2.76 times the fundamental), the higher ones dying sooner
    out = []
    for i in range(n):
        t = i / RATE
        out.append(_envelope(t, 0.004, 0.14) * math.sin(2 * math.pi * 880 * t)
                   + 0.35 * _envelope(t, 0.004, 0.08) * math.sin(2 * math.pi * 1760 * t)
                   + 0.15 * _envelope(t, 0.004, 0.05) * math.sin(2 * math.pi * 2428.8 * t))
    return out


#: name -> (maker, length in seconds)
SOUNDS: dict[str, tuple[Callable[[int], list[float]], float]] = {
    "card": (card, 0.09),
    "trick": (trick, 0.36),
    "turn": (turn, 0.42),
}


def wav_bytes(samples: list[float]) -> bytes:
    """The samples scaled to PEAK, faded out at the end, as a mono 16-bit WAV file."""
    peak = max(abs(x) for x in samples) or 1.0
    fade = int(FADE_S * RATE)
    n = len(samples)
    frames = b"".join(
        struct.pack("<h", round(32767 * PEAK * x / peak * min(1.0, (n - 1 - i) / fade)))
        for i, x in enumerate(samples))
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(frames)
    return buf.getvalue()


def make() -> dict[str, bytes]:
    """Every sound's file name and bytes."""
    return {f"{name}.wav": wav_bytes(maker(round(seconds * RATE))) for name, (maker, seconds) in SOUNDS.items()}


def same_sound(a: bytes, b: bytes) -> bool:
    """The same header and samples; a sample may be one step apart (the last bit of a sine or
    an exponential may differ between maths libraries)."""
    if len(a) != len(b) or a[:44] != b[:44]:
        return False
    xs, ys = (struct.unpack(f"<{(len(v) - 44) // 2}h", v[44:]) for v in (a, b))
    return all(abs(x - y) <= 1 for x, y in zip(xs, ys, strict=True))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only check that the committed files are up to date")
    args = ap.parse_args()
    made = make()
    if args.check:
        stale = [f for f, data in made.items()
                 if not (SOUNDS_DIR / f).exists() or not same_sound((SOUNDS_DIR / f).read_bytes(), data)]
        if stale:
            print(f"{', '.join(stale)} out of date: run python scripts/make_sounds.py", file=sys.stderr)
            return 1
        return 0
    SOUNDS_DIR.mkdir(parents=True, exist_ok=True)
    for f, data in made.items():
        (SOUNDS_DIR / f).write_bytes(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
