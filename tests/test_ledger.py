import pytest
from hypothesis import given
from hypothesis import strategies as st

from stammtisch.games.base import Transfer
from stammtisch.ledger import Ledger, LedgerError

accounts = st.sampled_from([0, 1, 2, 3, "pot", "reserve"])


@given(st.lists(st.tuples(accounts, accounts, st.integers(0, 1000)), max_size=50))
def test_books_always_balance(moves):
    ledger = Ledger(4)
    expected = {a: 0 for a in (0, 1, 2, 3, "pot", "reserve")}
    for src, dst, amount in moves:
        ledger.apply(Transfer(src, dst, amount, "test"))
        assert sum(ledger.player_balances()) + ledger.pot + ledger.reserve == 0
        expected[src] -= amount
        expected[dst] += amount
    assert ledger.balances == expected  # every transfer moved exactly its amount


def test_unknown_account_and_negative_amount_are_refused():
    ledger = Ledger(3)
    with pytest.raises(LedgerError):
        ledger.apply(Transfer(5, "pot", 3, "x"))
    with pytest.raises(LedgerError):
        ledger.apply(Transfer(0, "pot", -3, "x"))
    assert set(ledger.balances.values()) == {0}  # a refused transfer moves nothing
