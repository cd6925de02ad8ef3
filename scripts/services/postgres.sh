#!/usr/bin/env bash
# PostgreSQL for the fleet-store tests: two throwaway clusters (scripts/postgres/cluster.sh),
# started in parallel (~1-2 s):
#   - plain: unix socket, trust (the failover drill starts a cluster with a replica of its own);
#   - TLS: TCP 127.0.0.1, own CA, verify-full, scram-sha-256 (random password in a 0600 passfile).
#   postgres.sh start   prints the KEY=VALUE lines the tests read:
#       CREDVAULT_TEST_POSTGRES            libpq connection string of the plain cluster
#       CREDVAULT_TEST_POSTGRES_TLS        connection string of the TLS + scram cluster
#       CREDVAULT_TEST_POSTGRES_TLS_CA     its CA certificate
#   postgres.sh stop    stops both and deletes their directories
# As root (CI) the servers run as Debian's `postgres` user (postgres refuses root).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
# $CREDVAULT_PG_STATE, else this run's (scripts/service-state.sh): stop stops only these clusters.
state=${CREDVAULT_PG_STATE:-$("$here/service-state.sh" postgres)}
cluster=$here/postgres/cluster.sh

stop() {
    for name in plain tls; do
        if [ -f "$state/$name.dir" ]; then "$cluster" stop "$(cat "$state/$name.dir")" >/dev/null 2>&1 || true; fi
    done
    rm -rf "$state"
}

# Reads one variable out of a cluster's `export NAME='value'` lines.
var() { sed -n "s/^export $2='\(.*\)'\$/\1/p" "$1" | tail -n 1; }

start() {
    "$here/install-deps.sh" postgres
    stop
    mkdir -p "$state"; chmod 700 "$state"
    # The server user must reach the cluster directories: keep them under /tmp unless told.
    export TMPDIR=${CREDVAULT_PG_TMPDIR:-/tmp}
    "$cluster" start >"$state/plain.env" 2>"$state/plain.log" & p1=$!
    "$cluster" start --tls >"$state/tls.env" 2>"$state/tls.log" & p2=$!
    ok=1
    wait $p1 || ok=0
    wait $p2 || ok=0
    for name in plain tls; do
        dir=$(var "$state/$name.env" PGTEST_DIR)
        [ -n "$dir" ] && echo "$dir" >"$state/$name.dir"
    done
    if [ $ok -ne 1 ]; then cat "$state"/*.log >&2; stop; exit 1; fi
    echo "CREDVAULT_TEST_POSTGRES=$(var "$state/plain.env" PGTEST_CONNINFO)"
    echo "CREDVAULT_TEST_POSTGRES_CLUSTER_SCRIPT=$cluster"
    echo "CREDVAULT_TEST_POSTGRES_TLS=$(var "$state/tls.env" PGTEST_CONNINFO)"
    echo "CREDVAULT_TEST_POSTGRES_TLS_CA=$(var "$state/tls.env" PGTEST_DIR)/tls/ca.crt"
}

case ${1:-} in
    start) start ;;
    stop) stop ;;
    *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
