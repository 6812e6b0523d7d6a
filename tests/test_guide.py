"""The how-to-play guide (docs/guide) and `stammtisch rules`: every rule set explained in English
and German, the glossary complete, the pages agreeing with each other and with the rule sets."""

import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stammtisch import guide
from stammtisch.cli import app
from stammtisch.guide import players_allowed
from stammtisch.rules import PRESETS, RuleError, ruleset

runner = CliRunner()
LANGS = ("en", "de")

#: The glossary terms the guide must define: stable id -> a word its heading must contain (en, de).
TABLE_TERMS = {
    "stamm": ("Stamm", "Stamm"),
    "bete": ("Bête", "Bête"),
    "tap": ("tap", "Tappen"),
    "talon": ("Talon", "Tapp"),
    "daus": ("Daus", "Daus"),
    "ober-unter": ("Ober", "Ober"),
    "frage": ("Frage", "Frage"),
    "solo": ("Solo", "Solo"),
    "herzsolo": ("Herzsolo", "Herzsolo"),
    "rufer": ("Rufer", "Rufer"),
    "bettel": ("Bettel", "Bettel"),
    "bettel-ouvert": ("Bettel ouvert", "Bettel ouvert"),
    "durch": ("Durch", "Durch"),
    "ramsch": ("Ramsch", "Ramsch"),
    "jungfer": ("Jungfer", "Jungfer"),
    "head-the-trick": ("Head the trick", "Überstechen"),
    "sniff": ("sniff", "Riechen"),
    "knock": ("knock", "Klopfen"),
    "hupf-und-sprung": ("Hupf und Sprung", "Hupf und Sprung"),
    "schieben": ("Schieben", "Schieben"),
    "forehand": ("Forehand", "Vorhand"),
    "farbzwang": ("Farbzwang", "Farbzwang"),
}


def run(*args: str) -> tuple[int, str]:
    from stammtisch import cli

    try:
        result = runner.invoke(app, list(args), catch_exceptions=False, env={"COLUMNS": "100"})
        return result.exit_code, result.output
    except cli.CliError as e:  # main() prints this as one line, exit status 2
        return 2, str(e)


def flat(text: str) -> str:
    """Terminal output with the line breaks and box drawing Rich adds taken out."""
    return " ".join(re.sub(r"[│┃]", " ", text).split())


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("ruleset_id", list(PRESETS))
def test_every_rule_set_has_a_section_with_a_summary_and_a_worked_example(ruleset_id, lang):
    section = guide.ruleset_section(ruleset_id, lang)
    assert guide.strip_markers(section.markdown).startswith("## ")
    summary = guide.ruleset_summary(ruleset_id, lang)
    assert summary and "<!--" not in summary and "\n" not in summary
    assert ("Example" if lang == "en" else "Beispiel") in section.markdown


@pytest.mark.parametrize("page", [*guide.FAMILY_PAGES, guide.GLOSSARY_PAGE])
def test_german_and_english_pages_have_the_same_sections_in_the_same_order(page):
    en = [s.key for s in guide.load_page(page, "en").sections]
    de = [s.key for s in guide.load_page(page, "de").sections]
    assert en == de
    assert len(set(en)) == len(en), "a marker appears twice"


def test_each_family_page_has_exactly_the_rule_sets_of_its_family():
    for family in guide.FAMILY_PAGES:
        page = guide.load_page(family, "en")
        assert [s.name for s in page.of_kind("ruleset")] == [r for r in PRESETS if r.startswith(family + "/")]


@pytest.mark.parametrize("lang", LANGS)
def test_every_word_players_use_at_the_table_is_in_the_glossary(lang):
    terms = guide.glossary_terms(lang)
    for term, words in TABLE_TERMS.items():
        assert term in terms, f"{term} missing from the {lang} glossary"
        word = words[LANGS.index(lang)]
        assert word.lower() in terms[term].title.lower(), (term, terms[term].title)
        assert len(terms[term].markdown.splitlines()) >= 2, f"{term} has no explanation"


def test_a_glossary_term_as_plain_text():
    title, text = guide.term_text("jungfer", "de")
    assert title == "Jungfer" and text.startswith("Beim Ramsch") and "*" not in text and "\n" not in text
    with pytest.raises(guide.GuideError):
        guide.term_text("no-such-term")


@pytest.mark.parametrize("ruleset_id", list(PRESETS))
def test_the_variants_a_rule_set_offers_are_the_same_in_both_languages_and_exist(ruleset_id):
    offered = guide.variants_offered(ruleset_id, "en")
    assert offered == guide.variants_offered(ruleset_id, "de")
    assert [s.name for s in guide.variants_for(ruleset_id, "de")] == sorted(
        offered, key=[v.name for v in guide.load_page("tippen", "de").of_kind("variant")].index)
    if ruleset_id.startswith("tippen/"):
        assert "lone-tapper" in offered  # every Tippen rule set has the choice


