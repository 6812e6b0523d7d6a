"""Standard AI interfaces over the engines: PettingZoo, Gymnasium and OpenSpiel.

The interface modules need the optional extras (``pip install stammtisch[rl]`` for
``stammtisch.envs.pettingzoo`` and ``stammtisch.envs.gymnasium``, ``stammtisch[openspiel]`` for
``stammtisch.envs.openspiel``); this package itself and ``actions``, ``observation`` and ``core``
need only numpy. Nothing here is imported by the core package. See ``docs/envs.md``.
"""
