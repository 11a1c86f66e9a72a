"""The release config: frozen dataclasses parsed from a TOML file, the user's single source of truth.

Every section is read once, through the config's one reader (``veil.settings.Table``; ``[[models]]`` parameters
through its ``Params``, ``[audit]`` in ``veil.auditsettings``, ``[[workload]]`` in ``veil.workloadsettings``, both
kept on the ``Config``); defaults are written once, on the dataclasses below.  Unknown keys, wrong types and
missing required keys are ``ConfigError`` naming the file and the key.  Names are taken literally
(case-sensitive, quoted in SQL).  Credentials never sit in the file: ``url_env`` names an environment variable;
a literal ``url`` is for embedded DuckDB files (relative to the config's folder).

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "veil.toml").write_text('''
... [source]
... url = "duckdb:///w.duckdb"
... table = "raw.patients"
... [[quasi_identifiers]]
... column = "age"
... hierarchy = { intervals = [10, 20] }
... [[models]]
... type = "k-anonymity"
... k = 4
... ''')
>>> cfg = load(d / "veil.toml")
>>> cfg.source.schema, cfg.source.table, cfg.source.resolved_url() == f"duckdb:///{d / 'w.duckdb'}"
('raw', 'patients', True)
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from veil import files as fs
from veil import hierarchy as h
from veil import releasenames, tomlscan
from veil.auditsettings import AuditSettings, parse_audit
from veil.errors import ConfigError
from veil.models import Model
from veil.models import build as build_model
from veil.registry import STRATEGIES
from veil.settings import Table, defaults, near, unknown_keys
from veil.workloadsettings import Query, parse_workload

# Config keys whose string value names a file (relative to the config's folder), wherever they occur:
# quasi-identifier hierarchies and model hierarchies (``hierarchy = { csv = "..." }``).  A new key that names
# a file belongs here, so that its contents are part of the release's config hash
# (tests/test_change_detection.py checks that every path a model resolves is listed) and so that the file is
# held to the rules of ``veil.files`` (inside the config's folder or ``[files] allow``, a regular file).
FILE_KEYS = frozenset({"csv"})

# Schemas a release may not write into: the databases' own (PostgreSQL reserves every name starting with pg_;
# DuckDB's system and temp catalogs would shadow a schema of that name).  Compared case-insensitively.
RESERVED_SCHEMAS = frozenset({"information_schema", "pg_catalog", "pg_toast", "system", "temp"})

NULL_POLICIES = ("error", "drop")
# veil.metrics.REGISTRY's names (tests/test_workload.py keeps them equal; a config parse loads no numpy)
METRICS = ("height", "precision", "avg-block-size", "discernibility", "kl-divergence", "workload")
# The top-level keys ``parse`` reads (the optional sections only when present): a misspelt one is refused
# first, with a suggestion — read as absent, it would otherwise surface as another error (``Table.typos``).
TOP_LEVEL = ("files", "source", "quasi_identifiers", "sensitive", "models", "search", "release", "audit", "workload")
SERIES_POLICIES = ("cohort", "refuse", "off")  # docs/series.md

# Bump when the same config and the same source would publish something different (a new generalization,
# suppression or verification rule, a new column in release tables, ...).  It is part of every release's
# config hash (``Config.digest``), so the first run of a Veil with new semantics publishes a new version instead
# of "unchanged".
RELEASE_SEMANTICS = 2  # 2: KL-divergence of a true reconstruction, exact optimum ties, char(n) unpadded


@dataclass(frozen=True)
class SourceConfig:
    table: str
    schema: str | None = None
    url: str | None = None
    url_env: str | None = None
    nulls: str = "error"
    base_dir: Path = Path(".")

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.table}" if self.schema else self.table

    def resolved_url(self) -> str:
        """The SQLAlchemy URL: from ``url_env`` or ``url``; a relative DuckDB file is relative to the config."""
        if self.url_env is not None:
            value = os.environ.get(self.url_env)
            if not value:
                raise ConfigError(f"[source] url_env names environment variable {self.url_env!r}, which is not set")
            return value
        assert self.url is not None
        prefix = "duckdb:///"
        if self.url.startswith(prefix):
            rest = self.url[len(prefix) :]
            if rest and not rest.startswith(":memory:") and not rest.startswith("/"):
                return prefix + str((self.base_dir / rest).resolve())
        return self.url


@dataclass(frozen=True)
class QuasiIdentifier:
    column: str
    hierarchy: h.HierarchySpec


@dataclass(frozen=True)
class SearchConfig:
    strategy: str = "optimal"
    metric: str = "discernibility"
    max_suppression: float = 0.0
    local_cells: int | None = None  # a base frequency set of at most this many cells is searched in memory
    #                                 (None: the backend's own, ``Backend.local_cells``)


@dataclass(frozen=True)
class ReleaseConfig:
    name: str
    schema: str = "published"
    catalog_schema: str = "veil"
    drop_columns: tuple[str, ...] = ()
    keep_columns: tuple[str, ...] = ()
    grant_select_to: tuple[str, ...] = ()
    series: str = "cohort"  # how a version may differ from earlier ones (docs/series.md)
    keep_versions: int = 10  # versions whose rows stay addressable (docs/publication.md)
    key: tuple[str, ...] = ()  # columns that tell people apart (default: the whole source row; docs/series.md §2)
    batch: int | None = None  # the smallest batch a reader may isolate (default: the models' smallest block)
    series_block: int | None = None  # a cohort series' node: this share of rows in blocks of this many (§9.4)
    series_block_share: float = 0.95
    series_standing: float = 0.01  # a cohort series' first version: blocks for at most this share standing in (§9.5)
    series_delay: int = 90  # nights: a cohort series moves its node up when joiners would wait longer (0: never)
    series_cohort: int | None = None  # a cohort series: the fewest joiners a cohort forms with (default: batch; §9.5)
    series_budget: float = 0.06  # a cohort series plans node and cohorts for at most this share held (§2b; 0: no plan)
    new_series: bool = False  # ``veil release --new-series``: this version begins a new series (not in the TOML)
    erase_departed: bool = False  # ``veil release --erase-departed``: every stand-in leaves tonight (not in the TOML)
    report: str | None = None  # folder (relative to the config) for a report per published version


@dataclass(frozen=True)
class Config:
    path: Path
    source: SourceConfig
    quasi_identifiers: tuple[QuasiIdentifier, ...]
    sensitive: tuple[str, ...]
    models: tuple[Model, ...]
    search: SearchConfig = SearchConfig()
    release: ReleaseConfig | None = None
    text: str = field(default="", repr=False)
    data: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    files: tuple[Path, ...] = ()
    audit: AuditSettings = field(default_factory=AuditSettings, repr=False, compare=False)  # [audit], parsed once
    workload: tuple[Query, ...] = field(default=(), repr=False, compare=False)  # [[workload]], parsed once

    @property
    def attributes(self) -> tuple[str, ...]:
        return tuple(q.column for q in self.quasi_identifiers)

    @property
    def digest(self) -> str:
        """What defines a release, hashed: Veil's release semantics, the config's settings (comments and
        layout do not count) and the contents of every file it references (``files``).

        >>> a = Config(Path("v.toml"), SourceConfig("t", url="duckdb:///w.duckdb"), (), (), (), data={"k": 1})
        >>> a.digest == Config(a.path, a.source, (), (), (), data={"k": 2}).digest
        False
        """
        sha = hashlib.sha256(f"veil release semantics {RELEASE_SEMANTICS}\n".encode())
        sha.update(json.dumps(self.data, sort_keys=True, default=str, ensure_ascii=False).encode())
        for path in self.files:
            try:
                content = fs.read_bounded(path, fs.MAX_HIERARCHY_BYTES)
            except (OSError, fs.Refused):
                content = b"\0missing"
            sha.update(f"\n{path.name} {len(content)}\n".encode())
            sha.update(content)
        for where, rows in self._read_hierarchies():  # hierarchies read from warehouse tables (or DataFrames)
            sha.update(f"\n{where}\n".encode())
            sha.update(json.dumps(rows, default=str, ensure_ascii=False).encode())
        return sha.hexdigest()

    def _read_hierarchies(self) -> list[tuple[str, Any]]:
        """The rows of every hierarchy that was read into memory (``RowsSpec``: a warehouse table resolved by
        the run, or a DataFrame), quasi-identifiers' and models' alike — part of what defines a release."""
        specs: list[tuple[str, object]] = [
            (f"quasi-identifier {q.column}", q.hierarchy) for q in self.quasi_identifiers
        ]
        specs += [(f"model {i} hierarchy", getattr(m, "hierarchy", None)) for i, m in enumerate(self.models)]
        return [
            (where, [[v, list(labels)] for v, labels in spec.rows])
            for where, spec in specs
            if isinstance(spec, h.RowsSpec)
        ]

    @property
    def catalog_schema(self) -> str:
        return self.release.catalog_schema if self.release else defaults(ReleaseConfig)["catalog_schema"]


HIERARCHY_KINDS = ("csv", "table", "intervals", "mask", "suppress", "dates", "taxonomy")


def _hierarchy(data: Any, where: str, file: Path | str, base: Path, column: str, check: bool = True) -> h.HierarchySpec:
    """One hierarchy from its table (``{ csv = ... }``, ``{ table = ... }``, a builder), or as given when
    the Python API already turned a DataFrame into rows.  ``check``: validate what can be validated without
    the source (a CSV file readable, one height, a function chain) now."""
    if isinstance(data, h.RowsSpec):
        spec: h.HierarchySpec = data
    else:
        t = Table(data, where, file)
        kinds = [k for k in HIERARCHY_KINDS if k in t.data]
        if len(kinds) != 1:
            typos = list(dict.fromkeys(k for kind in HIERARCHY_KINDS for k in near(t.data, kind))) if not kinds else []
            hint = f"; unknown key(s) {unknown_keys(typos, HIERARCHY_KINDS)}" if typos else ""
            raise ConfigError(
                f"{file}: {where} must have exactly one of {', '.join(HIERARCHY_KINDS)}"
                f" (found: {', '.join(kinds) or 'none'}{hint})"
            )
        spec = _HIERARCHY_READERS[kinds[0]](t, base)
        t.finish()
    if not check:
        return spec
    try:
        h.check_spec(spec, column)
    except Exception as exc:  # HierarchyError: keep its message, add the file
        raise ConfigError(f"{file}: {where}: {exc}") from None
    return spec


def _csv(t: Table, base: Path) -> h.HierarchySpec:
    rel = t.get("csv", (str, os.PathLike), what="a file name")
    if not str(rel):
        raise t.error("csv", "must not be empty")
    delimiter = t.get("delimiter", str, ";")
    if len(delimiter) != 1:
        raise t.error("delimiter", f"must be one character, got {delimiter!r}")
    return h.CsvSpec(path=_resolve(rel, base), delimiter=delimiter)


def _resolve(value: str | os.PathLike[str], base: Path) -> Path:
    """A path the config names: absolute as written, else relative to the config's folder ``base``."""
    path = Path(value)
    return path if path.is_absolute() else base / path


