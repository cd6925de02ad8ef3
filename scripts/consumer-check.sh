#!/usr/bin/env bash
# The README's install section, tried as a new user would: a new package that depends on this
# checkout and uses every library product builds and runs, and prints no warning but the one
# SwiftPM prints for glib's pkg-config `-pthread` (docs/API.md, "Install", says why it stays).
# The README's Swift examples are compiled in that package too (each ```swift block that begins
# with an import, a file of its own), so they stay correct Swift against the current API.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/cv-consumer-XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/Sources/App"
cat >"$work/Package.swift" <<SWIFT
// swift-tools-version:6.0
import PackageDescription
let package = Package(
    name: "App",
    dependencies: [.package(path: "$root")],
    targets: [
        .executableTarget(name: "App", dependencies: [
            .product(name: "CredentialVault", package: "$(basename "$root")"),
            .product(name: "CredentialVaultSecretService", package: "$(basename "$root")"),
            .product(name: "CredentialVaultAuth", package: "$(basename "$root")"),
            .product(name: "CredentialVaultTesting", package: "$(basename "$root")"),
            .product(name: "CredentialVaultTPM", package: "$(basename "$root")"),
            .product(name: "CredentialVaultPostgres", package: "$(basename "$root")"),
        ], swiftSettings: [.swiftLanguageMode(.v6)])
    ])
SWIFT
cat >"$work/Sources/App/main.swift" <<'SWIFT'
import CredentialVault
import CredentialVaultAuth
import CredentialVaultSecretService
import CredentialVaultPostgres
import CredentialVaultTPM
import CredentialVaultTesting
import Foundation

struct Failed: Error { let what: String }

func run() async throws {
    let directory = URL(fileURLWithPath: CommandLine.arguments[1])
    let keyFile = try await VaultSecret.createKeyFile(at: directory.appendingPathComponent("vault.key"))
    let vault = try await SealedFileStore.create(at: directory.appendingPathComponent("vault/app.cvault"), secret: keyFile)
    try await vault.save(Data("s3cret".utf8), for: CredentialKey(service: "api.example.com", account: "bot"), options: .default)
    let loaded = try await vault.load(CredentialKey(service: "api.example.com", account: "bot"))
    if loaded != Data("s3cret".utf8) { throw Failed(what: "the value did not round-trip") }
    let faults = FaultInjectingStore()
    faults.inject(.fail(.locked), into: .load)
    do {
        _ = try await faults.load(CredentialKey(service: "a", account: "b"))
        throw Failed(what: "the injected fault was not thrown")
    } catch CredentialVaultError.locked {}
    // The custodians a configuration can offer (no TPM or keyring is asked here).
    var custody = SealedFileConfiguration()
    custody.custodians = [KeyringCustodian(), TPMCustodian(configuration: TPMConfiguration(tcti: "device:/dev/tpmrm0"))]
    if custody.custodians.map(\.custody) != [.keyring, .tpm] { throw Failed(what: "the custodians") }
    _ = PostgresConfiguration(connectionString: "host=/nonexistent dbname=fleet")
    print("consumer ok: \(try await vault.listKeys(KeyQuery(servicePrefix: "api.")).count) key")
}
try await run()
SWIFT
# Each ```swift block of the README that begins with an import (the others are fragments, such
# as the Package.swift lines), as it is, one file per block.
awk -v dir="$work/Sources/App" '
    /^```swift$/ { inside = 1; text = ""; next }
    /^```$/ && inside {
        inside = 0
        if (text ~ /^import /) { n++; file = sprintf("%s/ReadmeExample%02d.swift", dir, n); printf "%s", text > file; close(file) }
        next
    }
    inside { text = text $0 "\n" }
' "$root/README.md"
# And each ```swift block of docs/API.md that says it is compiled here (a complete example).
awk -v dir="$work/Sources/App" '
    /^```swift$/ { inside = 1; text = ""; next }
    /^```$/ && inside {
        inside = 0
        if (text ~ /^\/\/ A complete .*compiled by scripts\/consumer-check.sh/) { n++; file = sprintf("%s/ApiExample%02d.swift", dir, n); printf "%s", text > file; close(file) }
        next
    }
    inside { text = text $0 "\n" }
' "$root/docs/API.md"
ls "$work/Sources/App"/ApiExample*.swift >/dev/null 2>&1 || { echo "consumer-check: no compiled example found in docs/API.md" >&2; exit 1; }
ls "$work/Sources/App"/ReadmeExample*.swift >/dev/null 2>&1 || { echo "consumer-check: no Swift example found in README.md" >&2; exit 1; }
cd "$work"
# No index store: nothing reads it, and it costs about a fifth of a debug build's compile time.
log=$(swift build --disable-index-store 2>&1) || { printf '%s\n' "$log"; echo "consumer-check: the consumer package does not build" >&2; exit 1; }
warnings=$(printf '%s\n' "$log" | grep -E 'warning:' | grep -v 'prohibited flag(s): -pthread' || true)
if [ -n "$warnings" ]; then
    printf '%s\n' "$warnings"
    echo "consumer-check: the consumer build has warnings" >&2
    exit 1
fi
mkdir -m 700 "$work/data"
"$work/.build/debug/App" "$work/data"
