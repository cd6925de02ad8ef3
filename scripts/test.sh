#!/usr/bin/env bash
# The whole test suite: installs missing Debian packages, starts the services the tests talk to
# (a private D-Bus session with gnome-keyring, the local OpenID provider, the InsForge test
# server), runs `swift test`, and stops everything. Extra arguments go to `swift test`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
if [ -z "${CREDVAULT_TEST_INNER:-}" ]; then
    export CREDVAULT_TEST_INNER=1
    if [ -x scripts/with-keyring.sh ]; then exec scripts/with-keyring.sh "$0" "$@"; fi
fi
# Each scripts/services/NAME.sh starts one service and prints the environment (KEY=VALUE lines)
# the tests need; called with "stop" it stops it.
stops=()
cleanup() { for s in "${stops[@]}"; do "$s" stop || true; done; }
trap cleanup EXIT
for svc in scripts/services/*.sh; do
    [ -e "$svc" ] || continue
    envfile=$(mktemp)
    "$svc" start >"$envfile"
    stops+=("$svc")
    while IFS= read -r line; do [ -n "$line" ] && export "$line"; done <"$envfile"
    rm -f "$envfile"
done
swift build --build-tests 2>&1 | grep -vE 'prohibited flag|^\[' || true
# Serially: several suites block a thread while they wait for a subprocess, a D-Bus call or a
# lock, and on a 2-core machine two such tests in parallel starve Swift's cooperative pool
# (width = cores), making the deadline tests of the others late by seconds. Serial: ~50 s.
swift test --no-parallel "$@"
