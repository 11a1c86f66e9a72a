"""The docs site is true and complete: the reference pages are what ``docs/gen_reference.py`` writes from the
code (the CLI's typer app, the config parsers), the quickstart and the JSON documents run as printed (the
machinery of ``tests/test_readme.py``), every command the docs print runs from the clone's virtualenv
(``.venv/bin/...`` or after ``source .venv/bin/activate``), and every page is in ``mkdocs.yml``'s nav.
``.ci/docs`` builds the site with ``mkdocs build --strict`` (broken links and anchors fail there)."""

from __future__ import annotations

import difflib
import importlib.util
import re
import sys
from pathlib import Path

import pytest
import yaml

from tests.test_readme import ROOT, check_session, fenced, steps, write_file

DOCS = ROOT / "docs"


@pytest.fixture(scope="module")
def gen():
    spec = importlib.util.spec_from_file_location("gen_reference", DOCS / "gen_reference.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_reference"] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules["gen_reference"]


def test_the_reference_pages_are_what_the_code_generates(gen) -> None:
    for path, text in gen.pages().items():
        committed = path.read_text(encoding="utf-8") if path.exists() else ""
        diff = "".join(
            difflib.unified_diff(
                committed.splitlines(True),
                text.splitlines(True),
                str(path.relative_to(ROOT)),
                "generated from the code",
            )
        )
        assert committed == text, (
            f"{path.relative_to(ROOT)} differs from the code: run .venv/bin/python docs/gen_reference.py\n{diff}"
        )


def test_the_drift_check_fails_on_a_stale_page(gen, tmp_path: Path, monkeypatch, capsys) -> None:
    stale = tmp_path / "cli.md"
    stale.write_text(gen.cli_page().replace("## `veil release`", "## `veil publish`"), encoding="utf-8")
    monkeypatch.setattr(gen, "CLI_PAGE", stale)
    monkeypatch.setattr(gen, "CONFIG_PAGE", tmp_path / "config.md")
    (tmp_path / "config.md").write_text(gen.config_page(), encoding="utf-8")
    monkeypatch.setattr(gen, "ROOT", tmp_path)
    assert gen.main(["--check"]) == 1
    out = capsys.readouterr()
    assert "-## `veil publish`" in out.out and "+## `veil release`" in out.out and "differ from the code" in out.err
    assert gen.main([]) == 0 and gen.main(["--check"]) == 0  # rewritten, then current


def test_a_config_key_without_a_meaning_stops_the_generator(gen, monkeypatch) -> None:
    monkeypatch.setitem(
        gen.MEANINGS, "[release]", {k: v for k, v in gen.MEANINGS["[release]"].items() if k != "keep_versions"}
    )
    with pytest.raises(SystemExit, match=r"\[release\] key 'keep_versions' has no meaning"):
        gen.config_page()
    monkeypatch.setitem(gen.MEANINGS, "[search]", {**gen.MEANINGS["[search]"], "budget": "gone"})
    with pytest.raises(SystemExit, match=r"describes 'budget', which the code no longer reads"):
        gen.config_page()


def test_the_config_reference_lists_what_the_parser_reads(gen) -> None:
    """Spot checks against the parsers' own defaults and choices."""
    from veil import config
    from veil.registry import MODELS

    page = gen.config_page()
    assert f"| `keep_versions` | a whole number | `{config.ReleaseConfig('x').keep_versions}` |" in page
    assert "| `strategy` | one of " + ", ".join(f'`"{s}"`' for s in config.STRATEGIES) in page
    assert "| `share` | a number in (0, 1] | `0.9` |" in page
    for kind in MODELS:
        assert f"| `{kind}` |" in page
    for kind in config.HIERARCHY_KINDS:
        assert f"`{kind}`: " in page


def test_the_quickstart_and_the_json_documents_run_as_written(tmp_path: Path) -> None:
    quickstart = fenced((DOCS / "quickstart.md").read_text(encoding="utf-8"))
    tomls = [text for lang, text in quickstart if lang == "toml"]
    consoles = [text for lang, text in quickstart if lang == "console"]
    assert len(tomls) == 1 and len(consoles) >= 5
    json_docs = [
        text for lang, text in fenced((DOCS / "reference" / "json.md").read_text(encoding="utf-8")) if lang == "console"
    ]
    assert len(json_docs) == 1
    walk = [*steps(consoles[0]), (write_file("veil.toml", tomls[0]), "")]
    for console in [*consoles[1:], *json_docs]:
        walk += steps(console)
    assert walk[:2] == [("source .venv/bin/activate", ""), ('cd "$(mktemp -d)"', "")]
    assert check_session(tmp_path, walk) >= 20


PAGES = sorted([ROOT / "README.md", *DOCS.rglob("*.md")])
# A command that must come from the virtualenv: bare, it is whatever the PATH holds (or nothing).
VENV_COMMANDS = {"veil", "python", "pip", "pytest", "mkdocs"}


def _commands(lang: str, text: str) -> list[str]:
    if lang == "console":
        return [line[2:] for line in text.splitlines() if line.startswith("$ ")]
    return [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_printed_command_runs_from_the_virtualenv(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    activated = "source .venv/bin/activate" in text
    for lang, block in fenced(text):
        if lang not in ("bash", "console", "crontab", "sh"):
            continue
        for line in _commands(lang, block):
            for command in re.split(r"&&|\|\||;|\|", line.split(" #")[0]):
                words = [w for w in command.split() if not re.fullmatch(r"[A-Z_]+=\S*", w)]
                if words and words[0] in VENV_COMMANDS:
                    assert activated, (
                        f"{page.relative_to(ROOT)}: `{line}` runs `{words[0]}` from the PATH: write "
                        f".venv/bin/{words[0]}, or say `source .venv/bin/activate` on the page"
                    )


def _nav_pages(nav: list) -> list[str]:
    found = []
    for item in nav:
        for value in item.values() if isinstance(item, dict) else [item]:
            found += _nav_pages(value) if isinstance(value, list) else [value]
    return found


def test_every_page_is_in_the_nav_and_the_pages_others_cite_stay_put() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["docs_dir"] == "docs" and config["theme"]["name"] == "material"
    nav = _nav_pages(config["nav"])
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert sorted(nav) == pages
    # code docstrings and tests cite these by path
    assert {
        "models.md",
        "publication.md",
        "series.md",
        "series-ledger.md",
        "spark.md",
        "reference/cli.md",
        "reference/config.md",
        "how-to/postgresql-least-privilege.md",
    } <= set(nav)


def test_the_readme_is_short_and_links_the_site() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    for target in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / target).exists(), target
