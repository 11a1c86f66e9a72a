"""Hand-written, reviewed SQL shipped with Veil (installed as ``engine.sql``; read with importlib.resources)."""
