"""How-to-play pages for the web table's Rules panel, as HTML fragments.

- ``GET /api/guide?lang=de`` – JSON: every rule set with its title and one-line summary in
  that language and the player counts it allows (for the lobby).
- ``GET /api/guide/glossary?lang=de`` – the glossary.
- ``GET /api/texts/de`` – the text catalogue of a language (``stammtisch/i18n/de.json``) as
  JSON: the web page takes every text it shows from it (keys ``web.*``, and the card, contract,
  action, rule-set and option texts the terminal uses too).
- ``GET /api/guide/{ruleset_id}?lang=de&part=all|section`` – how to play a rule set: ``all``
  (default) is the family basics, the rule set's section and its variants (what
  ``stammtisch rules ID`` prints); ``section`` is the rule set's own section only.

Errors are JSON ``{"error": "…", "rule": code}`` with a 4xx status, as elsewhere in the API.
The pages are ours (docs/guide); raw HTML in them is escaped, not passed through.

``app.create_app`` includes the router.
"""

from __future__ import annotations

from fastapi import APIRouter, Query
from fastapi.responses import HTMLResponse, JSONResponse, Response

from ... import guide, i18n
from ...guide import GuideError

router = APIRouter()

# Clients may keep a page a few minutes; it changes only with a new release.
_CACHE = {"Cache-Control": "public, max-age=300"}


def _refuse(status: int, rule: str, message: str) -> JSONResponse:
    return JSONResponse({"error": message, "rule": rule}, status_code=status)


@router.get("/api/guide")
def get_overview(lang: str = Query("en", max_length=5)) -> Response:
    try:
        return JSONResponse(guide.overview(guide.check_lang(lang)), headers=_CACHE)
    except GuideError as e:
        return _refuse(400 if e.rule == "unknown-language" else 404, e.rule, str(e))


@router.get("/api/texts/{lang}")
def get_texts(lang: str) -> Response:
    if lang not in i18n.LANGUAGES:
        return _refuse(400, "unknown-language",
                       f"unknown language {lang[:10]!r}; languages are {', '.join(i18n.LANGUAGES)}")
    return JSONResponse(i18n.catalogue(lang), headers=_CACHE)


@router.get("/api/guide/glossary", response_class=HTMLResponse)
def get_glossary(lang: str = Query("en", max_length=5)) -> Response:
    try:
        language = guide.check_lang(lang)
        return HTMLResponse(guide.to_html(guide.glossary(language)), headers=_CACHE)
    except GuideError as e:
        return _refuse(400 if e.rule == "unknown-language" else 404, e.rule, str(e))


@router.get("/api/guide/{ruleset_id:path}", response_class=HTMLResponse)
def get_ruleset_guide(
    ruleset_id: str,
    lang: str = Query("en", max_length=5),
    part: str = Query("all", pattern="^(all|section)$"),
) -> Response:
    try:
        language = guide.check_lang(lang)
        guide.check_ruleset(ruleset_id, language)
        markdown = (guide.ruleset_explanation(ruleset_id, language) if part == "all"
                    else guide.ruleset_section(ruleset_id, language).markdown)
        return HTMLResponse(guide.to_html(markdown), headers=_CACHE)
    except GuideError as e:
        return _refuse(400 if e.rule == "unknown-language" else 404, e.rule, str(e))
