"""Finished deals judged with all cards open: every card (``deals``), the decisions before the
play and a deal's par (``decisions``), what they find as data (``findings``), what each reader
may see of it (``seen``) and the lines a player reads (``lines``). Built on the open-hand
solver (``stammtisch.solve``) and the batch runner (``stammtisch.sim``), above both: the solver
stays a kernel that the bots use."""