def _table(t: Table, base: Path) -> h.HierarchySpec:
    name = t.name("table")
    columns = t.names("columns") if "columns" in t.data else None
    if columns is not None and len(columns) < 2:
        raise t.error("columns", f"must name the value column and at least one level above it, got {list(columns)}")
    return h.TableSpec(name=name, columns=columns)


def _intervals(t: Table, base: Path) -> h.HierarchySpec:
    """``{ intervals = [10, 20], start = 0 }``: finite positive widths and a finite start (``inf`` and ``nan``
    are valid TOML floats, but no interval has them as bounds)."""
    widths = t.get("intervals", list)
    if not widths or not all(isinstance(w, (int, float)) and not isinstance(w, bool) for w in widths):
        raise t.error("intervals", f"must be a non-empty list of positive widths, got {widths!r}")
    if not all(math.isfinite(w) for w in widths):
        raise t.error("intervals", f"must hold finite widths, got {widths!r}")
    if not all(w > 0 for w in widths):
        raise t.error("intervals", f"must be a non-empty list of positive widths, got {widths!r}")
    start = t.get("start", (int, float), 0)
    if not math.isfinite(start):
        raise t.error("start", f"must be a finite number, got {start!r}")
    return h.IntervalsSpec(widths=tuple(widths), start=start)


