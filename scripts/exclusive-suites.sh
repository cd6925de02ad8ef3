#!/usr/bin/env bash
# Prints the suites tagged `.exclusive` (Tests/Support/ExclusiveTag.swift) as one regular
# expression for `swift test --filter/--skip`: the name of each type declared right after an
# `@Suite(...)` attribute that names the tag; nothing when there is none.
set -euo pipefail
cd "$(dirname "$0")/.."
names=$({ grep -rhA3 --include='*.swift' -E '@Suite\(.*\.exclusive' Tests || true; } |
    sed -nE 's/.*(struct|class|enum|actor) +([A-Za-z0-9_]+).*/\2/p' | sort -u)
[ -n "$names" ] || exit 0
printf '\\.(%s)/' "$(echo "$names" | paste -sd'|')"
echo
