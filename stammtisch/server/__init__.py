"""The web table, a front end: FastAPI app, storage, live tables, static web client.

Nothing is imported here: ``stammtisch serve --help`` reads ``server.limits`` without loading
FastAPI; the app is ``stammtisch.server.app.create_app`` / ``run``.
"""
