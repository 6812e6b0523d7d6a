"""Finished deals judged with all cards open: every card (``deals``), the decisions before the
play and a deal's par (``decisions``), and the lines a player reads (``lines``). Built on the
open-hand solver (``stammtisch.solve``) and the batch runner (``stammtisch.sim``), above both:
the solver stays a kernel that the bots use."""
