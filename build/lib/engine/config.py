"""The release config: frozen dataclasses parsed from a TOML file, the user's single source of truth.

Unknown keys, wrong types and missing required keys are ``ConfigError`` naming the file and the key.
Names are taken literally (case-sensitive, quoted in SQL).  Credentials never sit in the file: ``url_env``
names an environment variable; a literal ``url`` is for embedded DuckDB files (relative to the config's
folder).

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
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine import hierarchy as h
from engine.errors import ConfigError
from engine.models import Model
from engine.models import build as build_model

NULL_POLICIES = ("error", "drop")
STRATEGIES = ("optimal", "incognito", "brute-force")
METRICS = ("height", "precision", "avg-block-size", "discernibility", "kl-divergence")


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
            rest = self.url[len(prefix):]
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


@dataclass(frozen=True)
class ReleaseConfig:
    name: str
    schema: str = "published"
    catalog_schema: str = "veil"
    drop_columns: tuple[str, ...] = ()
    keep_columns: tuple[str, ...] = ()
    grant_select_to: tuple[str, ...] = ()


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

    @property
    def attributes(self) -> tuple[str, ...]:
        return tuple(q.column for q in self.quasi_identifiers)

    @property
    def digest(self) -> str:
        """SHA-256 of the config file's text and of every hierarchy file it names."""
        sha = hashlib.sha256(self.text.encode())
        for q in self.quasi_identifiers:
            if isinstance(q.hierarchy, h.CsvSpec) and q.hierarchy.path.exists():
                sha.update(q.hierarchy.path.read_bytes())
        return sha.hexdigest()

    @property
    def catalog_schema(self) -> str:
        return self.release.catalog_schema if self.release else "veil"


class _Table:
    """One TOML table being read: typed getters; ``finish()`` rejects keys nobody read."""

    def __init__(self, data: Any, where: str, file: Path) -> None:
        if not isinstance(data, Mapping):
            raise ConfigError(f"{file}: {where} must be a table, got {type(data).__name__}")
        self.data, self.where, self.file, self.read = data, where, file, set()

    def error(self, key: str, message: str) -> ConfigError:
        return ConfigError(f"{self.file}: {self.where} key {key!r} {message}")

    def get(self, key: str, kinds: type | tuple[type, ...], default: Any = ..., what: str = "") -> Any:
        self.read.add(key)
        if key not in self.data:
            if default is ...:
                raise ConfigError(f"{self.file}: {self.where} is missing required key {key!r}")
            return default
        value = self.data[key]
        if isinstance(value, bool) and bool not in (kinds if isinstance(kinds, tuple) else (kinds,)):
            raise self.error(key, f"must be {what or _names(kinds)}, got {value!r}")
        if not isinstance(value, kinds):
            raise self.error(key, f"must be {what or _names(kinds)}, got {type(value).__name__} {value!r}")
        return value

    def name(self, key: str, default: Any = ...) -> Any:
        value = self.get(key, str, default, "a non-empty string")
        if isinstance(value, str) and not value:
            raise self.error(key, "must not be empty")
        return value

    def names(self, key: str, default: Any = ...) -> tuple[str, ...]:
        value = self.get(key, list, default, "a list of strings")
        if not all(isinstance(v, str) and v for v in value):
            raise self.error(key, f"must be a list of non-empty strings, got {value!r}")
        if len(set(value)) != len(value):
            raise self.error(key, f"lists a name twice: {value!r}")
        return tuple(value)

    def finish(self) -> None:
        unknown = sorted(set(self.data) - self.read)
        if unknown:
            raise ConfigError(f"{self.file}: {self.where} has unknown key(s) {', '.join(map(repr, unknown))}")


def _names(kinds: type | tuple[type, ...]) -> str:
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    words = {str: "a string", int: "a whole number", float: "a number", list: "a list", dict: "a table", bool: "true/false"}
    return " or ".join(words.get(k, k.__name__) for k in kinds)


