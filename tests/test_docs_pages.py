"""The repository's pages for users: the changelog short and in Keep a Changelog's form, the
hosting steps and FAQ true to the server."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHANGELOG = ROOT / "CHANGELOG.md"
#: A changelog a reader takes in at once; past this it needs merging, not growing.
CHANGELOG_MAX_LINES = 150
CHANGE_KINDS = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}


def test_the_changelog_stays_short():
    lines = CHANGELOG.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= CHANGELOG_MAX_LINES, f"{len(lines)} lines: merge related entries"


def test_the_changelog_opens_with_unreleased_and_has_dated_versions_below():
    text = CHANGELOG.read_text(encoding="utf-8")
    versions = re.findall(r"^## (.+)$", text, flags=re.MULTILINE)
    assert versions and versions[0] == "[Unreleased]"
    for heading in versions[1:]:
        assert re.fullmatch(r"\[\d+\.\d+\.\d+\] - \d{4}-\d{2}-\d{2}", heading), heading


def test_the_changelog_sorts_changes_by_keep_a_changelog_kinds():
    text = CHANGELOG.read_text(encoding="utf-8")
    kinds = re.findall(r"^### (.+)$", text, flags=re.MULTILINE)
    assert kinds and set(kinds) <= CHANGE_KINDS, sorted(set(kinds) - CHANGE_KINDS)


# ---------------------------------------------------------------- the hosting steps and FAQ
HOSTING = ROOT / "docs" / "hosting.md"


def hosting_section() -> str:
    return HOSTING.read_text(encoding="utf-8")


def test_the_readme_points_to_the_hosting_page():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "[docs/hosting.md](docs/hosting.md)" in readme


def test_hosting_a_game_takes_three_steps():
    steps = re.findall(r"^(\d)\. \*\*", hosting_section(), flags=re.MULTILINE)
    assert steps == ["1", "2", "3"]


def test_hosting_names_only_options_serve_has():
    import typer.main

    from stammtisch.cli import app

    serve = typer.main.get_command(app).commands["serve"]  # type: ignore[attr-defined]
    flags = {flag for param in serve.params for flag in param.opts}
    named = set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", hosting_section()))
    assert named and named <= flags, sorted(named - flags)


def test_the_faq_quotes_the_port_refusal_as_serve_says_it():
    from stammtisch.i18n import t

    quoted = re.search(r"\*\*`error: (port [^`]+)`\.\*\*", hosting_section())
    assert quoted and t("cli.port_busy", host="0.0.0.0", port=8000).startswith(quoted.group(1))


def test_the_faq_names_where_the_sqlite_file_lies(tmp_path, monkeypatch):
    from stammtisch.server.storage import default_database_url

    section = hosting_section()
    monkeypatch.delenv("STAMMTISCH_DATA", raising=False)
    monkeypatch.chdir(tmp_path)
    assert "`data/stammtisch.sqlite`" in section
    assert default_database_url() == f"sqlite:///{tmp_path.resolve() / 'data' / 'stammtisch.sqlite'}"
    assert "`$STAMMTISCH_DATA/stammtisch.sqlite`" in section
    monkeypatch.setenv("STAMMTISCH_DATA", str(tmp_path / "elsewhere"))
    assert default_database_url() == f"sqlite:///{tmp_path.resolve() / 'elsewhere' / 'stammtisch.sqlite'}"


def test_the_faq_gives_the_servers_own_expiry_times():
    from stammtisch.cli.serve_cmd import parse_limits
    from stammtisch.server.limits import ServerLimits

    section = hosting_section()
    unit = {"h": 3600, "days": 24 * 3600}
    times = re.findall(r"after (\d+) (h|days) \(`(\w+)`\)", " ".join(section.split()))
    assert {name for _, _, name in times} == {"unstarted_after", "lonely_after", "abandoned_after"}
    for number, per, name in times:
        assert getattr(ServerLimits(), name) == int(number) * unit[per], name
    change = re.search(r"`--limit (abandoned_after=(\d+))` keeps tables for (\d+) days", " ".join(section.split()))
    assert change and parse_limits([change.group(1)]).abandoned_after == int(change.group(3)) * unit["days"]
