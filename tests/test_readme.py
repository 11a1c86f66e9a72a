"""The README is true: its real example and its JSON documents are run from the README's own text, in order,
in an empty folder, and their output compared with what the README shows (``...`` stands for text that
varies; JSON is compared as data, ignoring only ``seconds``, ``release_id`` and the ``work`` figures).  Its commands for
installing and testing are the ones CI runs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
VOLATILE = {"seconds", "release_id", "work"}


def section(title: str) -> str:
    """The README's text under ``title`` up to the next heading of the same or a higher level."""
    level = title.split(" ", 1)[0]
    start = README.index(f"\n{title}\n")
    following = re.search(rf"\n#{{1,{len(level)}}} ", README[start + len(title) + 2:])
    return README[start:start + len(title) + 2 + following.start()] if following else README[start:]


def fenced(text: str) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in re.finditer(r"```(\w+)\n(.*?)```", text, re.DOTALL)]


def steps(console: str) -> list[tuple[str, str]]:
    """``$ command`` lines (with their here-documents) and the output shown after each."""
    out: list[tuple[str, str]] = []
    lines = console.splitlines()
    i = 0
    while i < len(lines):
        assert lines[i].startswith("$ "), f"console block line is neither a command nor its output: {lines[i]!r}"
        command = [lines[i][2:]]
        here = re.search(r"<<'(\w+)'", lines[i])
        i += 1
        if here:
            while lines[i] != here.group(1):
                command.append(lines[i])
                i += 1
            command.append(lines[i])
            i += 1
        shown = []
        while i < len(lines) and not lines[i].startswith("$ "):
            shown.append(lines[i])
            i += 1
        out.append(("\n".join(command), "\n".join(shown)))
    return out


def same_text(shown: str, printed: str) -> bool:
    shown_lines, printed_lines = shown.splitlines(), printed.rstrip("\n").splitlines()
    if len(shown_lines) != len(printed_lines):
        return False
    return all(re.fullmatch(".*".join(map(re.escape, s.split("..."))), p) for s, p in zip(shown_lines, printed_lines))


def _drop_volatile(doc: object) -> object:
    if isinstance(doc, dict):
        return {k: _drop_volatile(v) for k, v in doc.items() if k not in VOLATILE}
    return doc


def same_output(shown: str, printed: str) -> bool:
    if not shown.lstrip().startswith("{"):
        return same_text(shown, printed)
    decoder = json.JSONDecoder()
    expected, end = decoder.raw_decode(shown.strip())
    actual, actual_end = decoder.raw_decode(printed.strip())
    assert "\n" not in printed.strip()[:actual_end], "a --json document is printed on one line"
    assert set(expected) == set(actual), (sorted(expected), sorted(actual))
    return _drop_volatile(expected) == _drop_volatile(actual) and same_text(shown.strip()[end:].strip(),
                                                                           printed.strip()[actual_end:].strip())


def run(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_the_real_example_and_the_json_documents_run_as_written(tmp_path: Path) -> None:
    example = fenced(section("## A real example"))
    assert [lang for lang, _ in example] == ["console", "toml", "console"]
    json_docs = fenced(section("### JSON documents (stable)"))
    assert [lang for lang, _ in json_docs] == ["console"]
    load, toml, commands = example
    ran = 0
    for command, shown in [*steps(load[1]), ("<write veil.toml>", ""), *steps(commands[1]), *steps(json_docs[0][1])]:
        if command == "<write veil.toml>":
            (tmp_path / "veil.toml").write_text(toml[1], encoding="utf-8")
            continue
        res = run(command, tmp_path)
        assert res.returncode == 0, f"$ {command}\n{res.stdout}{res.stderr}"
        if shown:
            assert same_output(shown, res.stdout), f"$ {command}\nREADME shows:\n{shown}\nit printed:\n{res.stdout}"
        ran += 1
    assert ran >= 12


def test_the_matcher_can_fail() -> None:
    assert same_text("took ... s", "took 0.3 s") and not same_text("took ... s", "took 0.3 min")
    assert not same_text("a\nb", "a")
    assert same_output('{"status": "ok", "seconds": 1}\nexit 0', '{"status": "ok", "seconds": 2}\nexit 0\n')
    assert not same_output('{"status": "ok", "rows": 1}', '{"status": "ok", "rows": 2}')
    with pytest.raises(AssertionError):
        same_output('{"status": "ok"}', '{"status": "ok", "extra": 1}')


def test_the_install_and_test_commands_are_the_ones_ci_runs() -> None:
    commands = fenced(README.split("\n## ", 1)[0])[0][1].splitlines()
    assert commands == [
        "python3 -m venv .venv && .venv/bin/pip install -q -c constraints.txt -e . && .venv/bin/veil demo",
        "python3 -m venv .venv && .venv/bin/pip install -q -c constraints.txt -e '.[dev,pycanon]' && "
        ".venv/bin/python -m pytest -q -n 2 --dist loadgroup",
    ]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "README.md" in ci and "CI=true" in ci