def _flag(kind: str, spec: h.HierarchySpec) -> Callable[[Table, Path], h.HierarchySpec]:
    def read(t: Table, base: Path) -> h.HierarchySpec:
        if t.get(kind, bool) is not True:
            raise t.error(kind, "must be true")
        return spec

    return read


def _dates(t: Table, base: Path) -> h.HierarchySpec:
    value = t.get("dates", (bool, list))
    if value is True:
        return h.DatesSpec()
    if value is False or not value or not all(isinstance(s, str) for s in value):
        raise t.error("dates", f"must be true or a list of steps from {list(h.DATE_STEPS)}, got {value!r}")
    return h.DatesSpec(steps=tuple(value))


def _taxonomy(t: Table, base: Path) -> h.HierarchySpec:
    mapping = t.get("taxonomy", dict)
    rows = []
    for value, labels in mapping.items():
        if isinstance(labels, tuple):
            labels = list(labels)
        if not isinstance(labels, list) or not labels or not all(isinstance(x, str) for x in labels):
            raise t.error(
                "taxonomy", f"value {value!r} must map to a non-empty list of labels (levels 1..h), got {labels!r}"
            )
        rows.append((str(value), tuple(labels)))
    if not rows:
        raise t.error("taxonomy", "is empty")
    return h.TaxonomySpec(mapping=tuple(rows))


