"""The how-to-play guide (``docs/guide/{en,de}/*.md``): find the pages, cut them into sections.

The pages are written for players. Code finds its way in them by marker comments that stand
before a heading and stay stable when the prose changes:

- ``<!-- ruleset: tippen/grupp-1975 -->`` the section of one rule set;
- ``<!-- section: variants -->`` a section shared by a family (here: the variants);
- ``<!-- variant: robbing -->`` one variant inside the variants section;
- ``<!-- term: bete -->`` one entry of the glossary;
- ``<!-- variants: max-bete robbing … -->`` inside a rule set's section: the variants it
  offers (docs/rules-reference.md §2.2, last row), so that no code needs to know which rule set has which.

Everything before the first marker of a family page is the family's introduction (what the
game is, the deal, declarations, play, scoring). A block runs from its marker to the next
marker. The English and German pages carry the same markers in the same order.

Where the pages are: in a checkout (the project is installed editable) they are read from
``docs/guide`` beside the package; a normal install puts the same files into
``<prefix>/share/stammtisch/guide`` (``[tool.setuptools.data-files]`` in pyproject.toml).
``STAMMTISCH_GUIDE_DIR`` overrides both.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
import sysconfig
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Final, Literal

from .rules import PRESETS, RuleError, family_of, ruleset

Lang = Literal["en", "de"]
LANGUAGES: Final[tuple[Lang, ...]] = ("en", "de")
FAMILY_PAGES: Final[tuple[str, ...]] = ("tippen", "tapp")
GLOSSARY_PAGE: Final = "glossary"

# User-facing texts of this module, together so that the i18n catalogue can take them over.
# Each refusal has a stable machine code (the key) beside its message.
MESSAGES: Final[dict[str, dict[Lang, str]]] = {
    "guide-missing": {
        "en": "the how-to-play pages were not found (looked in: {places})",
        "de": "die Spielanleitung wurde nicht gefunden (gesucht in: {places})",
    },
    "unknown-language": {
        "en": "unknown language {lang!r}; the guide exists in: en, de",
        "de": "unbekannte Sprache {lang!r}; die Anleitung gibt es auf: en, de",
    },
    "unknown-ruleset": {
        "en": "unknown rule set {ruleset_id!r}.{hint} `stammtisch rules` lists them all.",
        "de": "unbekannter Regelsatz {ruleset_id!r}.{hint} `stammtisch rules` zeigt alle.",
    },
    "did-you-mean": {"en": " Did you mean {choices}?", "de": " Meintest du {choices}?"},
    "no-section": {
        "en": "the guide has no section for {key} in {lang}",
        "de": "die Anleitung hat keinen Abschnitt für {key} auf {lang}",
    },
}


class GuideError(LookupError):
    """A guide page, section or language that does not exist. ``rule`` is a stable code."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule


def message(code: str, language: Lang = "en", **values: object) -> str:
    """The text of ``code`` in ``language``, filled with ``values`` (which may include a
    ``lang`` to mention, e.g. the unknown one)."""
    return MESSAGES[code][language].format(**values)


@dataclass(frozen=True)
class Section:
    """One marked block of a page: ``kind`` (ruleset, section, variant, term), ``name`` (the
    rule set id, variant or term id), ``title`` (its heading, without the #) and its text."""

    kind: str
    name: str
    title: str
    markdown: str

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.name}"


@dataclass(frozen=True)
class Page:
    """A guide page: the introduction (before the first marker) and its marked sections."""

    name: str
    lang: Lang
    intro: str
    sections: tuple[Section, ...]

    def find(self, kind: str, name: str) -> Section | None:
        return next((s for s in self.sections if s.kind == kind and s.name == name), None)

    def of_kind(self, kind: str) -> list[Section]:
        return [s for s in self.sections if s.kind == kind]


_VARIANTS = re.compile(r"^<!--\s*variants:\s*([^>]*?)\s*-->\s*$", re.MULTILINE)
_MARKER = re.compile(r"^<!--\s*(ruleset|section|variant|term):\s*(\S+)\s*-->\s*$", re.MULTILINE)
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
_COMMENT = re.compile(r"<!--.*?-->\n?", re.DOTALL)


def _candidate_dirs() -> list[Path]:
    places = []
    override = os.environ.get("STAMMTISCH_GUIDE_DIR")
    if override:
        places.append(Path(override))
    places.append(Path(__file__).resolve().parent.parent / "docs" / "guide")  # a checkout
    for prefix in (sysconfig.get_paths()["data"], sys.prefix, sysconfig.get_config_var("userbase") or ""):
        if prefix:
            places.append(Path(prefix) / "share" / "stammtisch" / "guide")  # a normal install
    return places


