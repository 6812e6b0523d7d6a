"""The web table's decks: one read of system randomness per deck, every order equally likely."""

from __future__ import annotations

import itertools
import math
import os

import pytest

from stammtisch.rules import ruleset
from stammtisch.table import Table, order_from_number


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_order_from_number_is_a_bijection_onto_all_orders(n: int) -> None:
    orders = [tuple(order_from_number(r, n)) for r in range(math.factorial(n))]
    assert sorted(orders) == sorted(itertools.permutations(range(n)))


@pytest.mark.parametrize("rid", ["tippen/grupp-1975", "tapp/modern"])
def test_secret_deck_reads_the_system_randomness_once_and_uses_all_of_it(
        rid: str, monkeypatch: pytest.MonkeyPatch) -> None:
    table = Table(ruleset(rid), [f"p{i}" for i in range(ruleset(rid).players)], 0)
    n = table.pack.size
    reads: list[int] = []
    real = os.urandom

    def counting(k: int) -> bytes:
        reads.append(k)
        return real(k)

    monkeypatch.setattr(os, "urandom", counting)
    deck = table.secret_deck()
    assert sorted(deck) == list(range(n))
    # one read, at least 128 bits more than log2(n!): r % n! is uniform within 2^-128
    assert len(reads) == 1 and reads[0] * 8 >= math.factorial(n).bit_length() + 128

    # the bytes decide the deck: the largest number gives another order than zero
    monkeypatch.setattr(os, "urandom", lambda k: b"\x00" * k)
    zero = table.secret_deck()
    monkeypatch.setattr(os, "urandom", lambda k: b"\x01" * k)
    assert table.secret_deck() != zero
