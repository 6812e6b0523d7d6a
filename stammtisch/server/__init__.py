"""The web table (DESIGN.md layer 7): FastAPI app, storage, live tables, static web client."""

from .app import create_app, run

__all__ = ["create_app", "run"]
