"""The repository's pages for users: the changelog stays short and in Keep a Changelog's form."""

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
