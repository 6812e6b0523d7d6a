"""``/api/docs``: the HTTP API's documentation (Swagger UI), served whole by this server.

FastAPI's own docs page loads Swagger UI's script and style sheet from a CDN and starts it
with an inline script: the server's Content-Security-Policy (guard.py: scripts and styles
from this server only, no inline script) blocks all three, so that page stays empty (and
offline it could not load them anyway). This page is plain HTML without inline script or
style. Swagger UI's files come from the ``fastapi-offline`` package, which ships them (a 5.x
Swagger UI: 4.x cannot render the OpenAPI 3.1 document FastAPI makes); the few lines that
start it are a script file of ours (``INIT_SCRIPT``), which reads the OpenAPI document's
address from the page (``data-openapi-url``). The policy stays as it is for every page.
"""

from __future__ import annotations

import html
from importlib import resources
from pathlib import Path

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse, HTMLResponse, Response

DOCS_URL = "/api/docs"
ASSETS = DOCS_URL + "/assets"

#: Swagger UI's files this page uses (by the names the package and this server give them).
SWAGGER_FILES = {"swagger-ui.css": "text/css", "swagger-ui-bundle.js": "text/javascript",
                 "favicon.png": "image/png"}

#: Starts Swagger UI. ``validatorUrl: null``: no badge image from validator.swagger.io (another
#: site, which the policy blocks); the standalone preset's top bar is left out (its field
#: would load any address's API description into this page).
INIT_SCRIPT = """\
"use strict";
(function () {
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.dataset.openapiUrl,
    domNode: root,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    deepLinking: true,
    validatorUrl: null
  });
})();
"""

PAGE = """\
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="icon" href="{assets}/favicon.png">
<link rel="stylesheet" href="{assets}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui" data-openapi-url="{openapi_url}"></div>
<script src="{assets}/swagger-ui-bundle.js"></script>
<script src="{assets}/init.js"></script>
</body>
</html>
"""


def swagger_ui_folder() -> Path:
    """Where the installed ``fastapi-offline`` keeps Swagger UI's files."""
    return Path(str(resources.files("fastapi_offline").joinpath("static")))


def api_docs_router(openapi_url: str, title: str = "stammtisch") -> APIRouter:
    """The docs page at ``DOCS_URL`` and its files under ``ASSETS``, for the OpenAPI document
    at ``openapi_url`` (all of them left out of that document)."""
    router = APIRouter(include_in_schema=False)
    folder = swagger_ui_folder()
    page = PAGE.format(title=html.escape(title), assets=ASSETS, openapi_url=html.escape(openapi_url))

    @router.get(DOCS_URL)
    def docs_page() -> HTMLResponse:
        return HTMLResponse(page, headers={"Cache-Control": "no-cache"})

    @router.get(ASSETS + "/init.js")
    def docs_init() -> Response:
        return Response(INIT_SCRIPT, media_type="text/javascript", headers={"Cache-Control": "no-cache"})

    @router.get(ASSETS + "/{name}")
    def docs_asset(name: str) -> Response:
        kind = SWAGGER_FILES.get(name)
        if kind is None:
            raise HTTPException(404, "Not Found")
        return FileResponse(folder / name, media_type=kind)

    return router
