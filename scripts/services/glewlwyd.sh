#!/usr/bin/env bash
# The local OpenID provider for the auth tests: glewlwyd (Debian package) on 127.0.0.1.
#   glewlwyd.sh start  installs it if missing, starts it on a free port with a fresh SQLite
#                      database and fresh ES256/RS256 keys, provisions it, and prints the
#                      KEY=VALUE lines the tests read (GLEWLWYD_ISSUER, GLEWLWYD_URL, ...)
#   glewlwyd.sh stop   stops it (by its recorded PID) and removes its state
# The state lives in $GLEWLWYD_STATE_DIR (default: this test run's, or one per user and
# checkout when called by hand: scripts/service-state.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
state=${GLEWLWYD_STATE_DIR:-$("$here/service-state.sh" glewlwyd)}

free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
# The redirect listener's port is bound again by every sign-in test, long after this start: a
# port from the kernel's ephemeral range may meanwhile be taken by any connection or port-0
# listener of the tests running in parallel (the sign-in then found its port in use). One below
# that range is only ever taken by an explicit bind.
free_port_below_ephemeral() {
    python3 -c '
import random, socket
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
for _ in range(200):
    port = random.randrange(max(1024, low - 8000), low)
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        continue
    finally:
        s.close()
    print(port)
    break
else:
    raise SystemExit("no free port below the ephemeral range")
'
}

stop() {
    if [ -f "$state/server.pid" ]; then
        pid=$(cat "$state/server.pid")
        if kill -0 "$pid" 2>/dev/null; then
            kill "$pid" 2>/dev/null || true
            for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -9 "$pid" 2>/dev/null || true
        fi
    fi
    rm -rf "$state"
}

start() {
    "$here/install-deps.sh" glewlwyd
    stop
    mkdir -p "$state"; chmod 700 "$state"
    local port redirect_port base
    port=$(free_port); redirect_port=$(free_port_below_ephemeral)
    base=http://127.0.0.1:$port
    zcat /usr/share/doc/glewlwyd/database/init.sqlite3.sql.gz | sqlite3 "$state/glewlwyd.db"
    "$here/glewlwyd/make-config.sh" "$port" "$state/glewlwyd.db" > "$state/glewlwyd.conf"
    "$here/glewlwyd/make-keys.sh" "$state"
    nohup glewlwyd -c "$state/glewlwyd.conf" > "$state/server.log" 2>&1 < /dev/null &
    echo $! > "$state/server.pid"
    for _ in $(seq 1 250); do
        curl -sf "$base/config" >/dev/null 2>&1 && break
        kill -0 "$(cat "$state/server.pid")" 2>/dev/null || { tail -20 "$state/server.log" >&2; exit 1; }
        sleep 0.02
    done
    curl -sf "$base/config" >/dev/null || { echo "glewlwyd: not ready" >&2; tail -20 "$state/server.log" >&2; exit 1; }
    local redirect=http://127.0.0.1:$redirect_port/callback
    "$here/glewlwyd/provision.sh" "$base" "$state" "$redirect" "org.credentialvault.test:/callback" >&2
    cat <<ENV
GLEWLWYD_URL=$base
GLEWLWYD_ISSUER=$base/api/oidc
GLEWLWYD_SHORT_ISSUER=$base/api/short
GLEWLWYD_DPOP_ISSUER=$base/api/dpop
GLEWLWYD_PAR_ISSUER=$base/api/par
GLEWLWYD_PAR_SHORT_ISSUER=$base/api/parshort
GLEWLWYD_RESOURCES_ISSUER=$base/api/resources
GLEWLWYD_CLIENT_ID=cli
GLEWLWYD_REDIRECT_URI=$redirect
GLEWLWYD_REDIRECT_PORT=$redirect_port
GLEWLWYD_CUSTOM_REDIRECT_URI=org.credentialvault.test:/callback
GLEWLWYD_USER=alice
GLEWLWYD_PASSWORD=password
GLEWLWYD_ADMIN_USER=admin
GLEWLWYD_ADMIN_PASSWORD=password
GLEWLWYD_SERVICE_CLIENT_ID=svc
GLEWLWYD_SERVICE_SECRET_FILE=$state/svc-secret
GLEWLWYD_CLIENT_KEY_DIR=$state
GLEWLWYD_ROTATED_JWKS_FILE=$state/jwks-rotated.json
GLEWLWYD_LOG=$state/server.log
ENV
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
