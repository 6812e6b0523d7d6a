"""``stammtisch rules``: the rule sets, their options and defaults."""

from __future__ import annotations

import json

import typer
from rich.table import Table as RichTable

from ..rules import PRESETS, RuleError, family_of, format_options, option_specs, ruleset
from .common import CliError, app, console


@app.command("rules")
def rules_cmd(
    as_json: bool = typer.Option(False, "--json", help="Print the rule sets as JSON."),
    ruleset_id: str | None = typer.Argument(None, metavar="[RULESET]",
                                               help="Show only this rule set."),
):
    """List the rule sets with their options and defaults.

    Options are given to play/simulate as -o key=value, e.g. -o max_bete=9 -o robbing=true.
    """
    ids = [ruleset_id] if ruleset_id else list(PRESETS)
    out = []
    for rid in ids:
        try:
            rules = ruleset(rid)
            specs = option_specs(rid)
        except RuleError as e:
            raise CliError(str(e)) from None
        defaults = format_options(rules)
        out.append({
            "id": rid, "game": family_of(rid), "title": rules.title,
            "options": {k: {"default": defaults[k], "values": s.describe_kind(), "help": s.help}
                        for k, s in specs.items()},
        })
    if as_json:
        print(json.dumps(out, ensure_ascii=False, indent=1))
        return
    for entry in out:
        t = RichTable(title=f"[bold]{entry['id']}[/bold] — {entry['title']}", show_lines=False,
                      title_justify="left", expand=False)
        t.add_column("option", style="cyan", no_wrap=True)
        t.add_column("default", style="green", no_wrap=True)
        t.add_column("values", no_wrap=True)
        t.add_column("meaning")
        for name, o in entry["options"].items():
            t.add_row(name, str(o["default"]).lower() if isinstance(o["default"], bool)
                      else str(o["default"]), o["values"], o["help"])
        console.print(t)
        console.print()
