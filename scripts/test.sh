#!/usr/bin/env bash
# The whole test suite: installs missing Debian packages, starts the services the tests talk to
# (a private D-Bus session with gnome-keyring, the local OpenID provider, the InsForge test
# server), runs `swift test`, and stops everything. Extra arguments go to `swift test`.
set -euo pipefail
cd "$(dirname "$0")/.."
# A step that fails says which one (a service that did not start, the build, the tests).
trap 'echo "test.sh: \"$BASH_COMMAND\" failed (status $?)" >&2' ERR
scripts/install-deps.sh
if [ -z "${CREDVAULT_TEST_INNER:-}" ]; then
    export CREDVAULT_TEST_INNER=1
    if [ -x scripts/with-keyring.sh ]; then exec scripts/with-keyring.sh "$0" "$@"; fi
fi
# Each scripts/services/NAME.sh starts one service and prints the environment (KEY=VALUE lines)
# the tests need; called with "stop" it stops it. They keep their state (pids, ports) in this
# run's directory (scripts/service-state.sh), so that another run in this checkout (a focused
# run beside scripts/sanitizers.sh, two focused runs) neither stops nor reuses this run's.
CREDVAULT_SERVICE_STATE=$(mktemp -d "${TMPDIR:-/tmp}/credvault-run.XXXXXX")
export CREDVAULT_SERVICE_STATE
stops=()
cleanup() {
    for s in "${stops[@]}"; do "$s" stop || true; done
    rm -rf "$CREDVAULT_SERVICE_STATE"
}
trap cleanup EXIT
for svc in scripts/services/*.sh; do
    [ -e "$svc" ] || continue
    envfile=$(mktemp)
    "$svc" start >"$envfile"
    stops+=("$svc")
    while IFS= read -r line; do [ -n "$line" ] && export "$line"; done <"$envfile"
    rm -f "$envfile"
done
# Extra arguments go to `swift test`; those that choose the build (--sanitize..., --scratch-path,
# -c/--configuration) go to `swift build` too.
build_args=()
filtered=0
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
    case "${args[i]}" in
    --sanitize=* | --scratch-path=* | --configuration=*) build_args+=("${args[i]}") ;;
    --sanitize | --scratch-path | -c | --configuration) build_args+=("${args[i]}" "${args[i + 1]}") ;;
    --filter | --filter=*) filtered=1 ;;
    esac
done
# A failed build stops here (the filter alone would hide its status).
swift build --build-tests --enable-all-traits "${build_args[@]}" 2>&1 | { grep -vE 'prohibited flag|^\[' || true; }
((PIPESTATUS[0] == 0)) || { echo "test.sh: the build failed" >&2; exit 1; }
# In parallel: Swift Testing runs test cases concurrently on Swift's cooperative pool. The width
# is bounded because a test that blocks a pool thread (a subprocess, a KDF) delays every task
# queued behind it: with a few cases at a time, queues stay short on a 2-core machine.
parallel=(--skip-build --enable-all-traits --experimental-maximum-parallelization-width "${CREDVAULT_TEST_WIDTH:-6}")
# (Never `exec swift test`: this shell stops the services when the tests end.)
exclusive=$(scripts/exclusive-suites.sh)
if ((filtered)) || [ -z "$exclusive" ]; then
    # A focused run (--filter): the chosen tests, in parallel, exclusive suites among them.
    status=0
    swift test "${parallel[@]}" "$@" || status=$?
    exit $status
fi
swift test "${parallel[@]}" --skip "$exclusive" "$@"
# Then the suites tagged .exclusive (Tests/Support/ExclusiveTag.swift), one test at a time:
# they stop or starve what the others share (the cooperative pool, a daemon).
swift test --skip-build --enable-all-traits --no-parallel --filter "$exclusive" "$@"