def _hierarchy(data: Any, where: str, file: Path, column: str) -> h.HierarchySpec:
    t = _Table(data, where, file)
    builders = [k for k in ("csv", "intervals", "mask", "suppress", "dates", "taxonomy") if k in t.data]
    if len(builders) != 1:
        raise ConfigError(f"{file}: {where} must have exactly one of csv, intervals, mask, suppress, dates, taxonomy"
                          f" (found: {', '.join(builders) or 'none'})")
    kind = builders[0]
    spec: h.HierarchySpec
    if kind == "csv":
        rel = t.name("csv")
        delimiter = t.get("delimiter", str, ";")
        path = Path(rel) if Path(rel).is_absolute() else file.parent / rel
        spec = h.CsvSpec(path=path, delimiter=delimiter)
    elif kind == "intervals":
        widths = t.get("intervals", list)
        if not widths or not all(isinstance(w, (int, float)) and not isinstance(w, bool) and w > 0 for w in widths):
            raise t.error("intervals", f"must be a non-empty list of positive widths, got {widths!r}")
        start = t.get("start", (int, float), 0)
        spec = h.IntervalsSpec(widths=tuple(widths), start=start)
    elif kind in ("mask", "suppress"):
        if t.get(kind, bool) is not True:
            raise t.error(kind, "must be true")
        spec = h.MaskSpec() if kind == "mask" else h.SuppressSpec()
    elif kind == "dates":
        value = t.get("dates", (bool, list))
        if value is True:
            spec = h.DatesSpec()
        elif value is False or not value or not all(isinstance(s, str) for s in value):
            raise t.error("dates", f"must be true or a list of steps from {list(h.DATE_STEPS)}, got {value!r}")
        else:
            spec = h.DatesSpec(steps=tuple(value))
    else:
        mapping = t.get("taxonomy", dict)
        rows = []
        for value, labels in mapping.items():
            if not isinstance(labels, list) or not labels or not all(isinstance(x, str) for x in labels):
                raise t.error("taxonomy", f"value {value!r} must map to a non-empty list of labels (levels 1..h), "
                                          f"got {labels!r}")
            rows.append((value, tuple(labels)))
        if not rows:
            raise t.error("taxonomy", "is empty")
        spec = h.TaxonomySpec(mapping=tuple(rows))
    t.finish()
    try:
        h.check_spec(spec, column)
    except Exception as exc:  # HierarchyError: keep its message, add the file
        raise ConfigError(f"{file}: {where}: {exc}") from None
    return spec


def _split_table(name: str) -> tuple[str | None, str]:
    schema, dot, table = name.rpartition(".")
    return (schema if dot else None), table


