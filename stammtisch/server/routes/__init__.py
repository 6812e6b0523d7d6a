"""The web table's routes, one router per resource; ``app.create_app`` includes them.

- ``tables``: the rule sets, a table's creation, the lobby, its seats, start, close, links
  and info;
- ``records``: the record of the finished deals, a past deal, a deal's analysis;
- ``live``: the WebSocket of a seat, the spectator or the admin;
- ``pages``: the web client's pages.

Their collaborators (``deps.Server``) are built once by ``create_app`` and reached through
the dependencies in ``deps``.
"""
