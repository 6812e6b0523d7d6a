"""stammtisch: the old German card games Tippen and Tapp."""

__version__ = "0.2.0"