def guide_dir() -> Path:
    """The folder holding ``en/`` and ``de/``."""
    places = _candidate_dirs()
    for place in places:
        if (place / "en" / "tippen.md").is_file():
            return place
    raise GuideError("guide-missing", message("guide-missing", places=", ".join(map(str, places))))


def check_lang(lang: str) -> Lang:
    if lang == "en":
        return "en"
    if lang == "de":
        return "de"
    raise GuideError("unknown-language", message("unknown-language", lang=lang))


def parse_page(name: str, lang: Lang, text: str) -> Page:
    """Cut a page into its introduction and marked sections."""
    marks = list(_MARKER.finditer(text))
    intro = text[: marks[0].start()] if marks else text
    sections = []
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        body = text[m.end():end].strip("\n")
        heading = _HEADING.search(body)
        title = heading.group(1) if heading else m.group(2)
        sections.append(Section(kind=m.group(1), name=m.group(2), title=title, markdown=body.strip() + "\n"))
    return Page(name=name, lang=lang, intro=intro.strip() + "\n", sections=tuple(sections))


@cache
def load_page(name: str, lang: Lang = "en") -> Page:
    lang = check_lang(lang)
    path = guide_dir() / lang / f"{name}.md"
    return parse_page(name, lang, path.read_text(encoding="utf-8"))


def check_ruleset(ruleset_id: str, lang: Lang = "en") -> str:
    """The id itself if it is a known rule set, else a GuideError with "did you mean"."""
    if ruleset_id in PRESETS:
        return ruleset_id
    raise GuideError("unknown-ruleset", message("unknown-ruleset", lang, ruleset_id=ruleset_id,
                                                hint=_did_you_mean(ruleset_id, lang)))


def _did_you_mean(wrong: str, lang: Lang) -> str:
    ids = list(PRESETS)
    text = wrong.strip().lower()
    # A short name ("grupp", "modern", "1859") finds the ids that contain it; a typo finds the
    # closest ids, also by their part after the family ("grup-1975" → tippen/grupp-1975).
    found = [rid for rid in ids if text and text in rid]
    if not found:
        found = difflib.get_close_matches(text, ids, n=2, cutoff=0.8)
    if not found:
        tails = {rid.split("/", 1)[1]: rid for rid in ids}
        found = [tails[t] for t in difflib.get_close_matches(text.split("/")[-1], list(tails), n=3, cutoff=0.6)]
    if not found:
        return ""
    joiner = " or " if lang == "en" else " oder "
    return message("did-you-mean", lang, choices=joiner.join(found))


def family_intro(family: str, lang: Lang = "en") -> str:
    """What the game is, the goal, the deal, declarations, play and scoring of a family."""
    return load_page(family, lang).intro


def ruleset_section(ruleset_id: str, lang: Lang = "en") -> Section:
    check_ruleset(ruleset_id, lang)
    section = load_page(family_of(ruleset_id), lang).find("ruleset", ruleset_id)
    if section is None:
        raise GuideError("no-section", message("no-section", lang, key=ruleset_id, lang=lang))
    return section


def ruleset_summary(ruleset_id: str, lang: Lang = "en") -> str:
    """The rule set in one line: the first paragraph after its heading, as plain text."""
    body = _HEADING.sub("", strip_markers(ruleset_section(ruleset_id, lang).markdown), count=1).strip()
    first = body.split("\n\n", 1)[0]
    return re.sub(r"[*_`]", "", " ".join(first.split()))


def players_allowed(ruleset_id: str) -> list[int]:
    """The numbers of players the rule set can be played with (asked of the rule set itself)."""
    allowed = []
    for n in range(2, 13):
        try:
            ruleset(check_ruleset(ruleset_id), {"players": n})
        except RuleError:
            continue
        allowed.append(n)
    return allowed


def overview(lang: Lang = "en") -> list[dict[str, object]]:
    """Every rule set in one line each: id, family, title (the guide's heading), summary and the
    player counts it allows (for the lobby and ``stammtisch rules``)."""
    return [{"id": rid, "family": family_of(rid), "title": ruleset_section(rid, lang).title,
             "summary": ruleset_summary(rid, lang), "players": players_allowed(rid)} for rid in PRESETS]


def variants_offered(ruleset_id: str, lang: Lang = "en") -> list[str]:
    """The ids of the variants a rule set offers, as its section declares them."""
    found = _VARIANTS.search(ruleset_section(ruleset_id, lang).markdown)
    return found.group(1).split() if found else []


