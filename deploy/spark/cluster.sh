#!/usr/bin/env bash
# A real Spark cluster on this machine for Veil: a standalone master, two workers and a Spark Connect server,
# all from the pip-installed pyspark distribution (SPARK_HOME = the pyspark package folder), bound to
# 127.0.0.1, with a Hive catalog (embedded Derby) and a warehouse directory under the state directory.
#
#   deploy/spark/cluster.sh start [--python PY]    start what is not running; print the sc:// URL
#   deploy/spark/cluster.sh stop                   stop exactly the processes this script started
#   deploy/spark/cluster.sh status                 what runs (exit 0 all up, 3 otherwise)
#
# Settings (environment):
#   VEIL_SPARK_PYTHON        the Python whose pyspark is used (default: the repository's .venv/bin/python;
#                            --python overrides); install it with  pip install 'veil[spark]'
#   VEIL_SPARK_DIR           state directory: pids, logs, warehouse, metastore (default: deploy/spark/run)
#   VEIL_SPARK_CONNECT_PORT  Spark Connect port (default 15002); VEIL_SPARK_MASTER_PORT (default 7077)
#   VEIL_SPARK_JAVA_OPTS     JVM options for every JVM of the cluster (daemons, Connect driver, executors);
#                            .ci/spark.sh sets the JIT the test suite's many small statements want
#   VEIL_SPARK_CATALOG       hive (default: embedded Derby, kept across restarts) or in-memory (forgotten when
#                            the Connect server stops; .ci/spark.sh's choice for the test suite, docs/spark.md §9)
# Memory: about 3 GB in all (daemons 192 MB heap each, two executors and the Connect driver 640 MB each).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
PYTHON="${VEIL_SPARK_PYTHON:-$REPO/.venv/bin/python}"
STATE="${VEIL_SPARK_DIR:-$HERE/run}"
HOST=127.0.0.1
CONNECT_PORT="${VEIL_SPARK_CONNECT_PORT:-15002}"
MASTER_PORT="${VEIL_SPARK_MASTER_PORT:-7077}"
MASTER_UI=8090
CATALOG="${VEIL_SPARK_CATALOG:-hive}"
DAEMONS=(master worker1 worker2 connect)

die() { echo "cluster.sh: $*" >&2; exit 1; }

usage() { sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }

command_word="${1:-}"
[ -n "$command_word" ] || usage 1
shift
while [ $# -gt 0 ]; do
  case "$1" in
    --python) [ $# -ge 2 ] || die "--python needs a path"; PYTHON="$2"; shift 2 ;;
    -h|--help) usage 0 ;;
    *) die "unknown argument $1 (see: cluster.sh --help)" ;;
  esac
done

# --- helpers --------------------------------------------------------------------------------------------

port_open() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }

pid_of() { cat "$STATE/pids/$1.pid" 2>/dev/null || true; }

# A recorded PID counts only while it is still ours: the JVM's command line carries this state directory's
# marker, so a recycled PID is never signalled. Right after launch the PID is still the launcher (nohup, then
# bin/spark-class or bin/spark-submit, which exec the JVM once they have built its command line).
alive() {
  local pid cmdline
  pid="$(pid_of "$1")"
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
  cmdline="$(tr '\0' ' ' <"/proc/$pid/cmdline")"
  case "$cmdline" in
    *"-Dveil.spark.dir=$STATE "*) return 0 ;;
    nohup\ *bin/spark-class\ *|nohup\ *bin/spark-submit\ *|*bash\ *bin/spark-class\ *|*bash\ *bin/spark-submit\ *) return 0 ;;
  esac
  return 1
}

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
  local seconds="$1" what="$2"; shift 2
  for _ in $(seq 1 "$seconds"); do
    "$@" && return 0
    sleep 1
  done
  die "$what did not come up within ${seconds}s (logs: $STATE/logs)"
}

alive_workers() {
  "$PYTHON" - "$HOST" "$MASTER_UI" <<'EOF' 2>/dev/null || echo 0
import json, sys, urllib.request
with urllib.request.urlopen(f"http://{sys.argv[1]}:{sys.argv[2]}/json/", timeout=3) as r:
    print(json.load(r).get("aliveworkers", 0))
EOF
}