@pytest.mark.parametrize("ruleset_id", [r for r in PRESETS if r.startswith("tippen/")])
def test_tippen_player_counts_in_the_guide_agree_with_the_rule_set(ruleset_id):
    # "**3 to 6 players**" (with the 32-card pack) must be what the rule set accepts.
    for lang, pattern in (("en", r"\*\*(\d+) to (\d+) players"), ("de", r"\*\*(\d+) bis (\d+) Spieler")):
        low, high = map(int, re.search(pattern, guide.ruleset_section(ruleset_id, lang).markdown).groups())
        accepted = []
        for n in range(2, 12):
            try:
                ruleset(ruleset_id, {"players": n, "pack": "piquet32"})
            except RuleError:
                continue
            accepted.append(n)
        assert (low, high) == (accepted[0], accepted[-1]), (ruleset_id, lang)


def test_rules_id_prints_the_family_basics_and_that_rule_set_and_no_option_table():
    code, out = run("rules", "tippen/grupp-1975")
    assert code == 0
    text = flat(out)
    assert text.startswith("tippen/grupp-1975 · 3–5 players")
    assert "Tippen: how to play" in text
    assert guide.ruleset_section("tippen/grupp-1975", "en").title in text
    assert flat(guide.ruleset_summary("tippen/grupp-1975", "en")) in text
    assert "Katira" in text  # mentioned in Grupp's section …
    assert guide.ruleset_section("tippen/katira-1983", "en").title not in text  # … but not its section
    assert "Knocking" in text and "Robbing" not in text  # Grupp's variants, not 1859's
    assert "max_bete" not in text.split("Variants")[0]  # no option table before the variants
    assert "optint" not in text and "integer|none" not in text


def test_rules_id_german_prints_the_german_section():
    code, out = run("rules", "tapp/modern", "--german")
    assert code == 0
    text = flat(out)
    assert "Tapp: so wird gespielt" in text
    assert "Moderner Tapp" in text and "Ramsch" in text and "Jungfer" in text
    assert "how to play" not in text


def test_rules_without_id_lists_every_rule_set_on_one_screen():
    code, out = run("rules")
    assert code == 0
    for rid in PRESETS:
        assert rid in out
    assert len(out.splitlines()) <= 40
    assert "3–4" in out  # Modern Tapp's players, asked of the rule set
    assert players_allowed("tapp/modern") == [3, 4]


def test_rules_unknown_id_is_one_line_with_did_you_mean():
    code, msg = run("rules", "tippen/grup-1975")
    assert code == 2
    assert "\n" not in msg.strip()
    assert "Did you mean tippen/grupp-1975" in msg
    code, msg = run("rules", "modren")
    assert code == 2 and "tapp/modern" in msg


def test_rules_options_prints_the_table_only_when_asked():
    code, out = run("rules", "tippen/dreiblatt-1859", "--options")
    assert code == 0
    assert "max_bete" in out and "hupf_und_sprung" in out and "untrumped" in out
    assert "how to play" not in out


def test_rules_json_keeps_ids_and_options_and_adds_players_and_summary():
    code, out = run("rules", "--json")
    assert code == 0
    data = json.loads(out)
    assert [d["id"] for d in data] == list(PRESETS)
    katira = next(d for d in data if d["id"] == "tippen/katira-1983")
    assert katira["options"]["trump_card"]["default"] == "katira"
    assert katira["players"] == [3, 4, 5]
    assert katira["summary"] == guide.ruleset_summary("tippen/katira-1983", "en")
    code, out = run("rules", "tapp/modern", "--json", "--german")
    [entry] = json.loads(out)
    assert entry["summary"] == guide.ruleset_summary("tapp/modern", "de")


def test_rules_glossary_in_both_languages():
    code, out = run("rules", "--glossary")
    assert code == 0 and "Jungfer" in out and "Head the trick" in out
    code, out = run("rules", "--glossary", "--german")
    assert code == 0 and "Überstechen" in out
    code, msg = run("rules", "tapp/modern", "--glossary")
    assert code == 2


def test_html_has_no_markers_and_escapes_raw_html():
    html = guide.to_html(guide.ruleset_explanation("tippen/katira-1983", "de"))
    assert "<!--" not in html
    assert "<h2>Modernes Tippen nach Katira (1983)</h2>" in html
    assert "<table>" in guide.to_html(guide.ruleset_section("tapp/modern", "en").markdown)
    assert "&lt;script&gt;" in guide.to_html("<script>alert(1)</script>")


def test_unknown_language_is_refused_with_a_code():
    with pytest.raises(guide.GuideError) as e:
        guide.load_page("tippen", "fr")  # type: ignore[arg-type]
    assert e.value.rule == "unknown-language"


