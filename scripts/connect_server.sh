#!/usr/bin/env bash
# A Spark Connect server on 127.0.0.1, started with the pyspark installation's own
# sbin/start-connect-server.sh (local mode, two cores), for `sparkanon run --remote`.
#
#   scripts/connect_server.sh start   # prints the URL (sc://127.0.0.1:PORT)
#   scripts/connect_server.sh stop
#
# Settings (environment): SPARKANON_CONNECT_DIR (logs, pid; default
# /tmp/sparkanon_connect), SPARKANON_CONNECT_PORT (default 15102), PYTHON (the
# interpreter whose pyspark is used and that runs the server's Python workers; default
# python3).
set -euo pipefail

DIR="${SPARKANON_CONNECT_DIR:-/tmp/sparkanon_connect}"
PORT="${SPARKANON_CONNECT_PORT:-15102}"
PYTHON="${PYTHON:-python3}"
HOME_DIR="$("$PYTHON" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')"
export SPARK_HOME="$HOME_DIR" SPARK_LOG_DIR="$DIR/logs" SPARK_PID_DIR="$DIR" \
    SPARK_IDENT_STRING="sparkanon" SPARK_LOCAL_IP=127.0.0.1 \
    PYSPARK_PYTHON="$("$PYTHON" -c 'import sys; print(sys.executable)')"

case "${1:-}" in
start)
    mkdir -p "$DIR/logs"
    "$SPARK_HOME/sbin/start-connect-server.sh" --master "local[2]" \
        --conf "spark.connect.grpc.binding.address=127.0.0.1" \
        --conf "spark.connect.grpc.binding.port=$PORT" \
        --conf "spark.ui.enabled=false" >/dev/null
    for ((i = 0; i < 300; i++)); do
        if grep -qs "Spark Connect server started" "$DIR"/logs/*.out; then
            echo "sc://127.0.0.1:$PORT"
            exit 0
        fi
        sleep 0.2
    done
    echo "the Spark Connect server did not start; its log:" >&2
    tail -30 "$DIR"/logs/*.out >&2 || true
    exit 1
    ;;
stop)
    "$SPARK_HOME/sbin/stop-connect-server.sh" >/dev/null 2>&1 || true
    echo "stopped"
    ;;
*)
    echo "usage: $0 start|stop" >&2
    exit 2
    ;;
esac
