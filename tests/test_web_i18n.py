"""The web page's texts: one catalogue per language (stammtisch/i18n/{en,de}.json, keys ``web.*``
and the shared names), served as ``GET /api/texts/{lang}``; every key the page's code asks for
exists; rule-set titles and option names, help and values exist in every language."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import stammtisch.server as server_pkg
from stammtisch.i18n import LANGUAGES, catalogue
from stammtisch.i18n.words import ACTION_WORDS
from stammtisch.rules import PRESETS, option_specs
from stammtisch.server.app import create_app

STATIC = Path(server_pkg.__file__).parent / "static"
# social.js (lobby list, timer, rematch, chat), replay.js and alive.js (sounds, notification) use
# app.js's t(): scanned as part of it
APP_JS = "\n".join((STATIC / f).read_text(encoding="utf-8") for f in ("app.js", "social.js", "replay.js", "alive.js"))
RULES_JS = (STATIC / "rules.js").read_text(encoding="utf-8")
INDEX = (STATIC / "index.html").read_text(encoding="utf-8")


def keys_used_by_the_page() -> set[str]:
    """Every literal catalogue key in app.js, rules.js and index.html, as a full key."""
    used = {"web." + k for k in re.findall(r"\bt\(\s*\"([A-Za-z_.-]+)\"\s*[,)]", APP_JS)}
    used |= set(re.findall(r"\btc\(\s*\"([A-Za-z_.-]+)\"\s*[,)]", APP_JS))
    used |= {"web." + k for k in re.findall(r"\{\s*key:\s*\"([A-Za-z_.-]+)\"", APP_JS)}
    used |= {"web.rules_" + k for k in re.findall(r"\btr\(\s*\"([A-Za-z_.-]+)\"\s*[,)]", RULES_JS)}
    used |= {"web.rules_" + k for k in re.findall(r"\"(option|value|default|meaning)\"", RULES_JS)}
    used |= {"web." + k for k in re.findall(r"data-i18n=\"([A-Za-z_.-]+)\"", INDEX)}
    used |= {"web." + k for k in re.findall(r"dataset\.i18n = \"([A-Za-z_.-]+)\"", APP_JS)}
    return used


def test_the_scan_finds_the_pages_keys():
    used = keys_used_by_the_page()
    assert len(used) > 60
    assert {"web.yourTurn", "web.dealOver", "web.rules_close", "web.newTable", "card.short"} <= used


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_key_the_page_asks_for_is_in_the_catalogue(lang):
    assert sorted(keys_used_by_the_page() - set(catalogue(lang))) == []


def test_no_text_table_is_left_in_the_page_code():
    # the texts live in the catalogue; the fallback table T of app.js holds none
    block = re.search(r"const T = \{(.*?)\n\};", APP_JS, re.S)
    assert block is not None
    assert re.findall(r"[\w-]+\s*:\s*\"", block.group(1)) == []
    assert "Object.assign(T." not in APP_JS  # nor texts added to it later
    assert "const TEXT =" not in RULES_JS
    # no German words written into the code: German comes from its catalogue alone
    for word in ("Du bist dran", "Spiel vorbei", "Schnuppern", "Ich tippe", "Schließen", "Herz"):
        assert word not in APP_JS and word not in RULES_JS, word


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_button_word_action_and_bot_has_a_label(lang):
    texts = catalogue(lang)
    assert [w for w in ACTION_WORDS if f"web.a_{w}" not in texts] == []
    for head in ("exchange", "discard", "give", "play", "call"):
        assert f"web.c_{head}" in texts
    from stammtisch.server.routes.tables import available_bots

    seated = set(available_bots("tippen")) | set(available_bots("tapp"))
    assert sorted(b for b in seated if f"web.bot_{b}" not in texts) == []  # every bot the lobby offers


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_rule_set_title_and_option_has_its_texts(lang):
    texts = catalogue(lang)
    for rid, preset in PRESETS.items():
        assert f"ruleset.title.{rid}" in texts, rid
        for spec in option_specs(rid).values():
            assert f"option.name.{spec.name}" in texts, spec.name
            assert f"option.help.{preset.family}.{spec.name}" in texts, (rid, spec.name)
            for choice in spec.choices:
                word = re.fullmatch(r"[a-z-]+", choice)  # pack names and years are not words
                assert not word or f"option.choice.{choice}" in texts, choice


def test_the_english_texts_of_rule_sets_are_the_rule_sets_own():
    # the rule sets keep their English titles and help; the catalogue must not drift from them
    english = catalogue("en")
    for rid, preset in PRESETS.items():
        assert english[f"ruleset.title.{rid}"] == preset.title
        for spec in option_specs(rid).values():
            assert english[f"option.help.{preset.family}.{spec.name}"] == spec.help


def test_german_uses_the_guides_terms():
    # docs/guide/de says "Riechen" and "tappen"; the page and the terminal say the same
    german = catalogue("de")
    assert german["web.a_sniff"] == "Riechen"
    assert german["web.a_tap"].startswith("Tappen")
    assert german["act.sniff"] == "{who} riecht"
    texts = " ".join(german.values()).lower()
    assert "schnupper" not in texts and "ich tippe" not in texts


@pytest.fixture()
def client(tmp_path):
    with TestClient(create_app(f"sqlite:///{tmp_path / 't.sqlite'}")) as c:
        yield c


def test_the_server_serves_each_catalogue(client):
    for lang in LANGUAGES:
        r = client.get(f"/api/texts/{lang}")
        assert r.status_code == 200
        assert r.json() == catalogue(lang)
    r = client.get("/api/texts/fr")
    assert r.status_code == 400
    assert r.json()["rule"] == "unknown-language"
