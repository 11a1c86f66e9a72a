"""The image's filesystem as the Dockerfile leaves it, without Docker (issue 35: `/srv/veil` belonged to root
while Veil runs as `veil`, so a report written there failed): the working folder belongs to the user the
container runs as, while the config copied into it stays root's (read-only to Veil)."""

from __future__ import annotations

import shlex
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parent.parent


def instructions(dockerfile: str) -> list[tuple[str, str]]:
    """The final stage's instructions as (keyword, arguments), continuation lines joined, comments dropped."""
    text = dockerfile.replace("\\\n", " ")
    found = [
        tuple(line.strip().split(None, 1))
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    last = max(i for i, (word, *_) in enumerate(found) if word.upper() == "FROM")
    return [(word.upper(), rest[0] if rest else "") for word, *rest in found[last + 1 :]]


def ownership(dockerfile: str) -> tuple[str, str, dict[str, str]]:
    """The user the container runs as, its working folder and each path's owner as the final stage sets them:
    ``WORKDIR`` creates a missing folder as root, ``COPY`` (without ``--chown``) copies as root, ``RUN`` changes
    owners with ``install -d -o``, ``chown`` or creates folders with ``mkdir``."""
    owner: dict[str, str] = {}
    user, workdir = "root", "/"
    for word, args in instructions(dockerfile):
        if word == "WORKDIR":
            workdir = str(PurePosixPath(workdir, args))
            owner.setdefault(workdir, "root")
        elif word == "USER":
            user = args.split(":")[0]
        elif word == "COPY":
            parts = shlex.split(args)
            chown = next((p.split("=", 1)[1].split(":")[0] for p in parts if p.startswith("--chown=")), "root")
            target = str(PurePosixPath(workdir, [p for p in parts if not p.startswith("--")][-1]))
            owner.setdefault(target, chown)
        elif word == "RUN":
            for command in args.split("&&"):
                _run(shlex.split(command), workdir, owner)
    return user, workdir, owner


def _run(words: list[str], workdir: str, owner: dict[str, str]) -> None:
    """One command of a ``RUN``: the owners it sets."""
    operands = _operands(words)
    if words[:1] == ["install"] and "-d" in words and "-o" in words:
        for path in operands:
            owner[str(PurePosixPath(workdir, path))] = words[words.index("-o") + 1]
    elif words[:1] == ["chown"] and operands:
        for path in operands[1:]:
            owner[str(PurePosixPath(workdir, path))] = operands[0].split(":")[0]
    elif words[:1] == ["mkdir"]:
        for path in operands:
            owner.setdefault(str(PurePosixPath(workdir, path)), "root")


def _operands(words: list[str]) -> list[str]:
    """A command's operands: its words after the first but options and the values of -o, -g and -m."""
    out: list[str] = []
    skip = False
    for word in words[1:]:
        if skip:
            skip = False
        elif word in ("-o", "-g", "-m"):
            skip = True
        elif not word.startswith("-"):
            out.append(word)
    return out


def test_the_working_folder_belongs_to_the_user_veil_runs_as() -> None:
    user, workdir, owner = ownership((ROOT / "Dockerfile").read_text(encoding="utf-8"))
    assert (user, workdir) == ("veil", "/srv/veil")
    assert owner[workdir] == "veil"  # `veil report --out report.html` can write there


def test_the_config_copied_into_it_stays_roots() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    copies = [args for word, args in instructions(dockerfile) if word == "COPY" and "deploy/" in args]
    assert copies == ["deploy/ ./"]  # no --chown: Veil reads its config, never rewrites it


def test_the_model_reads_ownership_as_docker_does() -> None:
    before = "FROM x\nRUN useradd veil\nWORKDIR /srv/veil\nCOPY deploy/ ./\nUSER veil\n"
    assert ownership(before)[2]["/srv/veil"] == "root"  # the image of issue 35
    fixed = "FROM x\nRUN useradd veil \\\n    && install -d -o veil -g veil /srv/veil\nWORKDIR /srv/veil\nUSER veil\n"
    assert ownership(fixed)[2]["/srv/veil"] == "veil"
    chowned = "FROM x\nWORKDIR /srv/veil\nRUN chown -R veil:veil /srv/veil\nUSER veil\n"
    assert ownership(chowned)[2]["/srv/veil"] == "veil"
