import pytest
from hypothesis import given
from hypothesis import strategies as st

from stammtisch.games.base import Transfer
from stammtisch.ledger import Ledger, LedgerError

accounts = st.sampled_from([0, 1, 2, 3, "pot", "reserve"])


@given(st.lists(st.tuples(accounts, accounts, st.integers(0, 1000)), max_size=50))
def test_books_always_balance(moves):
    ledger = Ledger(4)
    for src, dst, amount in moves:
        ledger.apply(Transfer(src, dst, amount, "test"))
        assert sum(ledger.player_balances()) + ledger.pot + ledger.reserve == 0
    assert len(ledger.entries) == len(moves)


def test_unknown_account_and_negative_amount_are_refused():
    ledger = Ledger(3)
    with pytest.raises(LedgerError):
        ledger.apply(Transfer(5, "pot", 3, "x"))
    with pytest.raises(LedgerError):
        ledger.apply(Transfer(0, "pot", -3, "x"))
    assert ledger.entries == []
