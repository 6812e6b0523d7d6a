"""Player names at a web table: cleaning and the confusable skeleton."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stammtisch.server.names import NAME_MAX, NameError_, clean_name, look_alike_pair, skeleton

INVISIBLE = {"Cc", "Cf", "Co", "Cn", "Cs", "Zl", "Zp"}


@given(st.text(max_size=60))
def test_a_cleaned_name_is_nfc_visible_trimmed_and_short(raw):
    try:
        name = clean_name(raw)
    except NameError_:
        return
    assert name == unicodedata.normalize("NFC", name)
    assert not any(unicodedata.category(ch) in INVISIBLE for ch in name)
    assert name == name.strip() and "  " not in name and 0 < len(name) <= NAME_MAX
    assert clean_name(name) == name  # cleaning twice changes nothing


@given(st.text(max_size=30))
def test_the_skeleton_is_stable_and_ignores_case(raw):
    assert skeleton(skeleton(raw)) == skeleton(raw)
    assert skeleton(raw.upper()) == skeleton(raw.lower()) or not raw.isascii()


@pytest.mark.parametrize("a, b", [
    ("Anna", "\u0410nna"),  # Cyrillic A
    ("Paul", "Pau1"),
    ("Olga", "0lga"),
    ("Martin", "rnartin"),
    ("Jose", "Jos\u00e9"),  # accents fold
    ("Anna", "\uff21nna"),  # fullwidth A
    ("Eva", "\u0395v\u03b1"),  # Greek Epsilon, alpha
])
def test_look_alikes_are_found(a, b):
    assert look_alike_pair([a, "Zora", b]) == (a, b)


@pytest.mark.parametrize("names", [["Anna", "Anne", "Hanna"], ["Bernd", "Bert", "Bernhard"],
                                   ["Jürgen", "Jurgen2", "Ida"]])
def test_different_names_pass(names):
    assert look_alike_pair(names) is None
