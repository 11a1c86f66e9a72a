"""Alembic environment and versions of Veil's catalog (installed as ``veil.migrations``)."""
