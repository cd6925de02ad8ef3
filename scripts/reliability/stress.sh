#!/usr/bin/env bash
# Multi-process stress, long setting: P writer processes x N saves/deletes on one vault (plus
# a shared counter incremented under exclusive access), repeated R times; each round checks
# the exact final state, and that a SIGKILLed lock holder leaves no stale lock.
# Usage: scripts/reliability/stress.sh [--processes P] [--ops N] [--rounds R]
#        (default 8 x 1000, 5 rounds; `swift test` runs 8 x 250 once)
set -euo pipefail
cd "$(dirname "$0")/../.."
processes=8 ops=1000 rounds=5
while (($#)); do
    case "$1" in
    --processes) processes=$2; shift 2 ;;
    --ops) ops=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) echo "usage: $0 [--processes P] [--ops N] [--rounds R]" >&2; exit 2 ;;
    esac
done
scripts/install-deps.sh core
swift build --build-tests 2>&1 | grep -vE 'prohibited flag|^\[' || true
for ((r = 1; r <= rounds; r++)); do
    echo "round $r/$rounds"
    CREDVAULT_STRESS_PROCESSES=$processes CREDVAULT_STRESS_OPS=$ops \
        swift test --skip-build --filter MultiProcessStressTests 2>&1 | grep -E '^stress:|✘|Test run|error'
done
