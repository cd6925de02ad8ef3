#!/usr/bin/env bash
# Where the time of a whole `credvault` process goes before it does any vault work: times
# (median of 41 runs) /bin/true, then tiny Swift programs that link what credvault links, one
# layer more each time: the Swift runtime alone, FoundationEssentials, Foundation (with ICU),
# Foundation + libsecret/glib, and finally `credvault --help` itself.
# Usage: Benchmarks/startup-breakdown.sh   (builds credvault in release if needed)
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .build/release/credvault ] || swift build -c release --product credvault >/dev/null 2>&1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo 'print("x")' >"$work/runtime.swift"
printf 'import FoundationEssentials\nprint(Data([1]).count)\n' >"$work/essentials.swift"
printf 'import Foundation\nprint(Data([1]).count)\n' >"$work/foundation.swift"
printf 'import Foundation\nimport CLibSecret\nprint(Data([1]).count, secret_password_free)\n' >"$work/libsecret.swift"
for name in runtime essentials foundation; do swiftc -O "$work/$name.swift" -o "$work/$name" 2>/dev/null; done
# shellcheck disable=SC2046
swiftc -O "$work/libsecret.swift" -I Sources/CLibSecret $(pkg-config --cflags-only-I libsecret-1 | sed 's/-I/-Xcc -I/g') \
    -lsecret-1 -o "$work/libsecret" 2>/dev/null
python3 - "$work" "$PWD/.build/release/credvault" <<'PY'
import statistics, subprocess, sys, time
work, credvault = sys.argv[1], sys.argv[2]
rows = [("/bin/true", ["/bin/true"]),
        ("Swift runtime only", [f"{work}/runtime"]),
        ("+ FoundationEssentials", [f"{work}/essentials"]),
        ("+ Foundation (ICU)", [f"{work}/foundation"]),
        ("+ libsecret, glib, gio", [f"{work}/libsecret"]),
        ("credvault --help", [credvault, "--help"])]
print("| process | median | min |\n|---|---|---|")
for label, argv in rows:
    times = []
    for _ in range(45):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    times = times[4:]
    print(f"| {label} | {statistics.median(times) * 1e3:.2f} ms | {min(times) * 1e3:.2f} ms |")
PY
