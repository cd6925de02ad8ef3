#!/usr/bin/env bash
# Runs each fuzz target for SECONDS (default 60) with AddressSanitizer, a 10 s per-input hang
# limit and a 2 GiB memory limit, starting from its seeds and the corpus kept from earlier
# runs (fuzz-out/corpus/TARGET). Exits non-zero on the first crash, hang, leak or OOM; the
# input that caused it is saved as fuzz-out/artifacts/TARGET-crash-* (or -timeout-*, -leak-*)
# and can be replayed with: fuzz-out/bin/TARGET fuzz-out/artifacts/FILE
# Usage: scripts/fuzz/run.sh [SECONDS] [TARGET...]   (builds missing binaries first)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
shift || true
source scripts/fuzz/targets.sh
targets=("$@")
((${#targets[@]})) || targets=($(available_targets))
mkdir -p fuzz-out/artifacts
status=0
for target in "${targets[@]}"; do
    [ -x "fuzz-out/bin/$target" ] || scripts/fuzz/build.sh "$target"
    corpus="fuzz-out/corpus/$target"
    mkdir -p "$corpus"
    log="fuzz-out/$target.log"
    echo "fuzz: $target for $seconds s" >&2
    if "fuzz-out/bin/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="fuzz-out/artifacts/$target-" "$corpus" "fuzz-out/seeds/$target" >"$log" 2>&1; then
        runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
        cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 || true)
        echo "fuzz: $target: $runs inputs, $cov, corpus $(ls "$corpus" | wc -l), no crash, hang or leak" >&2
    else
        status=1
        echo "fuzz: $target FAILED (see $log):" >&2
        grep -E 'ERROR|SUMMARY|Test unit written|Fatal error|timeout' "$log" | head -20 >&2
    fi
done
exit $status
