"""Player names at a web table: cleaned, length-limited, and told apart by how they look.

A name is NFC-normalised; control, format (bidi overrides, zero-width characters), private
use, unassigned and line/paragraph separator characters are removed; runs of white space become
one space. Two names at one table must differ after confusable folding: a simplified UTS #39
skeleton (compatibility-folded and case-folded, accents removed, then look-alike letters of
Cyrillic, Greek and other scripts mapped to the Latin letter they imitate). No maintained PyPI
package offers the skeleton (``confusables`` was last released in 2021, ``confusable-homoglyphs``
answers only "is this mixed-script"), so the table below holds the look-alikes that matter for
names typed at a card table; it is a subset of Unicode's confusables.txt.
"""

from __future__ import annotations

import unicodedata

NAME_MAX = 24  # characters, after cleaning

_DROP_CATEGORIES = {"Cc", "Cf", "Co", "Cn", "Cs", "Zl", "Zp"}

# look-alike → the Latin letter(s) it imitates (lower case: the skeleton is case-folded first)
_CONFUSABLES: dict[str, str] = {
    # Cyrillic
    "а": "a", "в": "b", "с": "c", "ԁ": "d", "е": "e", "ё": "e", "һ": "h", "і": "i", "ї": "i",
    "ј": "j", "к": "k", "ӏ": "l", "м": "m", "н": "h", "о": "o", "р": "p", "ԛ": "q", "г": "r",
    "ѕ": "s", "т": "t", "џ": "u", "ѵ": "v", "ԝ": "w", "х": "x", "у": "y", "з": "3", "ь": "b",
    "п": "n", "и": "u", "ц": "u", "ш": "w", "щ": "w", "л": "n", "д": "a", "ч": "4", "ы": "bl",
    "ӓ": "a", "ӧ": "o", "ӱ": "y", "є": "e",
    # Greek
    "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p",
    "τ": "t", "υ": "u", "χ": "x", "γ": "y", "ω": "w", "μ": "u", "ϲ": "c", "ϳ": "j", "ς": "c",
    "σ": "o", "ζ": "z", "λ": "n",
    # Armenian, Cherokee-free Latin look-alikes and symbols
    "օ": "o", "ս": "u", "ց": "g", "հ": "h", "ո": "n", "ա": "w", "ք": "p",
    "ı": "i", "ȷ": "j", "ɑ": "a", "ɡ": "g", "ɩ": "i", "ʟ": "l", "ꞵ": "b", "ſ": "f",
    "ø": "o", "ł": "l", "đ": "d", "ħ": "h", "ŀ": "l", "ß": "ss", "æ": "ae", "œ": "oe",
    # digits and marks that pass for letters
    "0": "o", "1": "l", "|": "l", "5": "s", "@": "a", "$": "s",
    # "rn" looks like "m", "vv" like "w" (applied on the folded string, below)
}
_SEQUENCES = (("rn", "m"), ("vv", "w"), ("cl", "d"), ("ii", "u"))


class NameError_(ValueError):
    """A name that cannot be used (the message says why)."""


def clean_name(raw: str) -> str:
    """The name as it will be shown; raises ``NameError_`` when nothing usable is left."""
    text = unicodedata.normalize("NFC", raw)
    kept = []
    for ch in text:
        cat = unicodedata.category(ch)
        if cat in _DROP_CATEGORIES:
            continue
        kept.append(" " if cat.startswith("Z") else ch)
    name = " ".join("".join(kept).split())
    if not name:
        raise NameError_("a seat needs a name (visible characters)")
    if len(name) > NAME_MAX:
        raise NameError_(f"a name may have at most {NAME_MAX} characters")
    return name


def skeleton(name: str) -> str:
    """The confusable skeleton of a name: equal skeletons mean the names look alike.

    One folding pass can uncover work for another (NFKD turns a mathematical bold "𝗔" into an
    upper-case "A" after case folding has run), so the pass repeats until nothing changes:
    the skeleton of a skeleton is the skeleton itself.
    """
    current = name
    for _ in range(8):
        folded = _fold_once(current)
        if folded == current:
            break
        current = folded
    return current


def _fold_once(name: str) -> str:
    folded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", name).casefold())
    base = "".join(ch for ch in folded if not unicodedata.combining(ch))
    mapped = "".join(_CONFUSABLES.get(ch, ch) for ch in base)
    mapped = unicodedata.normalize("NFKC", mapped).replace(" ", "")
    for seq, to in _SEQUENCES:
        mapped = mapped.replace(seq, to)
    return mapped


def look_alike_pair(names: list[str]) -> tuple[str, str] | None:
    """Two names of the list that look alike (same skeleton), or None."""
    seen: dict[str, str] = {}
    for name in names:
        key = skeleton(name)
        if key in seen:
            return seen[key], name
        seen[key] = name
    return None
