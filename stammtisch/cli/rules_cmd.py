"""``stammtisch rules``: the rule sets, how to play each one, their options, the glossary.

- ``stammtisch rules``: one screen listing the rule sets (id, title, players, one line).
- ``stammtisch rules ID``: how to play that rule set (the family basics and its own section of
  the guide in ``docs/guide``, see :mod:`stammtisch.guide`).
- ``--options``: the options with their defaults and meaning (all rule sets, or one).
- ``--json``: the rule sets and their options as JSON (the format tools rely on).
- ``--german``: the German pages; ``--glossary``: the words used at the table.
"""

from __future__ import annotations

import json
from typing import Any, Final

import typer
from rich.table import Table as RichTable
from rich.text import Text

from .. import guide
from ..guide import GuideError, Lang, players_allowed
from ..i18n import has, t
from ..i18n.words import ruleset_title
from ..rules import PRESETS, RuleError, family_of, format_options, option_specs, ruleset
from ..rules.base import OptionSpec, OptionValue
from .common import CliError, console
from .root import app

# User-facing texts of this command, together so that the i18n catalogue can take them over.
TEXTS: Final[dict[str, dict[Lang, str]]] = {
    "list-title": {"en": "Rule sets", "de": "Regelsätze"},
    "col-id": {"en": "id", "de": "id"},
    "col-players": {"en": "players", "de": "Spieler"},
    "col-what": {"en": "what it is", "de": "was es ist"},
    "list-footer": {
        "en": "How to play one: [bold]stammtisch rules ID[/bold] (e.g. stammtisch rules tippen/grupp-1975). "
              "Its options: [bold]--options[/bold]. The words at the table: [bold]--glossary[/bold]. "
              "German: [bold]--german[/bold].",
        "de": "Wie man einen spielt: [bold]stammtisch rules ID --german[/bold] (z. B. stammtisch rules "
              "tippen/grupp-1975 --german). Seine Optionen: [bold]--options[/bold]. Die Wörter am Tisch: "
              "[bold]--glossary[/bold].",
    },
    "explain-footer": {
        "en": "Options of this rule set: [bold]stammtisch rules {id} --options[/bold]; the words: "
              "[bold]stammtisch rules --glossary[/bold].",
        "de": "Optionen dieses Regelsatzes: [bold]stammtisch rules {id} --options --german[/bold]; die "
              "Wörter: [bold]stammtisch rules --glossary --german[/bold].",
    },
    "explain-head": {"en": "[bold]{id}[/bold] · {players} players", "de": "[bold]{id}[/bold] · {players} Spieler"},
    "col-option": {"en": "option", "de": "Option"},
    "col-default": {"en": "default", "de": "Standard"},
    "col-values": {"en": "values", "de": "Werte"},
    "col-meaning": {"en": "meaning", "de": "Bedeutung"},
}

# Refusals: a stable machine code beside the message.
REFUSALS: Final[dict[str, str]] = {
    "glossary-with-id": "--glossary shows the whole glossary; give it without a rule set id",
}


def _text(key: str, lang: Lang, **values: object) -> str:
    return TEXTS[key][lang].format(**values)


def _lang(german: bool) -> Lang:
    return "de" if german else "en"


def _check_id(ruleset_id: str, lang: Lang) -> str:
    try:
        return guide.check_ruleset(ruleset_id, lang)
    except GuideError as e:
        raise CliError(str(e)) from None


def _players_text(counts: list[int]) -> str:
    if not counts:
        return "—"
    if counts == list(range(counts[0], counts[-1] + 1)):
        return str(counts[0]) if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"
    return ", ".join(map(str, counts))


def _options_entry(ruleset_id: str) -> dict[str, Any]:
    rules = ruleset(ruleset_id)
    specs = option_specs(ruleset_id)
    defaults = format_options(rules)
    return {
        "id": ruleset_id, "game": family_of(ruleset_id), "title": rules.title,
        "options": {k: {"default": defaults[k], "values": s.describe_kind(), "help": s.help}
                    for k, s in specs.items()},
    }


def _other_values(spec: OptionSpec, default: OptionValue) -> list[str]:
    """Values of an option other than its default, the likeliest to make a good example first."""
    if spec.kind == "bool":
        return [str(not default).lower()]
    if spec.kind == "choice":
        return [c for c in spec.choices if c not in (default, "auto")]
    candidates = [10] if default is None else [int(default) * 2, int(default) + 1, int(default) - 1]
    return [str(v) for v in candidates
            if (spec.minimum is None or v >= spec.minimum) and (spec.maximum is None or v <= spec.maximum)]


def example_options(ruleset_id: str, count: int = 2) -> list[str]:
    """``key=value`` overrides of options this rule set offers, other than their defaults, which
    build a valid rule set together: the example under its option table. Yes/no options first
    (the commonest change); not ``players`` (``-n``) or ``suits`` (the display only)."""
    defaults = format_options(ruleset(ruleset_id))
    specs = sorted(option_specs(ruleset_id).items(), key=lambda item: item[1].kind != "bool")
    chosen: list[str] = []
    for name, spec in specs:
        if name in ("players", "suits"):
            continue
        for value in _other_values(spec, defaults[name]):
            try:
                ruleset(ruleset_id, [*chosen, f"{name}={value}"])
            except RuleError:
                continue
            chosen.append(f"{name}={value}")
            break
        if len(chosen) == count:
            break
    return chosen


