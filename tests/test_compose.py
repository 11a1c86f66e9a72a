"""docker-compose.yml, Dockerfile and .env.example, without Docker: the compose file's structure, the image
built with everything installed at build time from constraints.txt, credentials only from a `.env` that is
never committed, and the services' own commands run for real against PostgreSQL (seed, init, the
scheduler's preflight, the release it schedules)."""

from __future__ import annotations

import json
import re
import shutil
import uuid
from pathlib import Path

import pytest
import yaml

from tests.conftest import PG_URL, Db, require_pg, run_veil

ROOT = Path(__file__).resolve().parent.parent
VEIL_SERVICES = ("seed", "init", "veil")


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))


def env_example() -> dict[str, str]:
    pairs = [
        line.split("=", 1)
        for line in (ROOT / ".env.example").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    return {k.strip(): v.strip() for k, v in pairs}


def interpolate(value: str, env: dict[str, str]) -> str:
    """Compose's variable syntax: ``${VAR}``, ``${VAR:-default}``, ``${VAR:?error}``, ``$$``."""

    def one(match: re.Match[str]) -> str:
        name, op, arg = match.group(1), match.group(2), match.group(3)
        if env.get(name):
            return env[name]
        if op == ":-":
            return arg
        raise KeyError(f"{name} is not set ({arg})")

    return re.sub(r"\$\{(\w+)(?:(:[-?])([^}]*))?\}", one, value).replace("$$", "$")


def test_services_and_their_order(compose: dict) -> None:
    services = compose["services"]
    assert set(services) >= {"postgres", *VEIL_SERVICES}
    assert "pg_isready" in " ".join(services["postgres"]["healthcheck"]["test"])
    for name in VEIL_SERVICES:
        svc = services[name]
        assert svc["build"] == "." and svc["image"] == "veil:local"
        assert svc["depends_on"]["postgres"]["condition"] == "service_healthy"
        assert "TZ" in svc["environment"] and "VEIL_SOURCE_URL" in svc["environment"]
    waits_for = services["veil"]["depends_on"]
    assert waits_for["seed"]["condition"] == waits_for["init"]["condition"] == "service_completed_successfully"
    assert services["veil"]["restart"] == "unless-stopped" and services["seed"]["restart"] == "no"
    assert services["veil"]["command"][0] == "schedule" and "--tz" in services["veil"]["command"]
    assert "TZ" in services["postgres"]["environment"]


def test_credentials_come_only_from_dot_env(compose: dict) -> None:
    text = (ROOT / "docker-compose.yml").read_text(encoding="utf-8")
    variables = set(re.findall(r"\$\{(\w+)", text))
    example = env_example()
    assert variables <= set(example), variables - set(example)  # .env.example documents every variable
    required = set(re.findall(r"\$\{(\w+):\?", text))
    assert {"POSTGRES_USER", "POSTGRES_PASSWORD"} <= required  # no default password anywhere
    assert compose["services"]["postgres"]["environment"]["POSTGRES_PASSWORD"].startswith("${")
    assert (
        ".env" in (ROOT / ".gitignore").read_text().split() and ".env" in (ROOT / ".dockerignore").read_text().split()
    )
    assert not (ROOT / ".env").exists() or ".env" in (ROOT / ".gitignore").read_text().split()
    with pytest.raises(KeyError, match="POSTGRES_PASSWORD is not set"):  # compose refuses to start without it
        interpolate(compose["x-veil"]["environment"]["VEIL_SOURCE_URL"], {"POSTGRES_USER": "veil"})


def test_the_image_is_built_not_installed_at_start(compose: dict) -> None:
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    instructions = [
        line.split(None, 1)
        for line in dockerfile.splitlines()
        if line and not line.startswith("#") and not line.startswith(" ")
    ]
    assert instructions[-2:] == [["ENTRYPOINT", '["veil"]'], ["CMD", '["--help"]']]
    install = next(line for line in dockerfile.splitlines() if "pip install" in line)
    assert "-c /tmp/constraints.txt" in install and "--only-binary :all:" in install
    assert "COPY deploy/ ./" in dockerfile and "USER veil" in dockerfile
    everything = json.dumps(compose)
    assert "pip install" not in everything and "pip " not in everything


def test_dockerignore_keeps_what_the_build_copies() -> None:
    ignored = {
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    copied = {"pyproject.toml", "README.md", "constraints.txt", "engine", "sql", "migrations", "deploy"}
    assert not copied & ignored
    assert {".venv", ".git", ".env", "tests"} <= ignored


def test_the_services_commands_seed_init_and_schedule_a_release(compose: dict, tmp_path: Path) -> None:
    """Each service's command exactly as compose runs it (variables from .env.example, the image's
    /srv/veil as a copy of deploy/), against the test PostgreSQL in schemas of its own."""
    require_pg()
    prefix = f"veil_compose_{uuid.uuid4().hex[:8]}"  # unique per run: a failed run leaves nothing in the way
    srv = tmp_path / "srv"
    shutil.copytree(ROOT / "deploy", srv)
    config = (srv / "veil.toml").read_text(encoding="utf-8")
    config = config.replace('table = "raw.census"', f'table = "{prefix}_raw.census"')
    config = config.replace('schema = "published"', f'schema = "{prefix}_pub"\ncatalog_schema = "{prefix}_cat"')
    (srv / "veil.toml").write_text(config, encoding="utf-8")
    env = {**env_example(), "VEIL_SEED_ROWS": "3000"}
    service_env = {k: interpolate(v, env) for k, v in compose["x-veil"]["environment"].items()}
    assert service_env["VEIL_SOURCE_URL"].startswith("postgresql+psycopg://veil:change-me@postgres:5432/")
    service_env["VEIL_SOURCE_URL"] = PG_URL  # the test server instead of the compose network's
    db = Db("postgres", PG_URL, f"{prefix}_raw", tmp_path)
    try:

        def run(service: str, *extra: str):  # noqa: ANN202
            args = [interpolate(a, env) for a in compose["services"][service]["command"]]
            return run_veil(*args, *extra, cwd=srv, env=service_env, timeout=600)

        seeded = run("seed")
        assert seeded.returncode == 0 and f"seeded {prefix}_raw.census with 3,000" in seeded.stdout, seeded.stderr
        assert "nothing to seed" in run("seed").stdout  # a restart leaves the table alone
        assert run("init").returncode == 0
        preflight = run("veil", "--max-runs", "0")
        assert preflight.returncode == 0, preflight.stderr
        assert (
            "preflight passed" in preflight.stderr
            and "schedule 0 2 * * * (At 02:00 every day), UTC" in preflight.stderr
        )
        release = run_veil("release", "--config", "veil.toml", "--json", cwd=srv, env=service_env, timeout=600)
        assert release.returncode == 0, release.stderr
        assert json.loads(release.stdout)["status"] == "published"
    finally:
        db.execute(*(f'DROP SCHEMA IF EXISTS "{prefix}_{s}" CASCADE' for s in ("raw", "pub", "cat")))
