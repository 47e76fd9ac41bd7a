#!/usr/bin/env bash
# A real Spark standalone cluster on this machine: one master and two workers on
# 127.0.0.1, started from the pyspark installation's own launcher (bin/spark-class with
# the Master and Worker classes); each worker offers one core.
#
#   scripts/local_cluster.sh start    # prints the master URL (spark://127.0.0.1:PORT)
#   scripts/local_cluster.sh status   # the master URL and the workers it sees
#   scripts/local_cluster.sh stop
#
# Settings (environment): SPARKANON_CLUSTER_DIR (state, logs, work dirs; default
# /tmp/sparkanon_cluster), SPARKANON_MASTER_PORT (default 7177),
# SPARKANON_WORKER_MEMORY (per worker, default 2g), PYTHON (the interpreter whose
# pyspark is used; default python3).
set -euo pipefail

DIR="${SPARKANON_CLUSTER_DIR:-/tmp/sparkanon_cluster}"
PORT="${SPARKANON_MASTER_PORT:-7177}"
MEMORY="${SPARKANON_WORKER_MEMORY:-2g}"
PYTHON="${PYTHON:-python3}"
HOST=127.0.0.1
URL="spark://${HOST}:${PORT}"

spark_home() {
    "$PYTHON" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))'
}

pid_alive() {
    [[ -f "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null
}

start_daemon() {  # name, class, args...
    local name="$1"
    shift
    local home
    home="$(spark_home)"
    if pid_alive "$DIR/$name.pid"; then
        echo "$name already running (pid $(cat "$DIR/$name.pid"))" >&2
        return
    fi
    SPARK_HOME="$home" SPARK_LOCAL_IP="$HOST" SPARK_LOG_DIR="$DIR/logs" \
        nohup "$home/bin/spark-class" "$@" >"$DIR/logs/$name.out" 2>&1 &
    echo $! >"$DIR/$name.pid"
}

wait_for() {  # file, pattern, seconds
    local i
    for ((i = 0; i < $3 * 5; i++)); do
        if grep -q "$2" "$1" 2>/dev/null; then
            return 0
        fi
        sleep 0.2
    done
    echo "timed out waiting for '$2' in $1" >&2
    tail -20 "$1" >&2 || true
    return 1
}

case "${1:-}" in
start)
    mkdir -p "$DIR/logs" "$DIR/work1" "$DIR/work2"
    start_daemon master org.apache.spark.deploy.master.Master \
        --host "$HOST" --port "$PORT" --webui-port 0
    wait_for "$DIR/logs/master.out" "I have been elected leader" 60
    for n in 1 2; do
        start_daemon "worker$n" org.apache.spark.deploy.worker.Worker \
            --host "$HOST" --cores 1 --memory "$MEMORY" --webui-port 0 \
            --work-dir "$DIR/work$n" "$URL"
    done
    for n in 1 2; do
        wait_for "$DIR/logs/worker$n.out" "Successfully registered with master" 60
    done
    echo "$URL"
    ;;
stop)
    for name in worker1 worker2 master; do
        if pid_alive "$DIR/$name.pid"; then
            pid="$(cat "$DIR/$name.pid")"
            pkill -TERM -P "$pid" 2>/dev/null || true
            kill -TERM "$pid" 2>/dev/null || true
            for ((i = 0; i < 50; i++)); do
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.2
            done
            kill -KILL "$pid" 2>/dev/null || true
        fi
        rm -f "$DIR/$name.pid"
    done
    echo "stopped"
    ;;
status)
    for name in master worker1 worker2; do
        if pid_alive "$DIR/$name.pid"; then
            echo "$name: running (pid $(cat "$DIR/$name.pid"))"
        else
            echo "$name: stopped"
        fi
    done
    echo "$URL"
    ;;
*)
    echo "usage: $0 start|stop|status" >&2
    exit 2
    ;;
esac
