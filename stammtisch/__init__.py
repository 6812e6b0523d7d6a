"""stammtisch: the old German card games Tippen and Tapp."""

__version__ = "0.1.0"
