"""Records: every simulated game replays to the same balances; bad records are named."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stammtisch.record import RecordError, load, replay, table_to_record
from stammtisch.rules import PRESETS, ruleset
from stammtisch.sim import simulate

# Valid option overrides per rule set, drawn by Hypothesis (each list: one choice per key).
TIPPEN_VARIANTS = {
    "max_bete": [None, 9, 12],
    "robbing": [False, True],
    "sniffing": ["none", "1859", "modern"],
    "knocking": [False, True],
    "schieben": [False, True],
    "hupf_und_sprung": ["none", "single", "double"],
    "tipp_zwang": [False, True],
    "void_must_trump": ["always", "untrumped", "never"],
    "head_trick": [False, True],
    "lone_tapper": ["takes-pot", "dealer-defends"],
}


@st.composite
def rule_sets(draw):
    rid = draw(st.sampled_from(sorted(PRESETS)))
    if rid.startswith("tapp/"):
        if rid == "tapp/modern":
            opts = {"players": draw(st.sampled_from([3, 4])),
                    "pack": draw(st.sampled_from(["tapp36", "skat32"])),
                    "rufer_in_tapp": draw(st.sampled_from(["none", "swap"]))}
        else:
            opts = {"pot": draw(st.booleans()), "tout_multiplier": draw(st.sampled_from([2, 3]))}
        return ruleset(rid, opts)
    base = ruleset(rid)
    lo, hi = 3, (5 if base.tricks > 3 or base.exchange else 6)
    opts = {"players": draw(st.integers(lo, hi))}
    for key, values in TIPPEN_VARIANTS.items():
        if draw(st.booleans()):
            opts[key] = draw(st.sampled_from(values))
    if base.trump_card == "dealer-last":
        opts.update(robbing=False, sniffing="none", knocking=False)
    if opts.get("max_bete") and opts["max_bete"] % base.tricks:
        opts["max_bete"] = base.tricks * 3
    return ruleset(rid, opts)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rule_sets(), seed=st.integers(0, 2**32 - 1), bot=st.sampled_from(["random", "heuristic"]))
def test_replay_reproduces_every_simulated_record(rules, seed, bot):
    summary, table = simulate(rules, deals=6, seed=seed, bots=[bot])
    record = json.loads(json.dumps(table_to_record(table)))  # through JSON, as on disk
    again = replay(record).summary()
    assert again["balances"] == summary.balances
    assert again["pot"] == summary.pot
    assert len(again["deals"]) == 6
    for deal, log in zip(again["deals"], table.deals, strict=True):
        assert deal["net"] == {table.players[p]: v for p, v in log.result.net(rules.players).items()}
        assert deal["dealer"] == table.players[log.result.dealer]
    assert sum(again["balances"].values()) + again["pot"] == 0


def _simple_record():
    rules = ruleset("tippen/grupp-1975", ["players=3"])
    _, table = simulate(rules, deals=3, seed=7, bots=["random"])
    return table_to_record(table)


def test_record_shape_and_defaults():
    rec = _simple_record()
    assert rec["format"] == "stammtisch-record/1"
    assert rec["options"] == {"players": 3}
    assert all(len(d["deck"]) == 32 for d in rec["deals"])
    del rec["first_dealer"]  # defaults to the first player
    replay(rec)


@pytest.mark.parametrize("mutate,message", [
    (lambda r: r.update(ruleset="tippen/nope"), "unknown rule set"),
    (lambda r: r.update(format="other/2"), "unknown record format"),
    (lambda r: r["deals"][0]["deck"].pop(), "bad deck"),
    (lambda r: r["deals"][0]["deck"].__setitem__(0, r["deals"][0]["deck"][1]), "bad deck"),
    (lambda r: r["deals"][0]["deck"].__setitem__(0, "X9"), "bad deck"),
    (lambda r: r["deals"][1]["actions"].append("play:HA"), "deal 2"),
    (lambda r: r["deals"][0]["actions"].insert(0, "bid:solo"), "deal 1, action 1"),
    (lambda r: r["deals"][0]["actions"].__setitem__(0, {"player": "Nobody", "action": "tap"}), "unknown player"),
    (lambda r: r["deals"][0]["actions"].pop(), "deal 1"),
    (lambda r: r.update(options={"stake": 4}), "not divisible"),
])
def test_bad_records_are_refused_with_deal_and_action(mutate, message):
    rec = _simple_record()
    mutate(rec)
    with pytest.raises(RecordError, match=message):
        replay(rec)


def test_action_of_the_wrong_player_is_refused():
    rec = _simple_record()
    first = rec["deals"][0]["actions"][0]
    text = first["action"] if isinstance(first, dict) else first
    replay(rec)  # as written it replays
    players = rec["players"]
    # name every player in turn: exactly one of them is on turn
    results = []
    for name in players:
        rec["deals"][0]["actions"][0] = {"player": name, "action": text}
        try:
            replay(rec)
            results.append("ok")
        except RecordError as e:
            assert "not your turn" in (e.rule or "")
            results.append("refused")
    assert results.count("ok") == 1


def test_not_json_is_a_record_error(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text("{ nope")
    with pytest.raises(RecordError, match="not JSON"):
        load(p)


def _record_of(ruleset_id, overrides, deals=2, seed=5):
    rules = ruleset(ruleset_id, overrides)
    _, table = simulate(rules, deals=deals, seed=seed, bots=["random"])
    return json.loads(json.dumps(table_to_record(table)))


def test_the_players_list_fixes_the_number_of_players_when_the_options_do_not():
    rec = _record_of("tippen/dreiblatt-1859", ["players=3"])
    assert ruleset("tippen/dreiblatt-1859").players != 3  # the preset's default differs
    expected = replay(rec).summary()
    del rec["options"]["players"]
    again = replay(rec).summary()
    assert again["balances"] == expected["balances"] and again["pot"] == expected["pot"]
    assert len(again["players"]) == 3


def test_players_option_and_players_list_that_disagree_are_one_clear_error():
    rec = _record_of("tippen/dreiblatt-1859", ["players=3"])
    rec["options"]["players"] = 5
    with pytest.raises(RecordError, match=r"players=5 but the record names 3 players"):
        replay(rec)


def test_options_that_agree_with_the_players_list_replay():
    rec = _record_of("tapp/modern", ["players=4"])
    rec["options"]["players"] = "4"  # as text, as a hand-written record may have it
    assert len(replay(rec).summary()["players"]) == 4


def test_a_players_list_the_rule_set_cannot_seat_is_refused_by_the_rules():
    rec = _record_of("tapp/classic-1879", [])
    rec["players"].append("Extra")
    with pytest.raises(RecordError, match="players"):
        replay(rec)