two_workers() { [ "$(alive_workers)" -ge 2 ]; }

# While starting, the PID this run just recorded is ours whatever it runs at the moment (the forked shell,
# nohup, the launcher scripts, then the JVM): only its disappearance means the daemon died.
exists() {
  local pid
  pid="$(pid_of "$1")"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

up() {  # up NAME PORT: the port answers; a daemon that died while starting ends the wait at once
  exists "$1" || die "$1 exited while starting (log: $STATE/logs/$1.log)"
  port_open "$2"
}

workers_up() {
  exists worker1 || die "worker1 exited while starting (log: $STATE/logs/worker1.log)"
  exists worker2 || die "worker2 exited while starting (log: $STATE/logs/worker2.log)"
  two_workers
}

spark_home() {
  [ -x "$PYTHON" ] || die "Python $PYTHON not found (set VEIL_SPARK_PYTHON or pass --python)"
  SPARK_HOME="$("$PYTHON" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))' 2>/dev/null)" \
    || die "pyspark is not installed for $PYTHON: run  $PYTHON -m pip install '.[spark]'"
  [ -x "$SPARK_HOME/bin/spark-class" ] || die "$SPARK_HOME has no bin/spark-class (a pyspark without its jars?)"
  export SPARK_HOME
}

java_check() {
  if [ -z "${JAVA_HOME:-}" ] && ! command -v java >/dev/null 2>&1; then
    die "Java 17 is needed (Debian: apt-get install openjdk-17-jre-headless)"
  fi
}

launch() {  # launch NAME COMMAND...: start in the background, record the JVM's PID (spark-class execs java)
  local name="$1"; shift
  (cd "$STATE" && exec nohup "$@" >"$STATE/logs/$name.log" 2>&1 </dev/null) &
  echo $! >"$STATE/pids/$name.pid"
}

# --- commands -------------------------------------------------------------------------------------------

start() {
  spark_home
  java_check
  case "$CATALOG" in
    hive|in-memory) ;;
    *) die "VEIL_SPARK_CATALOG=$CATALOG: expected hive or in-memory" ;;
  esac
  mkdir -p "$STATE/pids" "$STATE/logs" "$STATE/warehouse" "$STATE/local" "$STATE/work"
  STATE="$(cd "$STATE" && pwd)"
  export SPARK_LOCAL_IP="$HOST" SPARK_DAEMON_MEMORY=192m PYSPARK_PYTHON="$PYTHON"
  local java_opts="${VEIL_SPARK_JAVA_OPTS:-}"
  export SPARK_DAEMON_JAVA_OPTS="-Dveil.spark.dir=$STATE -Dspark.worker.cleanup.enabled=true $java_opts"
  export SPARK_CONF_DIR="$STATE/conf"   # an empty conf dir: nothing from elsewhere leaks in
  mkdir -p "$SPARK_CONF_DIR"

  if ! alive master; then
    port_open "$MASTER_PORT" && die "port $MASTER_PORT is taken by another process (set VEIL_SPARK_MASTER_PORT)"
    launch master "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.master.Master \
      --host "$HOST" --port "$MASTER_PORT" --webui-port "$MASTER_UI"
    wait_for 180 "the Spark master" up master "$MASTER_PORT"
  fi
  for n in 1 2; do
    if ! alive "worker$n"; then
      launch "worker$n" "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.worker.Worker \
        "spark://$HOST:$MASTER_PORT" --host "$HOST" --cores 1 --memory 1g \
        --webui-port "$((MASTER_UI + n))" --work-dir "$STATE/work/worker$n"
    fi
  done
  wait_for 180 "two Spark workers" workers_up
  if ! alive connect; then
    port_open "$CONNECT_PORT" && die "port $CONNECT_PORT is taken by another process (set VEIL_SPARK_CONNECT_PORT)"
    # the launcher sizes the Connect server (like the Thrift server) by SPARK_DAEMON_MEMORY
    SPARK_DAEMON_MEMORY=640m launch connect "$SPARK_HOME/bin/spark-submit" \
      --class org.apache.spark.sql.connect.service.SparkConnectServer \
      --name veil-spark-connect \
      --master "spark://$HOST:$MASTER_PORT" \
      --driver-java-options "-Dveil.spark.dir=$STATE -Dderby.system.home=$STATE $java_opts" \
      --conf spark.executor.extraJavaOptions="$java_opts" \
      --conf spark.executor.memory=640m \
      --conf spark.executor.cores=1 \
      --conf spark.cores.max=2 \
      --conf spark.driver.host="$HOST" \
      --conf spark.driver.bindAddress="$HOST" \
      --conf spark.connect.grpc.binding.address="$HOST" \
      --conf spark.connect.grpc.binding.port="$CONNECT_PORT" \
      --conf spark.connect.session.manager.defaultSessionTimeout=15min \
      --conf "spark.sql.catalogImplementation=$CATALOG" \
      --conf spark.sql.warehouse.dir="$STATE/warehouse" \
      --conf "spark.hadoop.javax.jdo.option.ConnectionURL=jdbc:derby:;databaseName=$STATE/metastore_db;create=true" \
      --conf spark.local.dir="$STATE/local" \
      --conf spark.sql.shuffle.partitions=4 \
      --conf spark.ui.showConsoleProgress=false \
      spark-internal
  fi
  wait_for 300 "the Spark Connect server" up connect "$CONNECT_PORT"
  exists connect || die "the Spark Connect server exited (log: $STATE/logs/connect.log)"
  echo "sc://$HOST:$CONNECT_PORT"
}

