"""Tapp settlement as pure functions (docs/rules-reference.md §3.2–§3.4), apart from the play (as OpenSpiel
keeps bridge_scoring beside bridge)."""

from __future__ import annotations

from collections.abc import Sequence

from .contracts import ANTON_DIVISOR, BECK_FACTOR, Level


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def historic_settlement(
    settlement: str,
    level: int,
    declarer_points: int,
    tout: bool = False,
    took_all: bool = False,
    pot: int = 0,
    pot_enabled: bool = False,
    tout_multiplier: int = 2,
) -> tuple[int, int]:
    """Settlement of a Württemberg Tarock (``beck``) or Classic Tapp (``anton``) deal.

    Returns ``(per_defender, to_pot)``: each defender pays the declarer ``per_defender``
    (negative: the declarer pays each defender that much); the declarer pays ``to_pot`` into
    the pot (negative: he takes that much out of it). ``pot`` is the pot at settlement.
    """
    lv = Level(level)
    if settlement == "anton":  # per defender ceil(x / d); a Tout 2 × ceil(60 / d)
        d = ANTON_DIVISOR[lv]
        if tout:
            amount = tout_multiplier * _ceil_div(60, d)
            per = amount if took_all else -amount
        else:
            x = declarer_points - 60
            per = _ceil_div(x, d) if x > 0 else -_ceil_div(-x, d)
    elif settlement == "beck":  # per defender x · m; a Tout multiplier × 60 · m
        m = BECK_FACTOR[lv]
        if tout:
            amount = tout_multiplier * 60 * m
            per = amount if took_all else -amount
        else:
            per = (declarer_points - 60) * m
    else:
        raise ValueError(f"no historic settlement {settlement!r}")
    to_pot = 0
    if pot_enabled and per:
        if lv == Level.FRAGE:
            if per < 0:
                to_pot = -per
        elif per > 0:
            to_pot = -pot
        else:
            to_pot = pot
    return per, to_pot


def ramsch_settlement(points: Sequence[int], tricks: Sequence[int]) -> list[tuple[int, int, int]]:
    """Ramsch payments ``(payer, payee, amount)`` (rules reference §3.4, §6 P6).

    The player(s) with the most points pay every other player 5, or 10 to a player who took
    no trick (Jungfer); tied losers don't pay each other.
    """
    top = max(points)
    losers = [s for s, p in enumerate(points) if p == top]
    out = []
    for payer in losers:
        for payee in range(len(points)):
            if points[payee] != top:
                out.append((payer, payee, 10 if tricks[payee] == 0 else 5))
    return out
