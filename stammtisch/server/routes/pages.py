"""The web client: ``GET /`` and ``GET /t/{id}`` (invite links are ``/t/{id}#<token>``: the
token rides in the URL fragment, which browsers never send to a server), its favicon and
``/static``."""

from __future__ import annotations

import mimetypes
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse

STATIC = Path(__file__).parent.parent / "static"
# the table's sounds (static/sounds/*.wav) under one type on every host: Python's own table and
# a host's /etc/mime.types name it differently (audio/x-wav, audio/vnd.wave)
mimetypes.add_type("audio/wav", ".wav")

router = APIRouter()


@router.get("/", include_in_schema=False)
def index() -> FileResponse:
    return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})


@router.get("/t/{table_id}", include_in_schema=False)
def table_page(table_id: str) -> FileResponse:
    return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})


@router.get("/favicon.ico", include_in_schema=False)
def favicon() -> FileResponse:  # browsers ask for it on every page; ours is an SVG
    return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml",
                        headers={"Cache-Control": "public, max-age=86400"})
