#!/usr/bin/env bash
# The InsForge test server (Tests/Servers/insforge/server.py) for the test suite.
#   insforge.sh start  - starts it on an ephemeral 127.0.0.1 port (unless already running),
#                        waits until it answers, prints INSFORGE_TEST_URL=http://127.0.0.1:<port>
#   insforge.sh stop   - stops it
# State (pid, port, log) lives in this test run's state (scripts/service-state.sh): one server
# per run, so that another run, in this checkout or another, which stops its own server when it
# ends, never stops this one; called by hand, one per user and checkout. Quiet on stderr unless
# something fails (then the server log is shown).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$("$root/scripts/service-state.sh" insforge)
pidfile="$dir/server.pid" portfile="$dir/server.port" log="$dir/server.log"

# The pid in $pidfile, if that process is still our server (not a reused pid).
ours() {
    local pid
    pid=$(cat "$pidfile" 2>/dev/null) || return 1
    [[ -n $pid ]] && grep -qa "insforge/server.py" "/proc/$pid/cmdline" 2>/dev/null && echo "$pid"
}

running() {
    ours >/dev/null && [[ -s $portfile ]] && health "$(cat "$portfile")"
}

health() {
    python3 - "$1" <<'PY'
import sys, urllib.request
try:
    urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/__test__/health", timeout=2).read()
except Exception:
    sys.exit(1)
PY
}

fail() {
    echo "insforge.sh: $*" >&2
    [[ -f $log ]] && tail -n 20 "$log" >&2
    exit 1
}

start() {
    mkdir -p "$dir"
    if ! running; then
        stop  # a stale or hung one
        # stdout's first line is PORT=<n>; the request log goes to stderr, both to $log.
        python3 "$root/Tests/Servers/insforge/server.py" --port 0 >"$log" 2>&1 </dev/null &
        echo $! >"$pidfile"
        for _ in $(seq 600); do  # a ceiling of 60 s (a loaded machine starts Python slowly)
            port=$(sed -n '1s/^PORT=\([0-9]*\)$/\1/p' "$log" 2>/dev/null)
            [[ -n $port ]] && health "$port" && break
            kill -0 "$(cat "$pidfile")" 2>/dev/null || fail "server exited during start"
            port=""
            sleep 0.1
        done
        [[ -n $port ]] || { stop; fail "server did not answer in time"; }
        echo "$port" >"$portfile"
    fi
    echo "INSFORGE_TEST_URL=http://127.0.0.1:$(cat "$portfile")"
}

stop() {
    local pid
    if pid=$(ours); then
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$pidfile" "$portfile"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