stop_one() {  # stop_one NAME: TERM, wait up to 30 s, then KILL — only our own recorded PID
  local name="$1" pid
  if alive "$name"; then
    pid="$(pid_of "$name")"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 30); do alive "$name" || break; sleep 1; done
    if alive "$name"; then
      echo "cluster.sh: $name (pid $pid) ignored SIGTERM; killing it" >&2
      kill -KILL "$pid" 2>/dev/null || true
    fi
    echo "stopped $name (pid $pid)"
  fi
  rm -f "$STATE/pids/$name.pid"
}

stop() {
  # the Connect server first (its executors end with it), then the workers, then the master
  local i
  for ((i = ${#DAEMONS[@]} - 1; i >= 0; i--)); do stop_one "${DAEMONS[$i]}"; done
}

status() {
  local all=0 name
  for name in "${DAEMONS[@]}"; do
    if alive "$name"; then echo "$name: running (pid $(pid_of "$name"))"; else echo "$name: stopped"; all=3; fi
  done
  if alive master; then
    echo "master: spark://$HOST:$MASTER_PORT, $(alive_workers) alive worker(s), UI http://$HOST:$MASTER_UI"
  fi
  local pids=() kb=0 pid
  for name in "${DAEMONS[@]}"; do alive "$name" && pids+=("$(pid_of "$name")"); done
  for name in worker1 worker2; do  # executors are the workers' children
    if alive "$name"; then
      for pid in $(pgrep -P "$(pid_of "$name")" 2>/dev/null || true); do
        if [ "$(awk '/^State/ {print $2}' "/proc/$pid/status" 2>/dev/null)" = Z ]; then
          echo "executor: pid $pid (of $name) exited, not yet reaped"; continue
        fi
        echo "executor: pid $pid (of $name)"; pids+=("$pid")
      done
    fi
  done
  local rss
  for pid in "${pids[@]}"; do  # a zombie (an executor that exited, not yet reaped) has no VmRSS line
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
    kb=$((kb + ${rss:-0}))
  done
  [ "${#pids[@]}" -eq 0 ] || echo "memory: $((kb / 1024)) MB resident in ${#pids[@]} JVMs"
  if alive connect && port_open "$CONNECT_PORT"; then
    echo "connect: sc://$HOST:$CONNECT_PORT answers"
  else
    all=3
  fi
  echo "state: $STATE"
  return "$all"
}

case "$command_word" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  -h|--help) usage 0 ;;
  *) die "unknown command $command_word (start, stop or status)" ;;
esac
