#!/usr/bin/env bash
# Runs each fuzz target for SECONDS (default 60) with AddressSanitizer, a 10 s per-input hang
# limit and a 2 GiB memory limit, starting from its seeds and the corpus kept from earlier
# runs (fuzz-out/corpus/TARGET); as many targets at a time as there are cores (each is one
# process on one core, so each still gets SECONDS of a core on an otherwise idle machine).
# Exits non-zero on any crash, hang, leak or OOM; the input that caused it is saved as
# fuzz-out/artifacts/TARGET-crash-* (or -timeout-*, -leak-*) and can be replayed with:
# fuzz-out/bin/TARGET fuzz-out/artifacts/FILE
# Seeds known to crash today (scripts/fuzz/known-crashes.txt) are replayed first and reported,
# whether they still crash or not, without failing the run.
# Usage: scripts/fuzz/run.sh [SECONDS] [TARGET...]   (builds missing binaries first)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
shift || true
source scripts/fuzz/targets.sh
targets=("$@")
((${#targets[@]})) || targets=($(available_targets))
missing=()
for target in "${targets[@]}"; do [ -x "fuzz-out/bin/$target" ] || missing+=("$target"); done
((${#missing[@]} == 0)) || scripts/fuzz/build.sh "${missing[@]}"
mkdir -p fuzz-out/artifacts

# The seeds of known, unfixed crashes: still crashing is reported, not failed; a fixed one says so.
replay_known_crashes() {
    local target=$1 seed name reason
    for seed in "fuzz-out/known-crashes/$target"/*; do
        [ -e "$seed" ] || continue
        name=$(basename "$seed")
        reason=$(known_crash_reason "$target" "$name" || echo "no longer listed in scripts/fuzz/known-crashes.txt")
        if "fuzz-out/bin/$target" "$seed" >"fuzz-out/$target-known-$name.log" 2>&1; then
            echo "fuzz: $target: the known crash $name no longer crashes: remove its line from" \
                "scripts/fuzz/known-crashes.txt so that it seeds the run" >&2
        else
            echo "fuzz: $target: KNOWN CRASH, NOT FIXED YET: seed $name still crashes ($reason);" \
                "not fuzzed from, not failing the run (replay: fuzz-out/bin/$target $seed)" >&2
        fi
    done
}

fuzz() {
    local target=$1 corpus="fuzz-out/corpus/$1" log="fuzz-out/$1.log" runs cov
    mkdir -p "$corpus"
    replay_known_crashes "$target"
    if "fuzz-out/bin/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="fuzz-out/artifacts/$target-" "$corpus" "fuzz-out/seeds/$target" >"$log" 2>&1; then
        runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
        cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 || true)
        echo "fuzz: $target: $runs inputs, $cov, corpus $(ls "$corpus" | wc -l), no crash, hang or leak" >&2
    else
        echo "fuzz: $target FAILED (see $log):" >&2
        grep -E 'ERROR|SUMMARY|Test unit written|Fatal error|timeout' "$log" | head -20 >&2
        return 1
    fi
}

status=0
running=0
for target in "${targets[@]}"; do
    if ((running >= $(nproc))); then
        wait -n || status=1
        running=$((running - 1))
    fi
    echo "fuzz: $target for $seconds s" >&2
    fuzz "$target" &
    running=$((running + 1))
done
while ((running > 0)); do
    wait -n || status=1
    running=$((running - 1))
done
exit $status
