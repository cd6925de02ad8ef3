#!/usr/bin/env bash
# The CI-short settings of the reliability checks that are not inside `swift test`
# (crash consistency, multi-process stress, memory hygiene, secret leaks, fault injection and
# the bad-input catalogue run in every `swift test`):
#   1. fuzzing: build the libFuzzer targets (each library module once: about 2 minutes of CPU),
#      run each for CREDVAULT_CI_FUZZ_SECONDS (20), as many at a time as there are cores;
#   2. sanitizers: the suite under CREDVAULT_CI_SANITIZERS = none | address | thread | all
#      (default address: a debug and an ASan build of everything, then the suite under ASan).
# Prints the time of each step. Exit status: non-zero if any step failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
fuzz_seconds=${CREDVAULT_CI_FUZZ_SECONDS:-20}
sanitizers=${CREDVAULT_CI_SANITIZERS:-address}
status=0
step() {
    local name=$1 start=$SECONDS
    shift
    if "$@"; then
        echo "ci: $name passed in $((SECONDS - start)) s" >&2
    else
        status=1
        echo "ci: $name FAILED after $((SECONDS - start)) s" >&2
    fi
}
step "fuzz build" scripts/fuzz/build.sh
step "fuzz run (${fuzz_seconds} s per target)" scripts/fuzz/run.sh "$fuzz_seconds"
if [ "$sanitizers" != none ]; then
    # Without the two exhaustive keyless-edit sweeps (thousands of decodes of the same format
    # code: 5 of ASan's 9 minutes); the suite runs them, and the sealed-file fuzz target runs
    # that decoding under ASan.
    step "sanitizers ($sanitizers)" scripts/sanitizers.sh "$sanitizers" --skip "KeylessEditTests|LongLivedEditTests"
fi
exit $status
