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
from typing import Any

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


#: A text not yet in a language: its catalogue ``key`` and its ``params`` (left out when it has
#: none), where a parameter is a value or itself such a message. JSON as it is: the web page
#: renders it in the reader's language with the same catalogue (``renderText`` in app.js).
Message = dict[str, Any]


def message(key: str, **params: object) -> Message:
    return {"key": key, "params": params} if params else {"key": key}


def render(text: Message | str | int, lang: str = DEFAULT_LANGUAGE) -> str:
    """A ``message`` in ``lang``, its parameters rendered first; a plain value as it is."""
    if not isinstance(text, dict):
        return str(text)
    params = text.get("params")
    if not params:
        return t(text["key"], lang)
    return t(text["key"], lang, **{name: render(value, lang) if isinstance(value, dict) else value
                                   for name, value in params.items()})


def placeholders(template: str) -> set[str]:
    """The names of the ``{placeholders}`` of a text."""
    return {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}


def language(german: bool) -> str:
    """The language a front end's ``--german`` flag selects."""
    return "de" if german else "en"


__all__ = ["DEFAULT_LANGUAGE", "LANGUAGES", "Message", "catalogue", "has", "language", "message",
           "placeholders", "render", "t"]
