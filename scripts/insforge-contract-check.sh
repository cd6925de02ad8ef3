#!/usr/bin/env bash
# Keeps the InsForge test server honest: runs schemathesis (PyPI) against a fresh server
# with the contract Tests/Servers/insforge/openapi.yaml, then the server's own smoke tests.
# Exits non-zero on any failure.
#
# Which operations and checks run, and why some are disabled (known spec/backend
# differences, operations the server does not implement), is documented in
# Tests/Servers/insforge/schemathesis.toml; the server's choices per difference are at the
# top of Tests/Servers/insforge/server.py.
#
# Environment: INSFORGE_CONTRACT_VENV (default .build/insforge-contract-venv),
# INSFORGE_CONTRACT_SEED (default fixed, for reproducible CI runs; "random" for a new one),
# INSFORGE_CONTRACT_EXAMPLES (examples per operation, default from schemathesis.toml).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
srv="$root/Tests/Servers/insforge"
schemathesis_version=4.32.5
venv="${INSFORGE_CONTRACT_VENV:-$root/.build/insforge-contract-venv}"
seed="${INSFORGE_CONTRACT_SEED:-20260101}"

# 1. A venv with schemathesis (reused while the pinned version matches).
"$root/scripts/install-deps.sh" insforge
if [[ "$("$venv/bin/schemathesis" --version 2>/dev/null)" != *" $schemathesis_version" ]]; then
    echo "insforge-contract-check: installing schemathesis $schemathesis_version in $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$schemathesis_version"
fi

# 2. A fresh server of our own on an ephemeral port, stopped on exit. Its failed sign-in
#    limit is off, or /sessions would answer 429 to most of the run.
work=$(mktemp -d "${TMPDIR:-/tmp}/insforge-contract.XXXXXX")
server_pid=""
cleanup() {
    if [[ -n $server_pid ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
# The output files exist before the server starts: the background job opens them only when it
# runs, and a first poll before that would read a missing file (under `set -e`, the end).
: >"$work/server.out"
: >"$work/server.log"
python3 "$srv/server.py" --port 0 --config '{"signInFailureLimit": 0}' >"$work/server.out" 2>"$work/server.log" </dev/null &
server_pid=$!
port=""
for _ in $(seq 100); do
    port=$(sed -n '1s/^PORT=\([0-9]*\)$/\1/p' "$work/server.out")
    [[ -n $port ]] && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log" >&2; exit 1; }
    sleep 0.1
done
[[ -n $port ]] || { echo "insforge-contract-check: server did not start" >&2; exit 1; }
export INSFORGE_TEST_URL="http://127.0.0.1:$port"

# 3. A signed-up user whose access token schemathesis sends (bearer-protected operations).
INSFORGE_CONTRACT_TOKEN=$(python3 - "$INSFORGE_TEST_URL" <<'PY'
import json, secrets, sys, urllib.request
body = json.dumps({"email": "contract-check@example.com",
                   "password": secrets.token_urlsafe(16)}).encode()
req = urllib.request.Request(sys.argv[1] + "/api/auth/users?client_type=server", body,
                             {"Content-Type": "application/json"})
print(json.load(urllib.request.urlopen(req, timeout=10))["accessToken"])
PY
)
export INSFORGE_CONTRACT_TOKEN

# 4. Schemathesis: all phases (examples, coverage, fuzzing, stateful).
args=(--config-file "$srv/schemathesis.toml" run "$srv/openapi.yaml" --no-color)
[[ $seed == random ]] || args+=(--seed "$seed")
[[ -z ${INSFORGE_CONTRACT_EXAMPLES:-} ]] || args+=(--max-examples "$INSFORGE_CONTRACT_EXAMPLES")
status=0
(cd "$work" && "$venv/bin/schemathesis" "${args[@]}") || status=$?
if ((status != 0)); then
    echo "insforge-contract-check: schemathesis failed (server log follows)" >&2
    tail -n 40 "$work/server.log" >&2
    exit "$status"
fi

# 5. The server's own end-to-end smoke tests.
python3 -m unittest discover -s "$srv" -p 'test_*.py'
