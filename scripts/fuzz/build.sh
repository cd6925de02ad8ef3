#!/usr/bin/env bash
# Builds the libFuzzer targets with swiftc directly (SwiftPM cannot link -sanitize=fuzzer
# executables): each target is compiled into one module together with the sources it fuzzes,
# so that internal parsers are reachable. Binaries go to fuzz-out/bin/, seed corpora to
# fuzz-out/seeds/TARGET/ (from the golden fixtures and the library's own encoders).
# Usage: scripts/fuzz/build.sh [TARGET...]   (default: every target in Fuzz/)
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/install-deps.sh core
source scripts/fuzz/targets.sh
mkdir -p fuzz-out/bin
targets=("$@")
((${#targets[@]})) || targets=($(available_targets))
for target in "${targets[@]}"; do
    sources=$(target_sources "$target") || { echo "fuzz: unknown or unavailable target $target" >&2; exit 2; }
    echo "fuzz: building $target" >&2
    start=$SECONDS
    # shellcheck disable=SC2086
    swiftc -sanitize=fuzzer,address -parse-as-library -swift-version 6 -O -g \
        -module-name "Fuzz_${target//-/_}" $(target_flags "$target") $sources \
        -o "fuzz-out/bin/$target" 2>&1 | grep -vE 'prohibited flag|Cannot export local symbol' || true
    [ -x "fuzz-out/bin/$target" ] || { echo "fuzz: build of $target failed" >&2; exit 1; }
    seeds="fuzz-out/seeds/$target"
    rm -rf "$seeds" && mkdir -p "$seeds"
    target_seeds "$target" "$seeds"
    echo "fuzz: $target built in $((SECONDS - start)) s, $(ls "$seeds" | wc -l) seeds" >&2
done
