#!/usr/bin/env bash
# The test suite under AddressSanitizer (+ LeakSanitizer) and ThreadSanitizer, each in its own
# scratch path (.build-asan, .build-tsan), with the services scripts/test.sh starts.
# LeakSanitizer suppressions (scripts/sanitizers/lsan.supp) cover glib/libsecret/XCTest
# internals only. Memory-scan tests skip themselves under sanitizers.
# Usage: scripts/sanitizers.sh [address|thread|all] [extra swift test arguments]   (default: all)
# Prints how long each pass took (build + tests).
# Every process's sanitizer report (the test runner's and its children's: credvault, the test
# helpers) goes to a file of its own in SCRATCH/sanitizer-reports (log_path), printed when the
# pass fails: a child that exits 1 because LeakSanitizer found a leak shows its report, not just
# "status 1".
set -euo pipefail
cd "$(dirname "$0")/.."
which=${1:-all}
shift || true
here=$PWD
# Children (helper processes, credvault) inherit these where the test passes its environment.
export LSAN_OPTIONS="suppressions=$here/scripts/sanitizers/lsan.supp:print_suppressions=0"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1"
export TSAN_OPTIONS="suppressions=$here/scripts/sanitizers/tsan.supp:halt_on_error=1:second_deadlock_stack=1"
status=0
run() {
    local sanitizer=$1 scratch=$2
    shift 2
    local start=$SECONDS
    local reports="$here/$scratch/sanitizer-reports"
    rm -rf "$reports"
    mkdir -p "$reports"
    echo "sanitizers: $sanitizer: building and testing in $scratch" >&2
    # (With the index store: on Linux `swift test` finds the XCTest tests through it.)
    if ! ASAN_OPTIONS="$ASAN_OPTIONS:log_path=$reports/asan:log_exe_name=1" \
        TSAN_OPTIONS="$TSAN_OPTIONS:log_path=$reports/tsan:log_exe_name=1" \
        scripts/test.sh --sanitize="$sanitizer" --scratch-path "$scratch" "$@" >"$scratch/sanitizer.log" 2>&1; then
        status=1
        echo "sanitizers: $sanitizer FAILED after $((SECONDS - start)) s (see $scratch/sanitizer.log)" >&2
        grep -E "^error:|ERROR: (Address|Leak|Thread)Sanitizer|WARNING: ThreadSanitizer|SUMMARY|✘" "$scratch/sanitizer.log" | head -30 >&2 || true
        print_reports "$reports"
    else
        echo "sanitizers: $sanitizer passed in $((SECONDS - start)) s: $(grep -E 'Test run with' "$scratch/sanitizer.log" | tail -1)" >&2
        local count
        count=$(find "$reports" -type f | wc -l)
        ((count == 0)) || echo "sanitizers: $sanitizer: $count report(s) from processes whose status no test checked, in $reports" >&2
    fi
}
# The first lines of each report file (the name says which program and PID wrote it).
print_reports() {
    local file
    for file in "$1"/*; do
        [ -f "$file" ] || continue
        echo "sanitizers: report $(basename "$file"):" >&2
        head -40 "$file" >&2
    done
}
case "$which" in
address) run address .build-asan "$@" ;;
thread) run thread .build-tsan "$@" ;;
all)
    run address .build-asan "$@"
    run thread .build-tsan "$@"
    ;;
*) echo "usage: $0 [address|thread|all] [swift test arguments]" >&2; exit 2 ;;
esac
exit $status