def parse(text: str, file: Path) -> Config:
    """Parse config ``text`` read from ``file`` (relative paths resolve against ``file``'s folder)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: not valid TOML: {exc}") from None
    top = _Table(data, "the top level", file)
    base = file.parent

    src = _Table(top.get("source", dict), "[source]", file)
    url = src.get("url", str, None)
    url_env = src.get("url_env", str, None)
    if (url is None) == (url_env is None):
        raise ConfigError(f"{file}: [source] needs exactly one of 'url' (embedded DuckDB file) or 'url_env' "
                          "(name of an environment variable holding the URL)")
    if url is not None and not url.startswith("duckdb:"):
        raise ConfigError(f"{file}: [source] key 'url' may only hold an embedded DuckDB URL (duckdb:///file); "
                          "put server URLs in an environment variable and name it with 'url_env'")
    schema, table = _split_table(src.name("table"))
    if not table:
        raise src.error("table", "has an empty table name")
    nulls = src.get("nulls", str, "error")
    if nulls not in NULL_POLICIES:
        raise src.error("nulls", f"must be one of {', '.join(NULL_POLICIES)}, got {nulls!r}")
    src.finish()
    source = SourceConfig(table=table, schema=schema or None, url=url, url_env=url_env, nulls=nulls, base_dir=base)

    qis: list[QuasiIdentifier] = []
    raw_qis = top.get("quasi_identifiers", list, what="an array of tables [[quasi_identifiers]]")
    if not raw_qis:
        raise ConfigError(f"{file}: [[quasi_identifiers]] must list at least one quasi-identifier")
    for i, raw in enumerate(raw_qis, start=1):
        where = f"[[quasi_identifiers]] #{i}"
        t = _Table(raw, where, file)
        column = t.name("column")
        spec = _hierarchy(t.get("hierarchy", dict), f"{where} ({column!r}) hierarchy", file, column)
        t.finish()
        qis.append(QuasiIdentifier(column=column, hierarchy=spec))
    columns = [q.column for q in qis]
    dupes = sorted({c for c in columns if columns.count(c) > 1})
    if dupes:
        raise ConfigError(f"{file}: [[quasi_identifiers]] lists column(s) {', '.join(map(repr, dupes))} twice")

    sensitive: tuple[str, ...] = ()
    if "sensitive" in data:
        st = _Table(top.get("sensitive", dict), "[sensitive]", file)
        sensitive = st.names("columns")
        st.finish()
    clash = sorted(set(sensitive) & set(columns))
    if clash:
        raise ConfigError(f"{file}: column(s) {', '.join(map(repr, clash))} are both quasi-identifier and sensitive")

    raw_models = top.get("models", list, what="an array of tables [[models]]")
    if not raw_models:
        raise ConfigError(f"{file}: [[models]] must list at least one privacy model")
    models = []
    for i, raw in enumerate(raw_models, start=1):
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{file}: [[models]] #{i} must be a table")
        models.append(build_model(raw, where=f"{file}: [[models]] #{i}", sensitive=sensitive, base_dir=base))

    search = SearchConfig()
    if "search" in data:
        s = _Table(top.get("search", dict), "[search]", file)
        strategy = s.get("strategy", str, "optimal")
        if strategy not in STRATEGIES:
            raise s.error("strategy", f"must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
        metric = s.get("metric", str, "discernibility")
        if metric not in METRICS:
            raise s.error("metric", f"must be one of {', '.join(METRICS)}, got {metric!r}")
        budget = s.get("max_suppression", (int, float), 0.0)
        if not 0 <= budget <= 1:
            raise s.error("max_suppression", f"must be a fraction in [0, 1], got {budget!r}")
        s.finish()
        search = SearchConfig(strategy=strategy, metric=metric, max_suppression=float(budget))

    release = None
    if "release" in data:
        r = _Table(top.get("release", dict), "[release]", file)
        release = ReleaseConfig(
            name=r.name("name"),
            schema=r.name("schema", "published"),
            catalog_schema=r.name("catalog_schema", "veil"),
            drop_columns=r.names("drop_columns", ()),
            keep_columns=r.names("keep_columns", ()),
            grant_select_to=r.names("grant_select_to", ()),
        )
        r.finish()
        overlap = sorted(set(release.drop_columns) & (set(release.keep_columns) | set(columns) | set(sensitive)))
        if overlap:
            raise ConfigError(f"{file}: [release] drop_columns names column(s) {', '.join(map(repr, overlap))} "
                              "that are also kept, quasi-identifiers or sensitive")
        kept_clash = sorted(set(release.keep_columns) & (set(columns) | set(sensitive)))
        if kept_clash:
            raise ConfigError(f"{file}: [release] keep_columns names column(s) {', '.join(map(repr, kept_clash))} "
                              "that are quasi-identifiers or sensitive (those are always published)")
        if source.schema is not None and release.schema == source.schema:
            raise ConfigError(f"{file}: [release] schema {release.schema!r} is the source's schema; "
                              "Veil never writes into the source's schema")
        if release.catalog_schema == source.schema:
            raise ConfigError(f"{file}: [release] catalog_schema {release.catalog_schema!r} is the source's schema; "
                              "Veil never writes into the source's schema")
    top.finish()
    return Config(path=file, source=source, quasi_identifiers=tuple(qis), sensitive=sensitive,
                  models=tuple(models), search=search, release=release, text=text)


def load(path: str | Path) -> Config:
    """Read and parse the config file at ``path``."""
    file = Path(path).resolve()
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    return parse(text, file)


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
    from engine.models.base import Needs

    wanted: set[str] = set()
    for m in config.models:
        if m.properties.needs is Needs.JOINT:
            wanted.update(config.sensitive)
        elif m.properties.needs is not Needs.SIZES and m.attribute is not None:
            wanted.add(m.attribute)
    return tuple(c for c in config.sensitive if c in wanted)
