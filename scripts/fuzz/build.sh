#!/usr/bin/env bash
# Builds the libFuzzer targets with swiftc directly (SwiftPM cannot link -sanitize=fuzzer
# executables). Each library module a target needs (scripts/fuzz/targets.sh) is compiled once,
# instrumented, with -enable-testing so that the targets reach its internal parsers with
# `@testable import`; each target is then its own small file(s) linked against those modules.
# Binaries go to fuzz-out/bin/, modules to fuzz-out/modules/ and fuzz-out/lib/, seed corpora to
# fuzz-out/seeds/TARGET/ (golden fixtures, the library's own encoders, known traps for the
# parsers), seeds that crash today to fuzz-out/known-crashes/TARGET/ (known-crashes.txt).
# A module is rebuilt only when its sources, what it imports or this script changed.
# Usage: scripts/fuzz/build.sh [TARGET...]   (default: every available target)
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/install-deps.sh core
source scripts/fuzz/targets.sh
# The package's dependencies (swift-log) are compiled here like its own modules, from SwiftPM's checkouts.
swift package resolve 2>&1 | grep -vE 'prohibited flag' >&2 || true
mkdir -p fuzz-out/bin fuzz-out/modules fuzz-out/lib
targets=("$@")
((${#targets[@]})) || targets=($(available_targets))
for target in "${targets[@]}"; do
    target_available "$target" || { echo "fuzz: unknown or unavailable target $target" >&2; exit 2; }
done
# -O: a -Onone sealed-file target runs about 40 times fewer inputs in the same seconds.
# -package-name: the library uses `package` access between its modules, as SwiftPM builds it.
common=(-parse-as-library -swift-version 6 -O -package-name CredentialVault -I fuzz-out/modules)
for c in Sources/C[A-Z]*/; do common+=(-I "${c%/}"); done
instrumented=(-sanitize=fuzzer,address -g)
jobs=$(nproc)
quiet() { grep -vE 'prohibited flag|Cannot export local symbol' || true; }

modules=()
for target in "${targets[@]}"; do modules+=($(target_modules "$target")); done
modules=($(printf '%s\n' "${modules[@]}" | awk '!seen[$0]++'))

# 1. Each module's interface, in dependency order (type-checking only: a few seconds each), so
#    that every module's code can then be compiled at the same time as the others'.
stale=()
for module in "${modules[@]}"; do
    lib=fuzz-out/lib/lib$module.a
    newer=""
    [ -f "$lib" ] && newer=$(find "$(module_dir "$module")" scripts/fuzz/build.sh scripts/fuzz/targets.sh -newer "$lib" -print -quit)
    for dep in $(module_imports "$module"); do
        [[ " ${stale[*]} " == *" $dep "* || "fuzz-out/lib/lib$dep.a" -nt "$lib" ]] && newer=yes
    done
    [ -f "$lib" ] && [ -z "$newer" ] && continue
    rm -f "$lib"
    stale+=("$module")
    swiftc "${common[@]}" $(dependency_flags "$module") $(module_cflags "$module") -enable-testing -module-name "$module" -wmo -experimental-skip-non-inlinable-function-bodies \
        -emit-module -emit-module-path "fuzz-out/modules/$module.swiftmodule" $(module_sources "$module") 2>&1 | quiet
    [ -f "fuzz-out/modules/$module.swiftmodule" ] || { echo "fuzz: the interface of $module did not build" >&2; exit 1; }
done

# 2. Their code, instrumented, all at once (whole-module, LLVM on every core).
start=$SECONDS
pids=()
for module in "${stale[@]}"; do
    echo "fuzz: building the $module module" >&2
    swiftc "${common[@]}" $(dependency_flags "$module") $(module_cflags "$module") "${instrumented[@]}" -enable-testing -module-name "$module" -wmo -num-threads "$jobs" \
        -emit-library -static -o "fuzz-out/lib/lib$module.a" -emit-module-path "fuzz-out/lib/$module.swiftmodule" \
        $(module_sources "$module") 2>&1 | quiet &
    pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
for module in "${stale[@]}"; do
    [ -f "fuzz-out/lib/lib$module.a" ] || { echo "fuzz: build of the $module module failed" >&2; exit 1; }
done
((${#stale[@]} == 0)) || echo "fuzz: ${stale[*]} built in $((SECONDS - start)) s" >&2

# 3. The targets: their own files, linked with the whole of each module they use (all of its
#    conformances, as SwiftPM links a module's objects), then their seeds.
for target in "${targets[@]}"; do
    start=$SECONDS
    link=(-Xlinker --whole-archive)
    libraries=()
    cflags=()
    for module in $(target_modules "$target"); do
        link+=(-Xlinker "fuzz-out/lib/lib$module.a")
        libraries+=($(module_libraries "$module"))
        cflags+=($(module_cflags "$module"))
    done
    link+=(-Xlinker --no-whole-archive "${libraries[@]}")
    rm -f "fuzz-out/bin/$target"
    swiftc "${common[@]}" "${cflags[@]}" "${instrumented[@]}" -module-name "Fuzz_${target//-/_}" "$(target_dir "$target")"/*.swift $(fuzz_support) \
        "${link[@]}" -o "fuzz-out/bin/$target" 2>&1 | quiet
    [ -x "fuzz-out/bin/$target" ] || { echo "fuzz: build of $target failed" >&2; exit 1; }
    seeds="fuzz-out/seeds/$target" known="fuzz-out/known-crashes/$target"
    rm -rf "$seeds" "$known" && mkdir -p "$seeds"
    target_seeds "$target" "$seeds" || { echo "fuzz: writing the seeds of $target failed" >&2; exit 1; }
    for seed in "$seeds"/*; do
        if known_crash_reason "$target" "$(basename "$seed")" >/dev/null; then mkdir -p "$known" && mv "$seed" "$known/"; fi
    done
    echo "fuzz: $target built in $((SECONDS - start)) s, $(ls "$seeds" | wc -l) seeds$([ -d "$known" ] && echo ", $(ls "$known" | wc -l) known to crash")" >&2
done