def test_pages_found_through_the_override_folder(tmp_path, monkeypatch):
    shutil.copytree(guide.guide_dir(), tmp_path / "guide")
    (tmp_path / "guide" / "en" / "tippen.md").write_text(
        "# Elsewhere\n\n<!-- ruleset: tippen/grupp-1975 -->\n## Moved\n\nfrom the override\n", encoding="utf-8")
    monkeypatch.setenv("STAMMTISCH_GUIDE_DIR", str(tmp_path / "guide"))
    guide.load_page.cache_clear()
    try:
        assert guide.ruleset_summary("tippen/grupp-1975", "en") == "from the override"
        with pytest.raises(guide.GuideError) as e:
            guide.ruleset_section("tippen/katira-1983", "en")
        assert e.value.rule == "no-section"
    finally:
        monkeypatch.delenv("STAMMTISCH_GUIDE_DIR")
        guide.load_page.cache_clear()


def test_relative_links_between_the_pages_point_to_files_that_exist():
    docs = Path(guide.guide_dir()).parent
    pages = [*docs.glob("guide/*/*.md"), docs / "README.md"]
    assert len(pages) == 7
    for page in pages:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            assert (page.parent / target).exists(), f"{page}: link to {target}"


def test_the_docs_index_links_every_page_of_docs():
    docs = Path(guide.guide_dir()).parent
    index = (docs / "README.md").read_text(encoding="utf-8")
    linked = {(docs / target).resolve()
              for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", index)}
    pages = {page.resolve() for page in docs.glob("*.md") if page.name != "README.md"}
    assert pages and pages <= linked, sorted(p.name for p in pages - linked)


def guide_client():
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from stammtisch.server.routes.guide import router

    web = FastAPI()
    web.include_router(router)
    return TestClient(web)


def test_web_guide_route_serves_a_rule_set_as_html_in_german_and_english():
    client = guide_client()
    r = client.get("/api/guide/tippen/katira-1983", params={"lang": "de"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert "<h1>Tippen: so wird gespielt</h1>" in r.text
    assert "<h2>Modernes Tippen nach Katira (1983)</h2>" in r.text
    assert "Klopfen" in r.text  # its variants follow its section
    r = client.get("/api/guide/tippen/katira-1983", params={"part": "section"})
    assert r.text.startswith("<h2>Modern Tippen after Katira (1983)</h2>")
    assert "how to play" not in r.text
    r = client.get("/api/guide/glossary", params={"lang": "de"})
    assert r.status_code == 200 and "Jungfer" in r.text


def test_web_guide_overview_lists_every_rule_set_with_title_summary_and_players():
    r = guide_client().get("/api/guide", params={"lang": "de"})
    assert r.status_code == 200
    data = r.json()
    assert [d["id"] for d in data] == list(PRESETS)
    modern = next(d for d in data if d["id"] == "tapp/modern")
    assert modern["title"] == "Moderner Tapp" and modern["players"] == [3, 4]
    assert modern["summary"] == guide.ruleset_summary("tapp/modern", "de")
    dreiblatt = next(d for d in data if d["id"] == "tippen/dreiblatt-1859")
    assert dreiblatt["players"] == list(range(3, 11))  # 7–10 with the 52-card pack


def test_web_guide_route_refuses_unknown_ids_and_languages_with_a_code():
    client = guide_client()
    r = client.get("/api/guide/tapp/modren")
    assert r.status_code == 404
    assert r.json()["rule"] == "unknown-ruleset" and "tapp/modern" in r.json()["error"]
    r = client.get("/api/guide/tapp/modern", params={"lang": "fr"})
    assert r.status_code == 400 and r.json()["rule"] == "unknown-language"


def test_the_vierblatt_example_of_the_guide_is_what_the_engine_does():
    # The guide's own example (not in docs/rules-reference.md): four players, Anna deals and antes 4;
    # Ben takes two tricks, Carl one, Dora one; Anna none and pays the stake, 4; then 8 in play,
    # 2 a trick.
    from test_tippen_support import balances, deal, game, make_deck, run

    from stammtisch.games.base import TableState

    section = guide.ruleset_section("tippen/vierblatt-1859", "en").markdown
    assert "Anna takes none and pays the stake, 4" in section and "8 in play, a trick is worth 2" in section
    anna, ben, carl, dora = range(4)
    g = game("tippen/vierblatt-1859")
    s = deal(g, dealer=anna, upcard="S9", hands={ben: "HA DA C7 HK", carl: "H7 D7 CA DT",
                                                 dora: "H8 D8 C8 DK", anna: "H9 D9 C9 CT"})
    assert s.view(ben)["compulsory"] is True
    run(s, "play:HA play:H7 play:H8 play:H9 play:DA play:D7 play:D8 play:D9 "
           "play:C7 play:CA play:C8 play:C9 play:DT play:DK play:CT play:HK")
    assert s.tricks_won == [0, 2, 1, 1]
    players, pot, _ = balances(s)
    assert players == [-8, 2, 1, 1] and pot == 4
    nxt = g.new_deal(TableState(dealer=ben, pot=4), make_deck(g, ben, {})).view(carl)
    assert nxt["pot_in_play"] == 8 and nxt["trick_value"] == 2 and nxt["compulsory"] is False
