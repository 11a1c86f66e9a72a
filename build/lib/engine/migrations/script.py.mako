"""${message}

Revision ID: ${up_revision}
Revises: ${down_revision | comma,n}
Create Date: ${create_date}
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = ${repr(up_revision)}
down_revision = ${repr(down_revision)}
branch_labels = None
depends_on = None


def upgrade(schema: str) -> None:
    ${upgrades if upgrades else "pass"}


def downgrade(schema: str) -> None:
    ${downgrades if downgrades else "pass"}
