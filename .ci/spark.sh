# CI: the local Spark cluster for the tests marked `spark`.  Sourced by .ci/run before the tests
# (`source .ci/spark.sh`), so its EXIT trap stops the cluster when .ci/run ends, however it ends.
#   - Java 17 from Debian's packages when there is no java
#   - the spark extra in the repository's .venv (the venv the README's test command uses)
#   - deploy/spark/cluster.sh start (about 20 s on a quiet machine, minutes under load), VEIL_TEST_SPARK_URL
# shellcheck shell=bash

_veil_spark_repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if ! command -v java >/dev/null 2>&1; then
  echo "ci: installing Java 17 from Debian's packages"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null
fi

[ -x "$_veil_spark_repo/.venv/bin/python" ] || python3 -m venv "$_veil_spark_repo/.venv"
echo "ci: installing the spark extra"
"$_veil_spark_repo/.venv/bin/pip" install -q -c "$_veil_spark_repo/constraints.txt" -e "$_veil_spark_repo[dev,spark]"

_veil_spark_stop() { VEIL_SPARK_PYTHON="$_veil_spark_repo/.venv/bin/python" "$_veil_spark_repo/deploy/spark/cluster.sh" stop || true; }
# keep whatever EXIT trap .ci/run already has, then stop the cluster
_veil_spark_prev_trap="$(trap -p EXIT | sed -E "s/^trap -- '(.*)' EXIT$/\1/")"
# shellcheck disable=SC2064
trap "_veil_spark_stop; ${_veil_spark_prev_trap:-:}" EXIT

# The suite sends thousands of small statements, each loading classes of its own: on a fresh cluster half of the
# JVMs' CPU went to compiling them with C2, code that never runs long enough to pay it back.  C1 alone, in a code
# cache large enough to hold it (C1 alone gets 48 MB by default: filled, the JIT stopped), for the suite's cluster
# (docs/spark.md §9, "The JIT and the test suite"); cluster.sh's default JIT stays for everything else.
export VEIL_SPARK_JAVA_OPTS="${VEIL_SPARK_JAVA_OPTS:--XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=512m}"
# The catalog in the Connect server's memory, not Hive's embedded metastore: Spark Connect runs each operation on a
# thread of its own and the embedded metastore builds a store (a HiveConf parsed from the jars) for each new thread,
# about half of the driver's CPU in the suite.  The whole Spark suite took 392 s against 663 s, the whole suite
# 763 s against 949 s (docs/spark.md §9, "The catalog and the test suite"); the bench and users keep Hive's.
export VEIL_SPARK_CATALOG="${VEIL_SPARK_CATALOG:-in-memory}"
echo "ci: starting the Spark cluster (JVM options: $VEIL_SPARK_JAVA_OPTS; catalog: $VEIL_SPARK_CATALOG)"
if ! VEIL_TEST_SPARK_URL="$(VEIL_SPARK_PYTHON="$_veil_spark_repo/.venv/bin/python" "$_veil_spark_repo/deploy/spark/cluster.sh" start | tail -n 1)"; then
  for _veil_log in "$_veil_spark_repo"/deploy/spark/run/logs/*.log; do
    echo "ci: --- last lines of $_veil_log" >&2
    tail -n 25 "$_veil_log" >&2 || true
  done
  exit 1
fi
export VEIL_TEST_SPARK_URL
echo "ci: Spark Connect at $VEIL_TEST_SPARK_URL"
