"""docker-compose.yml (profile `spark`) runs the cluster of deploy/spark/cluster.sh as services (Docker is
not available here: the file is parsed and its structure checked) — a master, two workers and a Spark
Connect server wired to each other, published on 127.0.0.1 only, configured like the script."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import IN_CI

DEPLOY = Path(__file__).resolve().parent.parent.parent / "deploy" / "spark"
ROOT = DEPLOY.parent.parent


def _yaml() -> Any:
    try:
        import yaml
    except ImportError:
        if IN_CI:
            pytest.fail("pyyaml is needed to check docker-compose files (the dev extra)")
        pytest.skip("pyyaml is not installed")
    return yaml


@pytest.fixture(scope="module")
def services() -> dict[str, Any]:
    found = _yaml().safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))["services"]
    return {name: svc for name, svc in found.items() if name.startswith("spark-")}


def _confs(command: list[str]) -> dict[str, str]:
    return dict(command[i + 1].split("=", 1) for i, arg in enumerate(command) if arg == "--conf")


def test_master_two_workers_and_a_connect_server(services: dict[str, Any]) -> None:
    assert set(services) == {"spark-master", "spark-worker-1", "spark-worker-2", "spark-connect"}
    master = services["spark-master"]["command"]
    assert master[:2] == ["spark-class", "org.apache.spark.deploy.master.Master"] and "7077" in master
    for name in ("spark-worker-1", "spark-worker-2"):
        worker = services[name]
        cmd = worker["command"]
        assert cmd[:3] == ["spark-class", "org.apache.spark.deploy.worker.Worker", "spark://spark-master:7077"]
        assert cmd[cmd.index("--cores") + 1] == "1" and cmd[cmd.index("--memory") + 1] == "1g"
        assert cmd[cmd.index("--host") + 1] == worker["hostname"] == name
        assert worker["depends_on"]["spark-master"]["condition"] == "service_healthy"
    connect = services["spark-connect"]
    cmd = connect["command"]
    assert cmd[:3] == ["spark-submit", "--class", "org.apache.spark.sql.connect.service.SparkConnectServer"]
    assert cmd[cmd.index("--master") + 1] == "spark://spark-master:7077" and cmd[-1] == "spark-internal"
    assert set(connect["depends_on"]) == {"spark-worker-1", "spark-worker-2"}
    assert "15002" in " ".join(connect["healthcheck"]["test"])


def test_workers_and_the_driver_share_the_warehouse(services: dict[str, Any]) -> None:
    warehouse = _confs(services["spark-connect"]["command"])["spark.sql.warehouse.dir"]
    for name in ("spark-worker-1", "spark-worker-2", "spark-connect"):
        assert f"spark-warehouse:{warehouse}" in services[name]["volumes"], name


def test_ports_only_on_loopback(services: dict[str, Any]) -> None:
    published = [p for s in services.values() for p in s.get("ports", [])]
    assert "127.0.0.1:15002:15002" in published
    assert published and all(str(p).startswith("127.0.0.1:") for p in published)


def test_configured_like_the_cluster_script(services: dict[str, Any]) -> None:
    """The same Spark settings as deploy/spark/cluster.sh, except where containers differ (addresses, the
    state directory's scratch space); the catalog is the script's default (``VEIL_SPARK_CATALOG`` unset)."""
    script = (DEPLOY / "cluster.sh").read_text(encoding="utf-8")
    scripted = dict(re.findall(r'--conf "?([a-z][\w.]+)=([^"\s\\]+)', script))
    default = re.search(r'CATALOG="\$\{VEIL_SPARK_CATALOG:-([\w-]+)\}"', script)  # the catalog, unless set
    assert default is not None and scripted["spark.sql.catalogImplementation"] == "$CATALOG"
    scripted["spark.sql.catalogImplementation"] = default.group(1)
    composed = _confs(services["spark-connect"]["command"])
    differ = {
        "spark.driver.host",
        "spark.driver.bindAddress",
        "spark.connect.grpc.binding.address",
        "spark.local.dir",
        "spark.sql.warehouse.dir",
        "spark.hadoop.javax.jdo.option.ConnectionURL",
        "spark.connect.grpc.binding.port",
    }
    assert {k: v for k, v in composed.items() if k not in differ} == {
        k: v for k, v in scripted.items() if k not in differ
    }
    assert composed["spark.connect.grpc.binding.port"] == "15002"


def test_image_has_the_tested_pyspark() -> None:
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    tested = re.search(r"pyspark\[connect\]>=([\d.]+)", " ".join(extra["spark"])).group(1)  # type: ignore[union-attr]
    dockerfile = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    assert f"'pyspark[connect]=={tested}'" in dockerfile and "openjdk-17-jre-headless" in dockerfile


def test_only_with_the_spark_profile_and_built_from_deploy_spark(services: dict[str, Any]) -> None:
    """`docker compose up` starts the warehouse and the job; `--profile spark` adds the cluster, whose image is
    deploy/spark/Dockerfile (Java 17 and pyspark, not Veil's image)."""
    everything = _yaml().safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))["services"]
    for name, svc in everything.items():
        assert (svc.get("profiles") == ["spark"]) == (name in services), name
    for svc in services.values():
        assert svc["build"] == {"context": "deploy/spark", "dockerfile": "Dockerfile"}
        assert (ROOT / svc["build"]["context"] / "Dockerfile").exists()
