"""Hand-written, reviewed SQL shipped with Veil (installed as ``veil.sql``; read with importlib.resources)."""
