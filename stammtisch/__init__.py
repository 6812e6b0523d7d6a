"""stammtisch: the old German card games Tippen and Tapp."""

from . import _native

__version__ = "0.2.0"

#: whether the engines and bots run as compiled by mypyc (else as Python; ``stammtisch._native``)
NATIVE: bool = _native.choose()
