"""Veil: a SQL-backed anonymization engine (k-anonymity, l-diversity, t-closeness, ε-privacy)."""

__version__ = "0.1.0"
