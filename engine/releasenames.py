"""The names of the objects a release creates in its schema, from the release's name alone: read by the
publication's statements (``veil.queries.publication``) and by the config, which refuses a release name whose
longest object would not fit PostgreSQL's identifiers (``veil.config.release_names``).

>>> names("census", 3)["version_blocks"]
'census_v3_blocks'
"""

from __future__ import annotations


def names(name: str, version: int | None = None) -> dict[str, str]:
    """The objects of release ``name`` (and of one version)."""
    out = {
        "rows": f"{name}_rows",
        "block_rows": f"{name}_block_rows",
        "view": name,
        "blocks": f"{name}_blocks",
        "releases": f"{name}_releases",
    }
    if version is not None:
        out.update(version_view=f"{name}_v{version}", version_blocks=f"{name}_v{version}_blocks")
    return out
