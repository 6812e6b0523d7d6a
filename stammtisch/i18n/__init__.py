"""User-facing texts in English and German: one JSON catalogue per language.

Design (so the web client can load the same files):
- ``en.json`` and ``de.json`` beside this module are flat objects ``{key: text}``; keys are
  dotted (``play.your_hand``, ``act.tap.you``, ``rule.follow suit (Farbzwang)``).
- A text's parameters are written ``{name}`` (no format specs, no positional fields), so a
  JavaScript client fills them with ``text.replace(/\\{(\\w+)\\}/g, (_, k) => params[k])``.
- Every key exists in every language with the same parameters (``tests/test_i18n.py``).
- Texts are plain text, never terminal markup: front ends style them themselves.
- ``words`` builds what is composed from several texts: card, suit and contract names,
  an action in words ("Anna spielt Herz-Solo"), a menu entry.

``t(key, lang, **params)`` looks a text up; a key missing in ``lang`` falls back to English,
and an unknown key is returned as itself (the tests make both impossible for shipped keys).
"""

from __future__ import annotations

import json
import string
from functools import cache
from importlib import resources

LANGUAGES: tuple[str, ...] = ("en", "de")
DEFAULT_LANGUAGE = "en"


class _KeepMissing(dict[str, object]):
    """Leaves a placeholder without a value visible instead of raising KeyError."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


@cache
def catalogue(lang: str) -> dict[str, str]:
    """The whole catalogue of one language (key -> text), as the JSON file holds it."""
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}; languages are {', '.join(LANGUAGES)}")
    text = resources.files(__package__).joinpath(f"{lang}.json").read_text(encoding="utf-8")
    data = json.loads(text)
    return {str(k): str(v) for k, v in data.items()}


def has(key: str, lang: str = DEFAULT_LANGUAGE) -> bool:
    return key in catalogue(lang)


def t(key: str, lang: str = DEFAULT_LANGUAGE, **params: object) -> str:
    """The text ``key`` in ``lang`` with its ``{placeholders}`` filled from ``params``."""
    texts = catalogue(lang)
    template = texts.get(key)
    if template is None:
        template = catalogue(DEFAULT_LANGUAGE).get(key, key)
    return template.format_map(_KeepMissing(params)) if params else template


def placeholders(template: str) -> set[str]:
    """The names of the ``{placeholders}`` of a text."""
    return {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}


def language(german: bool) -> str:
    """The language a front end's ``--german`` flag selects."""
    return "de" if german else "en"


__all__ = ["DEFAULT_LANGUAGE", "LANGUAGES", "catalogue", "has", "language", "placeholders", "t"]
