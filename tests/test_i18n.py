"""The text catalogue: every key in every language with the same placeholders; names in words."""

import json
import re
from pathlib import Path

import pytest

import stammtisch.i18n as i18n
from stammtisch.i18n import LANGUAGES, catalogue, placeholders, render, t
from stammtisch.i18n.words import action_phrase, card_name, card_short, choice_text, contract_name, rule_text, suit_name

CATALOGUE_DIR = Path(i18n.__file__).parent


def test_every_language_has_a_json_catalogue_file_a_browser_can_load():
    for lang in LANGUAGES:
        data = json.loads((CATALOGUE_DIR / f"{lang}.json").read_text(encoding="utf-8"))
        assert isinstance(data, dict) and data
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in data.items())


@pytest.mark.parametrize("lang", [lang for lang in LANGUAGES if lang != "en"])
def test_every_key_is_translated_with_the_same_placeholders(lang):
    english, other = catalogue("en"), catalogue(lang)
    assert sorted(set(english) - set(other)) == [], f"keys without a {lang} text"
    assert sorted(set(other) - set(english)) == [], f"{lang} keys unknown in English"
    differing = {k: (placeholders(english[k]), placeholders(other[k]))
                 for k in english if placeholders(english[k]) != placeholders(other[k])}
    assert differing == {}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_placeholders_are_plain_names_a_javascript_client_can_fill(lang):
    for key, text in catalogue(lang).items():
        for field in placeholders(text):
            assert re.fullmatch(r"[a-z_]+", field), (key, field)


def test_the_placeholder_test_catches_a_missing_placeholder():
    assert placeholders("{who} tappt") != placeholders("taps")
    assert placeholders("{who} plays {card}") == {"who", "card"}


def test_t_fills_parameters_and_falls_back():
    assert t("play.choose_range", "en", last=2) == "Choose 1–2."
    assert t("play.choose_range", "de", last=2) == "Wähle 1–2."
    assert t("no.such.key", "de") == "no.such.key"
    assert t("play.choose_range", "en") == "Choose 1–{last}."
    with pytest.raises(ValueError):
        catalogue("fr")


@pytest.mark.parametrize("lang", ["en", "de"])
def test_german_suited_short_labels_use_no_french_sign_and_name_each_card_once(lang):
    """Bells, Acorns and Leaves have no sign: a letter of their name marks them (Hearts keep ♥),
    and "D" is the Daus there; every card of the pack has its own label, in words.py and in the
    analysis's lines alike."""
    from stammtisch.analysis.lines import card_label
    from stammtisch.i18n import render

    pack = [s + r for s in "HDCS" for r in "AKQJT98765432"]
    labels = [card_short(c, lang, "german") for c in pack]
    assert not set("♠♦♣") & set("".join(labels))
    assert len(set(labels)) == len(pack)
    assert labels == [render(card_label(c, "german"), lang) for c in pack]
    assert card_short("DA", "de", "german") == "SD" and card_short("DQ", "de", "german") == "SO"


def test_german_card_names():
    # French suits read as a German player reads them: Ass, Dame, Bube (faces A K D B) ...
    assert card_name("HA", "de") == "Herz-Ass"
    assert card_name("CQ", "de") == "Kreuz-Dame"
    assert card_name("SJ", "de") == "Pik-Bube"
    assert card_name("DT", "de") == "Karo-Zehn"
    assert [card_short(c, "de") for c in ("HA", "HK", "HQ", "HJ", "HT")] == ["♥A", "♥K", "♥D", "♥B", "♥10"]
    # ... German suits with their own faces: Daus, König, Ober, Unter (D K O U)
    assert card_name("DK", "de", suits="german") == "Schellen-König"
    assert card_name("CJ", "de", suits="german") == "Eichel-Unter"
    assert card_name("HA", "de", suits="german") == "Herz-Daus"
    assert card_name("CQ", "de", suits="german") == "Eichel-Ober"
    assert card_name("S7", "de", suits="german") == "Laub-Sieben"
    assert [card_short(c, "de", "german") for c in ("HA", "HQ", "HJ")] == ["♥D", "♥O", "♥U"]
    assert card_name("HA", "en") == "Ace of Hearts"
    assert card_name("CQ", "en", suits="german") == "Ober of Acorns"
    assert card_short("HT", "en") == "♥10"
    assert suit_name("D", "de") == "Karo" and suit_name("D", "de", "german") == "Schellen"


