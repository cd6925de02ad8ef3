#!/usr/bin/env bash
# Where the time of a whole `credvault lookup` process goes (median of 41 runs each):
#  - /bin/true, then tiny Swift programs linking one more layer of what credvault links each
#    time: the Swift runtime, FoundationEssentials, Foundation (with ICU), + libsecret/glib;
#  - `credvault-full --help` (every library of the full command line loaded, no vault work) and
#    `credvault-full lookup` with a key file: what `credvault` was before the lean split;
#  - the lean `credvault --help` and `credvault lookup` with a key file (CredentialVault and the
#    CLI library, Swift libraries static in release), and `credvault migrate --help`, which the
#    lean one hands over to credvault-full (execv);
#  - the same lookup from a lean program built from Sources/CredentialVault alone (no Secret
#    Service, auth, OpenSSL, libcurl), with the Swift libraries shared and then static.
# Usage: Benchmarks/startup-breakdown.sh   (builds credvault and credvault-full in release if needed)
set -euo pipefail
cd "$(dirname "$0")/.."
for product in credvault credvault-full; do
    [ -x .build/release/$product ] || swift build -c release --product $product >/dev/null 2>&1
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo 'print("x")' >"$work/runtime.swift"
printf 'import FoundationEssentials\nprint(Data([1]).count)\n' >"$work/essentials.swift"
printf 'import Foundation\nprint(Data([1]).count)\n' >"$work/foundation.swift"
printf 'import Foundation\nimport CLibSecret\nprint(Data([1]).count, secret_password_free)\n' >"$work/libsecret.swift"
cat >"$work/Lean.swift" <<'SWIFT'
import Foundation
@main struct Lean {
    static func main() throws {
        let a = CommandLine.arguments
        let store = try SealedFileStore.open(at: URL(fileURLWithPath: a[1]), secret: .keyFile(URL(fileURLWithPath: a[2])))
        guard let value = try store.load(CredentialKey(service: a[3], account: a[4])) else { exit(1) }
        FileHandle.standardOutput.write(value)
    }
}
SWIFT
for name in runtime essentials foundation; do swiftc -O "$work/$name.swift" -o "$work/$name" 2>/dev/null; done
# shellcheck disable=SC2046
swiftc -O "$work/libsecret.swift" -I Sources/CLibSecret $(pkg-config --cflags-only-I libsecret-1 | sed 's/-I/-Xcc -I/g') \
    -lsecret-1 -o "$work/libsecret" 2>/dev/null
library=$(find Sources/CredentialVault -name '*.swift')
# shellcheck disable=SC2086
swiftc -O -wmo -parse-as-library -package-name CredentialVault -module-name CredentialVault -I Sources/CSodium $library "$work/Lean.swift" \
    -lsodium -o "$work/lean" 2>/dev/null
# shellcheck disable=SC2086
swiftc -O -wmo -parse-as-library -static-stdlib -package-name CredentialVault -module-name CredentialVault -I Sources/CSodium $library \
    "$work/Lean.swift" -lsodium -o "$work/lean-static" 2>/dev/null
export HOME="$work" XDG_STATE_HOME="$work/state" XDG_DATA_HOME="$work/data"
.build/release/credvault keygen "$work/key"
printf 's3cr3t' | .build/release/credvault store api.example.com deploy --vault "$work/vault/v.cvault" --key-file "$work/key"
python3 - "$work" "$PWD/.build/release/credvault" <<'PY'
import statistics, subprocess, sys, time
work, credvault = sys.argv[1], sys.argv[2]
lookup = ["api.example.com", "deploy"]
rows = [("/bin/true", ["/bin/true"]),
        ("Swift runtime only", [f"{work}/runtime"]),
        ("+ FoundationEssentials", [f"{work}/essentials"]),
        ("+ Foundation (ICU)", [f"{work}/foundation"]),
        ("+ libsecret, glib, gio", [f"{work}/libsecret"]),
        ("credvault-full --help (no vault work)", [f"{credvault}-full", "--help"]),
        ("credvault-full lookup --key-file", [f"{credvault}-full", "lookup", *lookup, "--vault", f"{work}/vault/v.cvault", "--key-file", f"{work}/key"]),
        ("credvault --help (lean, static)", [credvault, "--help"]),
        ("credvault lookup --key-file (lean, static)", [credvault, "lookup", *lookup, "--vault", f"{work}/vault/v.cvault", "--key-file", f"{work}/key"]),
        ("credvault migrate --help (handed to credvault-full)", [credvault, "migrate", "--help"]),
        ("lean lookup: CredentialVault only", [f"{work}/lean", f"{work}/vault/v.cvault", f"{work}/key", *lookup]),
        ("lean lookup, -static-stdlib", [f"{work}/lean-static", f"{work}/vault/v.cvault", f"{work}/key", *lookup])]
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
