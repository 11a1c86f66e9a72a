"""Each hierarchy's ARX text once (``hierarchies.digest``): a release records the hierarchies it loaded every
night, and most nights they are the ones it loaded before.  Stored whole each time, the table grew by the
hierarchies' size a version (about 220 KB a night on the census) and DuckDB rewrote all of it at every
checkpoint — 36 MiB of a release's peak memory after 240 nights (docs/series.md §9.4).  From here on a row's
``digest`` is the SHA-256 of its text, and only the first row of a digest keeps the text; this revision fills in
the digests of the rows already there and clears the repeated texts.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import hashlib

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade(schema: str) -> None:
    op.add_column("hierarchies", sa.Column("digest", sa.Text, nullable=True), schema=schema)
    op.alter_column("hierarchies", "definition", existing_type=sa.Text, nullable=True, schema=schema)
    h = sa.table(
        "hierarchies",
        sa.column("release_id"),
        sa.column("attribute"),
        sa.column("definition"),
        sa.column("digest"),
        schema=schema,
    )
    conn = op.get_bind()
    seen: set[str] = set()
    rows = conn.execute(
        sa.select(h.c.release_id, h.c.attribute, h.c.definition)
        .where(h.c.definition.is_not(None))
        .order_by(h.c.release_id, h.c.attribute)
    ).all()
    for release_id, attribute, definition in rows:
        digest = hashlib.sha256(definition.encode()).hexdigest()
        values = {"digest": digest} if digest not in seen else {"digest": digest, "definition": None}
        seen.add(digest)
        conn.execute(sa.update(h).where(h.c.release_id == release_id, h.c.attribute == attribute).values(**values))


def downgrade(schema: str) -> None:
    """The repeated texts cannot come back from the digests alone: a downgrade copies each digest's text to
    every row of it before the column goes.  ``definition`` stays nullable (DuckDB cannot add the constraint in
    the transaction that filled the column; 0007's code writes it always)."""
    h = sa.table("hierarchies", sa.column("definition"), sa.column("digest"), schema=schema)
    kept = h.alias("kept")
    text = (
        sa.select(kept.c.definition)
        .where(kept.c.digest == h.c.digest, kept.c.definition.is_not(None))
        .limit(1)
        .scalar_subquery()
    )
    op.execute(sa.update(h).where(h.c.definition.is_(None)).values(definition=text))
    op.drop_column("hierarchies", "digest", schema=schema)