def test_contracts_and_actions_in_words():
    assert contract_name("herzsolo", "de") == "Herz-Solo"
    assert contract_name("solo:C", "de") == "Kreuz-Solo"
    assert contract_name("solo:C", "de", "german") == "Eichel-Solo"
    assert contract_name("rufer:S", "en") == "Spades Rufer"
    assert action_phrase("contract:herzsolo", "de", "Anna") == "Anna spielt Herz-Solo"
    assert action_phrase("pass", "de", "Anna") == "Anna passt"
    assert action_phrase("tap", "de", "Ben") == "Ben tappt"
    assert action_phrase("tap", "de", None) == "Du tappst"
    assert action_phrase("tap", "en", None) == "You tap"
    assert action_phrase("play:HA", "de", "Ben") == "Ben spielt Herz-Ass"
    assert action_phrase("discard:?", "en", "Ben") == "Ben discards face down"
    assert action_phrase("exchange:2", "en", "Ben") == "Ben exchanges 2 cards"
    assert action_phrase("exchange:1", "en", "Ben") == "Ben exchanges one card"
    assert action_phrase("exchange:1", "de", "Ben") == "Ben tauscht eine Karte"
    assert action_phrase("exchange:C7,D8", "en", None) == "You exchange Seven of Clubs, Eight of Diamonds"
    assert action_phrase("bid:frage", "de", "Cora") == "Cora reizt Frage"
    assert action_phrase("give:?", "de", "Cora") == "Cora gibt eine Karte zurück"
    assert action_phrase("trump:D", "en", "Cora") == "Cora makes Diamonds trumps"
    assert action_phrase("something:new", "en", "Cora") == "Cora: something:new"


def test_contract_choices_name_goal_and_value():
    from stammtisch.engine_facts import choice_message_for
    from stammtisch.rules import ruleset

    modern = ruleset("tapp/modern", {})
    text = render(choice_message_for(modern, "contract:solo:C"), "en")
    assert text.startswith("Clubs Solo: ") and "61" in text and "5 cents" in text
    assert render(choice_message_for(modern, "contract:bettel"), "de").startswith("Bettel: kein Trumpf")
    assert choice_text("play:SA", "de") == "Pik-Ass spielen"


def test_refusal_rules_have_words_in_both_languages():
    assert rule_text("follow suit (Farbzwang)", "de") == "Farbe bedienen (Farbzwang)"
    assert rule_text("a rule nobody wrote", "de") is None


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_text_is_empty(lang):
    assert [k for k, v in catalogue(lang).items() if not v.strip()] == []


def test_every_literal_key_the_code_asks_for_exists():
    # t("key", …) / tx("key", …) with a literal key: a typo would silently print the key itself
    root = CATALOGUE_DIR.parent
    used = set()
    for path in list((root / "cli").glob("*.py")) + list((root / "i18n").glob("*.py")):
        used |= set(re.findall(r"\btx?\(\s*\"([a-z_]+\.[a-z_.-]+)\"", path.read_text(encoding="utf-8")))
    assert len(used) > 40  # the scan finds the keys at all
    assert sorted(used - set(catalogue("en"))) == []


def test_every_action_word_has_its_phrases_and_menu_entry():
    from stammtisch.i18n.words import ACTION_WORDS

    english = catalogue("en")
    for word in ACTION_WORDS:
        assert {f"act.{word}", f"act.{word}.you", f"choice.{word}"} <= set(english), word
    # a contract's goal is built from its rule set's facts (engine_facts.contract_goal_message):
    # every contract every Tapp rule set offers has one
    from stammtisch.engine_facts import contract_facts
    from stammtisch.games.tapp.contracts import MODERN_CONTRACTS
    from stammtisch.rules import PRESETS, ruleset

    for rid, preset in PRESETS.items():
        if preset.family != "tapp":
            continue
        rules = ruleset(rid, {})
        names = rules.bids or tuple(c.name for c in MODERN_CONTRACTS)
        assert names and all(contract_facts(rules, n) is not None for n in names), rid
