import re

import pytest

from stammtisch.rules import PRESETS, RuleError, ruleset
from stammtisch.rules.base import options_differing


def test_every_preset_builds():
    for rid in PRESETS:
        r = ruleset(rid)
        assert r.id == rid


@pytest.mark.parametrize("rid,tricks,stake,trump", [
    ("tippen/drei-karten-1821", 3, 3, "dealer-last"),
    ("tippen/loup-1821", 6, 6, "dealer-last"),
    ("tippen/dreiblatt-1859", 3, 3, "turn"),
    ("tippen/vierblatt-1859", 4, 4, "turn"),
    ("tippen/meyers-1905", 3, 3, "turn"),
    ("tippen/grupp-1975", 3, 3, "turn"),
    ("tippen/katira-1983", 3, 3, "katira"),
])
def test_tippen_presets_match_rules_table(rid, tricks, stake, trump):
    r = ruleset(rid)
    assert (r.tricks, r.stake, r.trump_card) == (tricks, stake, trump)


def test_tippen_bete_and_passing_per_rule_set():
    assert ruleset("tippen/grupp-1975").bete == "stake"
    assert ruleset("tippen/katira-1983").bete == "pot"
    assert ruleset("tippen/dreiblatt-1859").bete == "stake-or-pot"
    assert not ruleset("tippen/grupp-1975").tipp_zwang
    assert ruleset("tippen/meyers-1905").tipp_zwang
    assert ruleset("tippen/dreiblatt-1859").void_must_trump == "untrumped"
    assert ruleset("tippen/grupp-1975").head_trick


@pytest.mark.parametrize("rid,overrides,message", [
    ("tippen/loup-1821", ["players=6"], "3–5 players"),
    ("tippen/grupp-1975", ["players=6"], "3–5 players"),
    ("tippen/dreiblatt-1859", ["players=11"], "3–10 players"),
    ("tippen/dreiblatt-1859", ["stake=4"], "not divisible by the 3 tricks"),
    ("tippen/vierblatt-1859", ["stake=6"], "not divisible by the 4 tricks"),
    ("tippen/dreiblatt-1859", ["max_bete=10"], "max_bete 10 is not divisible"),
    ("tippen/vierblatt-1859", ["max_bete=9"], "max_bete 9 is not divisible"),
    ("tippen/drei-karten-1821", ["robbing=true"], "needs a turned trump card"),
    ("tippen/drei-karten-1821", ["knocking=true"], "needs a turned trump card"),
    ("tippen/meyers-1905", ["unknown=1"], "unknown option 'unknown'"),
    ("tippen/meyers-1905", ["knocking=perhaps"], "takes true or false"),
    ("tippen/meyers-1905", ["sniffing=1900"], "takes one of none, 1859, modern"),
    ("tippen/meyers-1905", ["players"], "not of the form key=value"),
    ("tippen/meyers-1905", ["pack=tapp36"], "takes one of"),
    ("tapp/modern", ["players=5"], "3 or 4 players"),
    ("tapp/classic-1879", ["players=4"], "3 players"),
    ("tapp/classic-1879", ["pack=skat32"], "option pack does not apply to tapp/classic-1879"),
    ("tapp/modern", ["pot=true"], "does not apply"),
    ("tapp/wuerttemberg-tarock", ["frage_value=10"], "does not apply"),
    ("tapp/wuerttemberg-tarock", ["tout_multiplier=4"], "must be from 2 to 3, not 4"),
    ("tippen/meyers-1905", ["stake=3" + "0" * 4299], "takes a whole number from 1 to 1000"),
    ("tippen/meyers-1905", ["stake=3000"], "must be from 1 to 1000, not 3000"),
    ("tapp/modern", ["frage_value=0"], "must be from 1 to 1000, not 0"),
    ("tapp/foo", [], "unknown rule set"),
])
def test_unplayable_configurations_are_refused(rid, overrides, message):
    with pytest.raises(RuleError, match=re.escape(message)):
        ruleset(rid, overrides)


def test_pack_auto_takes_whist_pack_above_six_players():
    assert ruleset("tippen/dreiblatt-1859", ["players=6"]).pack == "piquet32"
    assert ruleset("tippen/dreiblatt-1859", ["players=7"]).pack == "whist52"
    # Grupp with exchanges: 5 players x 3 + upcard + 15 exchanged = 31 <= 32
    assert ruleset("tippen/grupp-1975", ["players=5"]).pack == "piquet32"


def test_overrides_accept_typed_values_and_strings():
    a = ruleset("tippen/dreiblatt-1859", {"max_bete": 9, "robbing": True})
    b = ruleset("tippen/dreiblatt-1859", ["max_bete=9", "robbing=yes"])
    assert a == b
    assert options_differing(a) == {"max_bete": 9, "robbing": True}
    assert ruleset("tippen/dreiblatt-1859", ["max_bete=none"]).max_bete is None
