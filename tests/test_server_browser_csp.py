"""The web client works under the server's Content-Security-Policy.

The other browser tests turn the policy off for their own string predicates (Playwright
evaluates those with ``eval``); this one keeps it on, lets two friends join a table through
the lobby, plays a legal card, and fails on any policy violation the page reports. The API docs
page (``serve --api-docs``) renders under the same policy, from this server's files alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from server_helpers import roomy_limits
from test_browser import browser, join_two_friends, server  # noqa: F401  (fixtures)

from stammtisch.server.app import create_app
from stammtisch.server.threaded import serve_in_thread

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
        with p1.expect_download() as saved:  # fetched with its token in a header, saved from a Blob
            p1.get_by_test_id("record-link").click()
        assert json.loads(Path(saved.value.path()).read_text())["deals"] == []
        headers = p1.request.get(server + "/").headers
        assert "script-src 'self'" in headers["content-security-policy"]
    finally:
        for c in contexts:
            c.close()
    assert violations == []


@pytest.fixture(scope="module")
def docs_server(tmp_path_factory):
    db = tmp_path_factory.mktemp("docs") / "st.sqlite"
    with serve_in_thread(create_app(f"sqlite:///{db}", api_docs=True, limits=roomy_limits())) as base:
        yield base


def test_the_api_docs_render_under_the_content_security_policy(docs_server, browser):  # noqa: F811
    """Swagger UI at /api/docs: its operations are shown, every file comes from this server,
    and the page reports no policy violation (console or ``securitypolicyviolation`` event)."""
    context = browser.new_context()
    violations: list[str] = []
    failed: list[str] = []
    try:
        page = context.new_page()
        page.on("console", lambda m: violations.append(m.text)
                if "Content Security Policy" in m.text else None)
        page.on("response", lambda r: failed.append(f"{r.status} {r.url}")
                if r.status >= 400 or not r.url.startswith(docs_server + "/") else None)
        page.on("requestfailed", lambda r: failed.append(f"failed {r.url}"))
        page.add_init_script("document.addEventListener('securitypolicyviolation', e => "
                             "console.log('Content Security Policy: ' + e.violatedDirective + "
                             "' ' + e.blockedURI))")
        answer = page.goto(docs_server + "/api/docs")
        assert "script-src 'self';" in answer.headers["content-security-policy"]
        html = answer.text()
        assert "<script>" not in html and "<style" not in html and "style=" not in html
        operation = page.locator(".opblock-post", has_text="/api/tables").first
        operation.wait_for(state="visible")
        assert operation.locator(".opblock-summary-method").inner_text() == "POST"
        operation.locator(".opblock-summary-control").click()  # opened: its body schema renders
        operation.locator(".opblock-body").wait_for(state="visible")
    finally:
        context.close()
    assert violations == []
    assert failed == []
