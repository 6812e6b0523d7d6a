"""docs/deployment.md's nginx site, tried as a new operator would: Debian's nginx takes it
(``nginx -t``), and in front of a real server over TLS it serves the page's requests and its
WebSocket, while its access log holds no token: tokens travel in a header or the WebSocket's
first message (a token in a URL is refused), and the site's log format leaves out queries.

Like the browser and PostgreSQL tests this needs a program from Debian (``nginx``, and
``openssl`` for a certificate), which ``scripts/test`` installs; without it the test fails."""

from __future__ import annotations

import json
import os
import re
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from server_helpers import HANG, free_port, hello, uvicorn_thread
from websockets.sync.client import connect

from stammtisch.server.app import create_app

pytestmark = pytest.mark.timeout(300)

DOCS = Path(__file__).resolve().parents[1] / "docs" / "deployment.md"
NGINX = "/usr/sbin/nginx"


def documented_site() -> str:
    """The nginx site of docs/deployment.md (the first nginx block after "A minimal nginx
    site")."""
    text = DOCS.read_text(encoding="utf-8")
    after = text[text.index("A minimal nginx site"):]
    return re.search(r"```nginx\n(.*?)```", after, re.S).group(1)  # type: ignore[union-attr]


def on_this_machine(site: str, tmp: Path, upstream: int, tls: int, plain: int) -> str:
    """The site with this machine's ports, certificate and log in place of the example's."""
    site = site.replace("127.0.0.1:8000", f"127.0.0.1:{upstream}")
    site = site.replace("listen 443 ssl http2;", f"listen 127.0.0.1:{tls} ssl http2;")
    site = site.replace("listen 80;", f"listen 127.0.0.1:{plain};")
    site = re.sub(r"ssl_certificate\s+\S+;", f"ssl_certificate {tmp}/cert.pem;", site)
    site = re.sub(r"ssl_certificate_key\s+\S+;", f"ssl_certificate_key {tmp}/key.pem;", site)
    return site.replace("/var/log/nginx/stammtisch.access.log", f"{tmp}/access.log")


def nginx_conf(tmp: Path) -> Path:
    for name in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (tmp / name).mkdir()
    tmp.chmod(0o777)  # the workers may run as another user
    for d in tmp.iterdir():
        if d.is_dir():
            d.chmod(0o777)
    conf = tmp / "nginx.conf"
    conf.write_text(f"""
pid {tmp}/nginx.pid;
error_log {tmp}/error.log info;
worker_processes 1;
events {{ worker_connections 256; }}
http {{
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    include {tmp}/site.conf;
}}
""")
    return conf


def wait_listening(port: int) -> None:
    deadline = time.monotonic() + HANG
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert time.monotonic() < deadline, f"nothing listens on {port}"
            time.sleep(0.05)


def request(url: str, context: ssl.SSLContext, body: dict | None = None,
            headers: dict | None = None) -> tuple[int, Any]:
    req = urllib.request.Request(url, data=None if body is None else json.dumps(body).encode(),
                                 headers={"content-type": "application/json", **(headers or {})},
                                 method="GET" if body is None else "POST")
    try:
        with urllib.request.urlopen(req, timeout=30, context=context) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def test_the_documented_nginx_site_passes_nginx_t_and_logs_no_token(tmp_path):
    tmp = tmp_path / "nginx"
    tmp.mkdir()
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=localhost", "-keyout", str(tmp / "key.pem"),
                    "-out", str(tmp / "cert.pem")], check=True, capture_output=True)
    conf = nginx_conf(tmp)
    app = create_app(f"sqlite:///{tmp_path / 'st.sqlite'}", bot_delay=0, deal_pause=1000)
    tls, plain = free_port(), free_port()
    with uvicorn_thread(app) as upstream:
        (tmp / "site.conf").write_text(on_this_machine(documented_site(), tmp, upstream, tls, plain))
        checked = subprocess.run([NGINX, "-t", "-p", str(tmp), "-c", str(conf)],
                                 capture_output=True, text=True)
        assert checked.returncode == 0, checked.stderr
        nginx = subprocess.Popen([NGINX, "-p", str(tmp), "-c", str(conf), "-g", "daemon off;"],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            wait_listening(tls)
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            base = f"https://127.0.0.1:{tls}"
            status, t = request(base + "/api/tables", context, {"ruleset": "tippen/grupp-1975", "seats": [
                {"name": "Anna"}, {"name": "Robo", "bot": "random"}, {"name": "Rita", "bot": "random"}]})
            assert status == 201, t
            token = t["seats"][0]["token"]
            assert request(f"{base}/api/tables/{t['id']}/start", context,
                           {"token": t["admin_token"]})[0] == 200
            with connect(f"wss://127.0.0.1:{tls}/ws/{t['id']}", ssl=context, open_timeout=10) as ws:
                ws.send(hello(token))
                while (m := json.loads(ws.recv(timeout=HANG)))["type"] != "state":
                    pass
                assert m["view"]["hand"]  # seat 0's own cards, through the proxy
            status, refused = request(f"{base}/api/tables/{t['id']}/record?token={token}", context)
            assert status == 400 and refused["rule"] == "token in url"
            status, record = request(f"{base}/api/tables/{t['id']}/record", context,
                                     headers={"authorization": f"Bearer {token}"})
            assert status == 200 and record["deals"] == []
            assert request(f"{base}/readyz", context)[1]["ready"] is True
        finally:
            nginx.terminate()
            nginx.communicate(timeout=30)
    logged = (tmp / "access.log").read_text()
    assert f"/api/tables/{t['id']}/record" in logged and f"/ws/{t['id']}" in logged
    secrets = [token, t["admin_token"], t["spectator"]["token"]]
    assert [s for s in secrets if s in logged] == [] and "?" not in logged, logged
    errors = (tmp / "error.log").read_text()
    assert [s for s in secrets if s in errors] == []
    assert os.path.getsize(tmp / "access.log") > 0
