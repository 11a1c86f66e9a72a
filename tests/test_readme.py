"""The README is true: its real example is run from the README's own text, in order, as one shell session
started in the clone (its activation line and all), and the output of every command compared with what the
README shows (``...`` stands for text that varies; JSON is compared as data, ignoring only ``seconds``,
``release_id`` and the ``work`` figures).  Its commands for installing and testing are the ones CI runs.
``tests/test_docs.py`` runs the quickstart and the JSON documents the same way."""

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
VOLATILE = {"seconds", "statements", "release_id", "work"}


def section(title: str) -> str:
    """The README's text under ``title`` up to the next heading of the same or a higher level."""
    level = title.split(" ", 1)[0]
    start = README.index(f"\n{title}\n")
    following = re.search(rf"\n#{{1,{len(level)}}} ", README[start + len(title) + 2 :])
    return README[start : start + len(title) + 2 + following.start()] if following else README[start:]


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
    if isinstance(doc, list):
        return [_drop_volatile(v) for v in doc]
    return doc


def same_output(shown: str, printed: str) -> bool:
    if not shown.lstrip().startswith("{"):
        return same_text(shown, printed)
    decoder = json.JSONDecoder()
    expected, end = decoder.raw_decode(shown.strip())
    actual, actual_end = decoder.raw_decode(printed.strip())
    assert "\n" not in printed.strip()[:actual_end], "a --json document is printed on one line"
    assert set(expected) == set(actual), (sorted(expected), sorted(actual))
    return _drop_volatile(expected) == _drop_volatile(actual) and same_text(
        shown.strip()[end:].strip(), printed.strip()[actual_end:].strip()
    )


def session(tmp_path: Path, commands: list[str]) -> list[subprocess.CompletedProcess[str]]:
    """Run ``commands`` one after the other in one bash process, as a reader types them: it starts in a
    folder standing for the clone, whose ``.venv`` is this interpreter's environment, ``mktemp -d`` makes its
    folders under ``tmp_path``, and a ``cd`` or an activation carries over to the next command.  Each
    command's own stdout, stderr and exit code."""
    clone, temp, out = tmp_path / "clone", tmp_path / "tmp", tmp_path / "out"
    for folder in (clone, temp, out):
        folder.mkdir()
    if (Path(sys.prefix) / "bin" / "activate").exists():
        (clone / ".venv").symlink_to(sys.prefix)
    else:  # not a virtualenv: an activation that puts this interpreter's scripts first
        (clone / ".venv" / "bin").mkdir(parents=True)
        (clone / ".venv" / "bin" / "activate").write_text(f'PATH="{Path(sys.executable).parent}:$PATH"\n')
    script = [
        f'{{\n{command}\n}} >"{out}/{i}.out" 2>"{out}/{i}.err" </dev/null; echo $? >"{out}/{i}.rc"'
        for i, command in enumerate(commands)
    ]
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONHOME")}
    env["TMPDIR"] = str(temp)
    res = subprocess.run(
        ["bash", "-c", "\n".join(script)], cwd=clone, env=env, capture_output=True, text=True, timeout=900
    )
    assert res.returncode == 0, res.stderr
    return [
        subprocess.CompletedProcess(
            command, int((out / f"{i}.rc").read_text()), (out / f"{i}.out").read_text(), (out / f"{i}.err").read_text()
        )
        for i, command in enumerate(commands)
    ]


def write_file(name: str, text: str) -> str:
    """The command that writes ``text`` to ``name`` (a file the reader writes with an editor)."""
    return f"cat >{name} <<'VEIL_FILE_END'\n{text}VEIL_FILE_END"


def check_session(tmp_path: Path, walk: list[tuple[str, str]]) -> int:
    """Run the ``(command, shown output)`` steps as one session; each must exit 0 and print what is shown."""
    results = session(tmp_path, [command for command, _ in walk])
    for (command, shown), res in zip(walk, results):
        assert res.returncode == 0, f"$ {command}\n{res.stdout}{res.stderr}"
        if shown:
            assert same_output(shown, res.stdout), f"$ {command}\nthe docs show:\n{shown}\nit printed:\n{res.stdout}"
        else:
            assert not res.stdout.strip(), f"$ {command}\nthe docs show no output, it printed:\n{res.stdout}"
    return len(results)


def test_the_real_example_runs_as_written(tmp_path: Path) -> None:
    example = fenced(section("## A real example"))
    assert [lang for lang, _ in example] == ["console", "toml", "console"]
    load, toml, commands = example
    walk = [*steps(load[1]), (write_file("veil.toml", toml[1]), ""), *steps(commands[1])]
    assert walk[0][0] == "source .venv/bin/activate", "the example starts by activating the clone's virtualenv"
    assert check_session(tmp_path, walk) >= 8


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