def _option_help(ruleset_id: str, name: str, spec: OptionSpec, lang: Lang) -> str:
    key = f"option.help.{family_of(ruleset_id)}.{name}"
    return t(key, lang) if has(key, lang) else spec.help


def _print_json(ids: list[str], lang: Lang) -> None:
    out = []
    for rid in ids:
        entry = _options_entry(rid)
        entry["players"] = players_allowed(rid)
        try:
            entry["summary"] = guide.ruleset_summary(rid, lang)
        except GuideError:  # a missing page must not break the machine-readable listing
            entry["summary"] = None
        out.append(entry)
    print(json.dumps(out, ensure_ascii=False, indent=1))


def _print_options(ids: list[str], lang: Lang) -> None:
    for rid in ids:
        defaults = format_options(ruleset(rid))
        table = RichTable(title=Text.assemble((rid, "bold"), " — ", ruleset_title(rid, lang)), show_lines=False,
                          title_justify="left", expand=False)
        table.add_column(_text("col-option", lang), style="cyan", no_wrap=True)
        table.add_column(_text("col-default", lang), style="green", no_wrap=True)
        table.add_column(_text("col-values", lang), no_wrap=True)
        table.add_column(_text("col-meaning", lang))
        for name, spec in option_specs(rid).items():
            default = defaults[name]
            table.add_row(name, str(default).lower() if isinstance(default, bool) else str(default),
                          spec.describe_kind(), Text(_option_help(rid, name, spec, lang)))
        console.print(table)
        console.print()
    # the example is of the rule set shown (the first, when all are)
    example = " ".join(["stammtisch play", ids[0], *(f"-o {o}" for o in example_options(ids[0]))])
    console.print(Text(t("rules.options_footer", lang, example=example)), highlight=False)


def _print_list(lang: Lang) -> None:
    t = RichTable(title=f"[bold]{_text('list-title', lang)}[/bold]", title_justify="left",
                  show_lines=False, expand=False)
    t.add_column(_text("col-id", lang), style="cyan", no_wrap=True)
    t.add_column(_text("col-players", lang), justify="center", no_wrap=True)
    t.add_column(_text("col-what", lang))
    for rid in PRESETS:
        try:
            section = guide.ruleset_section(rid, lang)
            what = f"[bold]{section.title}[/bold]: {guide.ruleset_summary(rid, lang)}"
        except GuideError:
            what = f"[bold]{ruleset_title(rid, lang)}[/bold]"
        t.add_row(rid, _players_text(players_allowed(rid)), what)
    console.print(t)
    console.print(_text("list-footer", lang), highlight=False)


def _print_markdown(markdown: str) -> None:
    console.print(guide.to_terminal(markdown))


@app.command("rules")
def rules_cmd(
    ruleset_id: str | None = typer.Argument(
        None, metavar="[RULESET]", help="A rule set id, e.g. tippen/grupp-1975 or tapp/modern."),
    options: bool = typer.Option(False, "--options",
                                 help="Show the options (-o key=value) with their defaults and meaning."),
    as_json: bool = typer.Option(False, "--json", help="Print the rule sets and their options as JSON."),
    german: bool = typer.Option(False, "--german", help="Auf Deutsch: the German pages."),
    glossary: bool = typer.Option(False, "--glossary",
                                  help="The words used at the table: Stamm, Bête, Tapp, Frage, Ramsch …"),
) -> None:
    """How to play: the rule sets, the rules of one, its options, the glossary.

    Without an id: the rule sets on one screen. With an id: how that game is played — the
    basics of Tippen or Tapp and what this rule set does differently, with a worked example
    and the period source behind each decision.

    Examples: `stammtisch rules tippen/grupp-1975` · `stammtisch rules tapp/modern --german` ·
    `stammtisch rules tippen/dreiblatt-1859 --options` · `stammtisch rules --glossary`
    """
    lang = _lang(german)
    try:
        if glossary:
            if ruleset_id is not None:
                raise CliError(REFUSALS["glossary-with-id"])
            _print_markdown(guide.glossary(lang))
            return
        ids = [_check_id(ruleset_id, lang)] if ruleset_id is not None else list(PRESETS)
        if as_json:
            _print_json(ids, lang)
        elif options:
            _print_options(ids, lang)
        elif ruleset_id is None:
            _print_list(lang)
        else:
            console.print(_text("explain-head", lang, id=ids[0], players=_players_text(players_allowed(ids[0]))),
                          highlight=False)
            _print_markdown(guide.ruleset_explanation(ids[0], lang))
            console.print(_text("explain-footer", lang, id=ids[0]), highlight=False)
    except (GuideError, RuleError) as e:
        raise CliError(str(e)) from None