_HIERARCHY_READERS: dict[str, Callable[[Table, Path], h.HierarchySpec]] = {
    "csv": _csv,
    "table": _table,
    "intervals": _intervals,
    "mask": _flag("mask", h.MaskSpec()),
    "suppress": _flag("suppress", h.SuppressSpec()),
    "dates": _dates,
    "taxonomy": _taxonomy,
}


def _split_table(name: str) -> tuple[str | None, str]:
    schema, dot, table = name.rpartition(".")
    return (schema if dot else None), table


def referenced_files(data: Any, base: Path) -> tuple[Path, ...]:
    """Every file the parsed config names under a key of ``FILE_KEYS`` (in order of appearance, once each).

    >>> referenced_files({"quasi_identifiers": [{"hierarchy": {"csv": "age.csv"}}],
    ...                   "models": [{"hierarchy": {"csv": "/h/disease.csv"}}]}, Path("/cfg"))
    (PosixPath('/cfg/age.csv'), PosixPath('/h/disease.csv'))
    """
    found: list[Path] = []
    for _trail, value in _file_values(data):
        path = _resolve(value, base)
        if path not in found:
            found.append(path)
    return tuple(found)


def _file_values(node: Any, trail: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """``(trail, value)`` of every string under a key of ``FILE_KEYS``, ``trail`` the keys and list positions
    that lead to it.

    >>> list(_file_values({"models": [{"type": "t-closeness", "hierarchy": {"csv": "d.csv"}}]}))
    [(('models', 0, 'hierarchy', 'csv'), 'd.csv')]
    """
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key in FILE_KEYS and isinstance(value, str):
                yield (*trail, key), value
            else:
                yield from _file_values(value, (*trail, key))
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from _file_values(item, (*trail, i))


def _key_name(trail: Sequence[str | int]) -> str:
    """How an error names the key at ``trail``, TOML's way.

    >>> _key_name(("quasi_identifiers", 0, "hierarchy", "csv")), _key_name(("audit", "attributes", "d", "csv"))
    ("[[quasi_identifiers]] #1 hierarchy key 'csv'", "[audit.attributes.d] key 'csv'")
    """
    *where, last = trail
    first = next((i for i, part in enumerate(where) if isinstance(part, int)), None)
    if first is None:
        return f"[{'.'.join(map(str, where))}] key {last!r}" if where else f"key {last!r}"
    rest = " ".join(f"#{part + 1}" if isinstance(part, int) else str(part) for part in where[first + 1 :])
    return f"[[{'.'.join(map(str, where[:first]))}]] #{int(where[first]) + 1}{' ' + rest if rest else ''} key {last!r}"


def allowed_folders(data: Any, file: Path | str, base: Path) -> tuple[Path, ...]:
    """``[files] allow``: folders outside the config's folder whose files the config may name (hierarchies;
    the report folder), resolved; each must be a folder, none under ``/proc``, ``/sys`` or ``/dev``."""
    if "files" not in data:
        return ()
    t = Table(data["files"], "[files]", file)
    entries = t.names("allow", ())
    t.finish()
    folders = []
    for entry in entries:
        path = _resolve(entry, base)
        why = fs.refusal(path) or (None if path.is_dir() else "is not a folder")
        if why:
            raise t.error("allow", f"entry {entry!r} {why}")
        folders.append(fs.real(path))
    return tuple(folders)


def check_files(data: Any, file: Path | str, base: Path, allowed: Sequence[Path]) -> None:
    """Every file the config names (``FILE_KEYS``) must resolve, symlinks too, inside the config's folder,
    a folder of ``allowed`` or Veil's bundled hierarchies, and be a regular file of at most
    ``MAX_HIERARCHY_BYTES`` (a missing file is left to its reader, which says so)."""
    roots = (fs.real(base), *allowed, fs.bundled())
    for trail, value in _file_values(data):
        if not value:
            raise ConfigError(f"{file}: {_key_name(trail)} must not be empty")
        where = f"{file}: {_key_name(trail)} = {value!r}"
        path = _resolve(value, base)
        why = fs.refusal(path)
        if why:
            raise ConfigError(f"{where} {why}")
        if fs.outside(path, roots):
            raise ConfigError(f"{where} {_outside(path, base)}")
        try:
            fs.check_regular(path, fs.MAX_HIERARCHY_BYTES)
        except fs.Refused as exc:
            raise ConfigError(f"{where} {exc}") from None
        except OSError:
            pass


def _outside(path: Path, base: Path) -> str:
    """Why ``path`` may not be used: outside the config's folder (and where its symlinks lead)."""
    real = fs.real(path)
    leads = f" (it resolves to {real})" if real != Path(os.path.abspath(path)) else ""
    return (
        f"is outside the config's folder {fs.real(base)}{leads}; Veil reads and writes only there, unless "
        "[files] allow lists the folder"
    )


def parse(text: str, file: Path, *, check_hierarchies: bool = True) -> Config:
    """Parse config ``text`` read from ``file`` (relative paths resolve against ``file``'s folder).
    ``check_hierarchies=False`` defers the hierarchies' own validation (``veil hierarchy --check`` reports
    every problem of every hierarchy at once); where the files it names are, and what they are, is checked
    either way (``check_files``)."""
    data = _toml(text, file)
    top = Table(data, "the top level", file)
    top.typos(TOP_LEVEL)
    base = file.parent
    top.read.add("files")
    allowed = allowed_folders(data, file, base)
    check_files(data, file, base, allowed)
    source = _source(Table(top.get("source", dict), "[source]", file), base)
    qi_tables = _quasi_identifier_tables(top, file)
    sensitive: tuple[str, ...] = ()
    if "sensitive" in data:
        st = Table(top.get("sensitive", dict), "[sensitive]", file)
        sensitive = st.names("columns")
        st.finish()
    raw_models = top.get("models", list, what="an array of tables [[models]]")
    if not raw_models:
        raise ConfigError(f"{file}: [[models]] must list at least one privacy model")
    search = search_settings(top.get("search", dict), file) if "search" in data else SearchConfig()
    config = assemble(
        file=file,
        base=base,
        source=source,
        quasi_identifiers=qi_tables,
        sensitive=sensitive,
        models=[(raw, f"[[models]] #{i}") for i, raw in enumerate(raw_models, start=1)],
        search=search,
        text=text,
        check_hierarchies=check_hierarchies,
    )
    release = None
    if "release" in data:
        r = Table(top.get("release", dict), "[release]", file)
        release = _release(r)
        _check_release(r, release, config, allowed)
    audit = parse_audit(top.get("audit", dict, {}), file, sensitive)
    workload = parse_workload(top.get("workload", list, [], what="an array of tables [[workload]]"), file, config)
    top.finish()
    return replace(
        config, release=release, data=data, files=referenced_files(data, base), audit=audit, workload=workload
    )


def _source(src: Table, base: Path) -> SourceConfig:
    """``[source]``: where the table is (``url`` for an embedded DuckDB file, else ``url_env``) and its NULLs."""
    url = src.get("url", str, None)
    url_env = src.get("url_env", str, None)
    if (url is None) == (url_env is None):
        raise ConfigError(
            f"{src.file}: [source] needs exactly one of 'url' (embedded DuckDB file) or 'url_env' "
            "(name of an environment variable holding the URL)"
        )
    if url is not None and not url.startswith("duckdb:"):
        raise ConfigError(
            f"{src.file}: [source] key 'url' may only hold an embedded DuckDB URL (duckdb:///file); "
            "put server URLs in an environment variable and name it with 'url_env'"
        )
    schema, table = _split_table(src.name("table"))
    if not table:
        raise src.error("table", "has an empty table name")
    nulls = src.get("nulls", str, "error")
    if nulls not in NULL_POLICIES:
        raise src.error("nulls", f"must be one of {', '.join(NULL_POLICIES)}, got {nulls!r}")
    src.finish()
    return SourceConfig(table=table, schema=schema or None, url=url, url_env=url_env, nulls=nulls, base_dir=base)


def _quasi_identifier_tables(top: Table, file: Path) -> list[tuple[str, Any, str]]:
    """``[[quasi_identifiers]]`` as ``(column, hierarchy table, where)``, for ``assemble``."""
    raw_qis = top.get("quasi_identifiers", list, what="an array of tables [[quasi_identifiers]]")
    if not raw_qis:
        raise ConfigError(f"{file}: [[quasi_identifiers]] must list at least one quasi-identifier")
    qi_tables: list[tuple[str, Any, str]] = []
    for i, raw in enumerate(raw_qis, start=1):
        t = Table(raw, f"[[quasi_identifiers]] #{i}", file)
        column = t.name("column")
        qi_tables.append((column, t.get("hierarchy", dict), f"{t.where} ({column!r}) hierarchy"))
        t.finish()
    return qi_tables


def _release(r: Table) -> ReleaseConfig:
    """``[release]``'s keys, each of its type, defaults as ``ReleaseConfig`` declares them (``_check_release``
    then checks them against each other)."""
    d = defaults(ReleaseConfig)
    release = ReleaseConfig(
        name=r.name("name"),
        schema=r.name("schema", d["schema"]),
        catalog_schema=r.name("catalog_schema", d["catalog_schema"]),
        drop_columns=r.names("drop_columns", d["drop_columns"]),
        keep_columns=r.names("keep_columns", d["keep_columns"]),
        grant_select_to=r.names("grant_select_to", d["grant_select_to"]),
        series=r.name("series", d["series"]),
        keep_versions=r.get("keep_versions", int, d["keep_versions"]),
        key=r.names("key", d["key"]),
        batch=r.get("batch", int, d["batch"]),
        series_block=r.get("series_block", int, d["series_block"]),
        series_block_share=float(r.get("series_block_share", (int, float), d["series_block_share"])),
        series_standing=float(r.get("series_standing", (int, float), d["series_standing"])),
        series_delay=r.get("series_delay", int, d["series_delay"]),
        series_cohort=r.get("series_cohort", int, d["series_cohort"]),
        series_budget=float(r.get("series_budget", (int, float), d["series_budget"])),
        report=r.get("report", str, d["report"]),
    )
    r.finish()
    return release


def _check_series_block(r: Table, release: ReleaseConfig) -> None:
    """``series_block`` (a cohort series' floor on block sizes, docs/series.md §9.4) and its share,
    ``series_standing`` and ``series_cohort`` (§9.5), ``series_delay`` (§2a) and ``series_budget`` (§2b)."""
    if release.series_block is not None:
        if release.series != "cohort":
            raise r.error("series_block", f'applies to series = "cohort" only, not {release.series!r}')
        if release.series_block < 2:
            raise r.error("series_block", f"must be at least 2 rows, got {release.series_block!r}")
    elif r.has("series_block_share"):
        raise r.error("series_block_share", "needs series_block (the rows a block must hold)")
    if not 0 < release.series_block_share <= 1:
        raise r.error("series_block_share", f"must be a fraction in (0, 1], got {release.series_block_share!r}")
    for key, what in (
        ("series_standing", "floor"),
        ("series_delay", ""),
        ("series_cohort", ""),
        ("series_budget", "plan"),
    ):
        if r.has(key) and release.series != "cohort":
            raise r.error(key, f'applies to series = "cohort" only, not {release.series!r}')
        if what and not 0 <= getattr(release, key) < 1:
            raise r.error(key, f"must be 0 (no {what}) or a fraction in (0, 1), got {getattr(release, key)!r}")
    if release.series_delay < 0:
        raise r.error("series_delay", f"must be 0 (no bound) or a number of nights, got {release.series_delay!r}")
    if release.series_cohort is not None and release.series_cohort < 2:
        raise r.error("series_cohort", f"must be at least 2 rows, got {release.series_cohort!r}")


def _check_release(r: Table, release: ReleaseConfig, config: Config, allowed: Sequence[Path]) -> None:
    """``[release]`` against itself, the source and the columns: where it writes, its policy and sizes, columns
    dropped or kept that are also published, schemas that are the source's, names too long."""
    file, source = r.file, config.source
    columns, sensitive = set(config.attributes), set(config.sensitive)
    _release_places(r, release, source.base_dir, allowed)
    if release.series == "defer":
        raise r.error(
            "series",
            '"defer" was replaced by "cohort" (its padding depended on a leaver\'s values, '
            'so a reader could replay it: docs/series.md §4); write series = "cohort"',
        )
    if release.series not in SERIES_POLICIES:
        raise r.error("series", f"must be one of {', '.join(map(repr, SERIES_POLICIES))}, got {release.series!r}")
    if release.batch is not None and release.batch < 2:
        raise r.error("batch", f"must be at least 2 (a batch of one is one person), got {release.batch!r}")
    _check_series_block(r, release)
    if release.keep_versions < 1:
        raise r.error("keep_versions", f"must be at least 1 (the current version), got {release.keep_versions!r}")
    overlap = sorted(set(release.drop_columns) & (set(release.keep_columns) | columns | sensitive))
    if overlap:
        raise ConfigError(
            f"{file}: [release] drop_columns names column(s) {', '.join(map(repr, overlap))} "
            "that are also kept, quasi-identifiers or sensitive"
        )
    kept_clash = sorted(set(release.keep_columns) & (columns | sensitive))
    if kept_clash:
        raise ConfigError(
            f"{file}: [release] keep_columns names column(s) {', '.join(map(repr, kept_clash))} "
            "that are quasi-identifiers or sensitive (those are always published)"
        )
    if source.schema is not None and release.schema == source.schema:
        raise ConfigError(
            f"{file}: [release] schema {release.schema!r} is the source's schema; "
            "Veil never writes into the source's schema"
        )
    if release.catalog_schema == source.schema:
        raise ConfigError(
            f"{file}: [release] catalog_schema {release.catalog_schema!r} is the source's schema; "
            "Veil never writes into the source's schema"
        )
    release_names(release, source, file)


MAX_IDENTIFIER = 63  # bytes: PostgreSQL truncates longer names, so two of Veil's objects could collide


def _toml(text: str, file: Path) -> dict[str, Any]:
    """``text`` parsed, once :func:`veil.tomlscan.scan` found it within its limits (depth, dotted keys), so no
    config makes the parser run out of time, memory or stack; a last-resort guard turns those into one line."""
    try:
        tomlscan.scan(text)
    except tomlscan.Exceeded as exc:
        raise ConfigError(f"{file}: {exc}; the config is not parsed") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: not valid TOML: {exc}") from None
    except (RecursionError, MemoryError) as exc:
        raise ConfigError(f"{file}: too deeply nested or too large to parse ({type(exc).__name__})") from None
    except ValueError as exc:  # a number beyond Python's digit limit for int()
        raise ConfigError(f"{file}: not valid TOML: {' '.join(str(exc).split())}") from None


def _release_places(r: Table, release: ReleaseConfig, base: Path, allowed: Sequence[Path]) -> None:
    """Where a release writes: no schema a database reserves for itself, a report folder inside the
    config's folder (or a folder of ``[files] allow``)."""
    for key, schema in (("schema", release.schema), ("catalog_schema", release.catalog_schema)):
        if schema.lower() in RESERVED_SCHEMAS or schema.lower().startswith("pg_"):
            raise r.error(
                key,
                f"names {schema!r}, a schema the database reserves for itself (PostgreSQL: "
                "information_schema and pg_*; DuckDB: information_schema, pg_catalog, system, temp)",
            )
    if release.report is None:
        return
    if not release.report:
        raise r.error("report", "must not be empty (the folder for reports)")
    folder = _resolve(release.report, base)
    why = fs.refusal(folder)
    if why is None and fs.outside(folder, (base, *allowed)):
        why = _outside(folder, base)
    if why is None and folder.exists() and not folder.is_dir():
        why = "is not a folder"
    if why:
        raise r.error("report", f"= {release.report!r} {why}")


def release_names(release: ReleaseConfig, source: SourceConfig, file: Path | str) -> None:
    """Reject release names whose longest generated object would not fit PostgreSQL's 63-byte identifiers
    (``<name>_v<N>_blocks`` and ``<name>_v<N>`` must stay distinct after truncation), schema names that do
    not fit, and an unqualified source table (its schema is only known on the connection, so Veil could not
    make sure the release never lands in it).

    >>> release_names(ReleaseConfig("x" * 44), SourceConfig("t", schema="raw"), "v.toml")
    >>> release_names(ReleaseConfig("x" * 45), SourceConfig("t", schema="raw"), "v.toml")
    Traceback (most recent call last):
    veil.errors.ConfigError: v.toml: [release] name 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' is too long: ...
    """
    generated = [
        *releasenames.names(release.name, 2**31 - 1).values(),
        f"{releasenames.names(release.name)['block_rows']}_version",
    ]
    longest = max(generated, key=lambda n: len(n.encode()))
    if len(longest.encode()) > MAX_IDENTIFIER:
        room = MAX_IDENTIFIER - (len(longest.encode()) - len(release.name.encode()))
        raise ConfigError(
            f"{file}: [release] name {release.name!r} is too long: Veil names objects up to "
            f"{longest!r} ({len(longest.encode())} bytes), beyond PostgreSQL's {MAX_IDENTIFIER}-byte "
            f"identifiers; use a name of at most {room} bytes"
        )
    for key, schema in (("schema", release.schema), ("catalog_schema", release.catalog_schema)):
        if len(schema.encode()) > MAX_IDENTIFIER:
            raise ConfigError(
                f"{file}: [release] {key} {schema!r} is longer than PostgreSQL's {MAX_IDENTIFIER}-byte identifiers"
            )
    if source.schema is None:
        raise ConfigError(
            f"{file}: [source] table {source.table!r} names no schema; with a [release] table write "
            f"it as schema.table (e.g. 'public.{source.table}' or 'main.{source.table}') so that the "
            f"release (schema {release.schema!r}) never lands in the source's schema"
        )


def assemble(
    *,
    file: Path | str,
    base: Path,
    source: SourceConfig,
    quasi_identifiers: Sequence[tuple[str, Any, str]],
    sensitive: tuple[str, ...],
    models: Sequence[tuple[Any, str]],
    search: SearchConfig,
    text: str = "",
    check_hierarchies: bool = True,
) -> Config:
    """The frozen ``Config`` from plain values — the one construction the TOML file and the Python API share.

    ``quasi_identifiers`` are ``(column, hierarchy table, where)``, ``models`` are ``(model table, where)``:
    the tables as TOML or a Python caller writes them (dicts), ``where`` how errors name them (a TOML
    section, or the API's argument and key); errors start with ``file``."""
    qis = tuple(
        QuasiIdentifier(column, _hierarchy(raw, where, file, base, column, check_hierarchies))
        for column, raw, where in quasi_identifiers
    )
    columns = [q.column for q in qis]
    dupes = sorted({c for c in columns if columns.count(c) > 1})
    if dupes:
        raise ConfigError(f"{file}: [[quasi_identifiers]] lists column(s) {', '.join(map(repr, dupes))} twice")
    clash = sorted(set(sensitive) & set(columns))
    if clash:
        raise ConfigError(f"{file}: column(s) {', '.join(map(repr, clash))} are both quasi-identifier and sensitive")
    built = []
    for raw, where in models:
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{file}: {where} must be a table, got {type(raw).__name__}")
        built.append(build_model(raw, where=f"{file}: {where}", sensitive=sensitive, base_dir=base))
    return Config(
        path=Path(file),
        source=source,
        quasi_identifiers=qis,
        sensitive=sensitive,
        models=tuple(built),
        search=search,
        text=text,
    )


def search_settings(
    data: Any, file: Path | str, where: str = "[search]", key: Callable[[str], str] | None = None
) -> SearchConfig:
    """``[search]`` — or the Python API's ``metric`` / ``max_suppression`` arguments, named by ``key``."""
    s, d = Table(data, where, file, key), defaults(SearchConfig)
    strategy = s.get("strategy", str, d["strategy"])
    if strategy not in STRATEGIES:
        raise s.error("strategy", f"must be one of {', '.join(STRATEGIES.names())}, got {strategy!r}")
    metric = s.get("metric", str, d["metric"])
    if metric not in METRICS:
        raise s.error("metric", f"must be one of {', '.join(METRICS)}, got {metric!r}")
    budget = s.get("max_suppression", (int, float), d["max_suppression"])
    if not 0 <= budget < 1:
        full = "; 1.0 would allow a release with every row suppressed" if budget >= 1 else ""
        raise s.error("max_suppression", f"must be a fraction in [0, 1), got {budget!r}{full}")
    local = s.get("local_cells", int, d["local_cells"])
    if local is not None and (isinstance(local, bool) or local < 0):
        raise s.error("local_cells", f"must be a whole number of cells, 0 or more, got {local!r}")
    s.finish()
    return SearchConfig(strategy=strategy, metric=metric, max_suppression=float(budget), local_cells=local)


def load(path: str | Path, *, check_hierarchies: bool = True) -> Config:
    """Read and parse the config file at ``path``: a regular file of at most ``files.MAX_CONFIG_BYTES`` (never
    a device, a FIFO or anything under ``/proc``), UTF-8."""
    file = fs.real(Path(path))
    try:
        raw = fs.read_bounded(Path(os.path.abspath(path)), fs.MAX_CONFIG_BYTES)
    except fs.Refused as exc:
        raise ConfigError(f"config file {path} {exc}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"{file}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} on line {line}); save the config file as UTF-8"
        ) from None
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # as a text-mode read gives it
    return parse(text, file, check_hierarchies=check_hierarchies)


def override(config: Config, **search: Any) -> Config:
    """A copy with some ``[search]`` settings replaced (CLI flags)."""
    from dataclasses import replace

    changes = {k: v for k, v in search.items() if v is not None}
    return replace(config, search=replace(config.search, **changes)) if changes else config


def require_release(config: Config) -> ReleaseConfig:
    if config.release is None:
        raise ConfigError(f"{config.path}: this command needs a [release] table (name, schema, ...)")
    return config.release


def sensitive_needed(config: Config) -> Sequence[str]:
    """The sensitive columns some model reads, in config order (none when every model needs only block
    sizes; all of them for multi-attribute l-diversity, which keys each on the others)."""
    from veil.models.base import Needs

    wanted: set[str] = set()
    for m in config.models:
        if m.properties.needs is Needs.JOINT:
            wanted.update(config.sensitive)
        elif m.properties.needs is not Needs.SIZES and m.attribute is not None:
            wanted.add(m.attribute)
    return tuple(c for c in config.sensitive if c in wanted)