def variants_for(ruleset_id: str, lang: Lang = "en") -> list[Section]:
    """The variant sections a rule set offers, in the order of the page (none for Tapp)."""
    wanted = set(variants_offered(ruleset_id, lang))
    return [s for s in load_page(family_of(ruleset_id), lang).of_kind("variant") if s.name in wanted]


def ruleset_explanation(ruleset_id: str, lang: Lang = "en") -> str:
    """The whole explanation of one rule set as Markdown: the family basics, its own section,
    and the variants it offers."""
    section = ruleset_section(ruleset_id, lang)
    parts = [family_intro(family_of(ruleset_id), lang), section.markdown]
    variants = variants_for(ruleset_id, lang)
    if variants:
        heading = load_page(family_of(ruleset_id), lang).find("section", "variants")
        if heading is not None:
            parts.append(heading.markdown)
        parts.extend(v.markdown for v in variants)
    return "\n".join(parts)


def glossary(lang: Lang = "en") -> str:
    """The whole glossary page as Markdown."""
    page = load_page(GLOSSARY_PAGE, lang)
    return "\n".join([page.intro, *(s.markdown for s in page.sections)])


def glossary_terms(lang: Lang = "en") -> dict[str, Section]:
    """The glossary entries by their stable id (``bete``, ``head-the-trick`` …)."""
    return {s.name: s for s in load_page(GLOSSARY_PAGE, lang).of_kind("term")}


def term_text(term: str, lang: Lang = "en") -> tuple[str, str]:
    """One glossary entry as plain text: ``(heading, explanation)``, e.g. for a tooltip or a
    line under a result ("Bête: the forfeit of a player who … took no trick")."""
    entry = glossary_terms(lang).get(term)
    if entry is None:
        raise GuideError("no-section", message("no-section", lang, key=f"term {term}", lang=lang))
    body = _HEADING.sub("", strip_markers(entry.markdown), count=1)
    return entry.title, re.sub(r"[*_`]", "", " ".join(body.split()))


def strip_markers(markdown: str) -> str:
    """The Markdown without the marker comments (which are for code, not readers)."""
    return _COMMENT.sub("", markdown)


def to_html(markdown: str) -> str:
    """HTML for the web table. Raw HTML in the pages is not passed through (escaped)."""
    from markdown_it import MarkdownIt  # comes with rich

    html: str = MarkdownIt("commonmark", {"html": False}).enable("table").render(strip_markers(markdown))
    return html


def to_terminal(markdown: str) -> object:
    """A Rich renderable (``console.print`` it)."""
    from rich.markdown import Markdown

    return Markdown(strip_markers(markdown))


# -- when to tap: generated from the trained equilibrium (stammtisch/bots/equilibrium.json) ------

WHEN_TO_TAP: Final = "when-to-tap"


def _markdown_table(headers: list[str], rows: list[list[str]]) -> str:
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    return "\n".join([line(headers), "|" + "---|" * len(headers), *(line(r) for r in rows)])


def when_to_tap(ruleset_id: str, lang: Lang = "en", players: int = 4, level: int = 3) -> str:
    """The "when to tap" tables of one Tippen rule set as Markdown, made from the trained data
    (empty when the rule set has none). ``level``: the heading level of the rule set's title."""
    from .bots.equilibrium import tap_blocks
    from .i18n import t

    blocks = tap_blocks(check_ruleset(ruleset_id, lang), lang, players)
    if not blocks:
        return ""
    parts = ["#" * level + " " + ruleset_section(ruleset_id, lang).title]
    for block in blocks:
        parts.append(block["caption"])
        parts.append(_markdown_table(block["headers"], block["rows"]))
        parts.append(block["note"])
    first = blocks[0]
    parts.append(_markdown_table(first["bucket_headers"], first["bucket_rows"]))
    if getattr(ruleset(ruleset_id), "exchange", False):
        parts.append(t("equilibrium.exchange", lang))
    return "\n\n".join(parts) + "\n"


def when_to_tap_section(lang: Lang = "en", players: int = 4) -> str:
    """The guide's generated section (``<!-- section: when-to-tap -->`` of the Tippen page):
    every trained Tippen rule set's tables (``scripts/equilibrium_guide.py`` writes it into
    docs/guide; a test checks the pages agree with the data)."""
    from .i18n import t

    parts = [f"## {t('equilibrium.section', lang)}", t("equilibrium.intro", lang, players=players)]
    for rid in PRESETS:
        if family_of(rid) == "tippen":
            text = when_to_tap(rid, lang, players)
            if text:
                parts.append(text.strip())
    return "\n\n".join(parts) + "\n"
