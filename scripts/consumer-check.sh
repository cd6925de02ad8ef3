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
. "$root/scripts/consumer-package.sh"
{
    consumer_target App CredentialVault CredentialVaultSecretService CredentialVaultAuth CredentialVaultTesting \
        CredentialVaultTPM CredentialVaultPostgres CredentialVaultConfiguration CredentialVaultCredentialServer \
        Logging@swift-log Configuration@swift-configuration ServiceLifecycle@swift-service-lifecycle
    # Must NOT build: each blocking entry point called from async (top-level) code.
    consumer_target BlockingFromAsync CredentialVault CredentialVaultSecretService CredentialVaultPostgres
} | consumer_manifest "$work" "Configuration ServiceLifecycle Metrics"
# Top-level code with an `await` is async, yet Swift prefers the blocking overload there even
# when the call is written with `await`: without the `noasync` marks these lines would compile
# and block the main thread's executor. Every line must be refused (docs/API.md, "Stores and
# their two protocols").
mkdir -p "$work/Sources/BlockingFromAsync"
cat >"$work/Sources/BlockingFromAsync/main.swift" <<'SWIFT'
import CredentialVault
import CredentialVaultPostgres
import CredentialVaultSecretService
import Foundation

let url = URL(fileURLWithPath: "/nonexistent/vault.cvault")
let fleet = PostgresConfiguration(connectionString: "host=/nonexistent", schema: "s")
await Task.yield()
let store = try await SealedFileStore.open(at: url, secret: .device)
_ = try SealedFileStore.open(at: url, secret: .device)
_ = try SealedFileStore.create(at: url, secret: .device)
_ = try SealedFileStore.openOrCreate(at: url, secret: .device)
_ = try SealedFileStore.acceptRestore(at: url, secret: .device)
try store.changeSecret(from: .device, to: .device)
try store.rotateDataKey(secret: .device)
try store.changeCustody(to: .file, secret: .device)
_ = try PostgresStore.open(fleet, host: "h", secret: .device)
_ = try PostgresStore.acceptRestore(fleet, host: "h", secret: .device)
_ = try PostgresStore.initialize(fleet, host: "h", secret: .device)
_ = try BackendResolver().decide()
_ = try BackendResolver().open()
try BackendResolver().unlockInteractively()
_ = try BackendResolver().waitForUnlock(timeout: .seconds(1))
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
log=$(swift build --disable-index-store --product App 2>&1) || { printf '%s\n' "$log"; echo "consumer-check: the consumer package does not build" >&2; exit 1; }
warnings=$(printf '%s\n' "$log" | grep -E 'warning:' | grep -v 'prohibited flag(s): -pthread' || true)
if [ -n "$warnings" ]; then
    printf '%s\n' "$warnings"
    echo "consumer-check: the consumer build has warnings" >&2
    exit 1
fi
mkdir -m 700 "$work/data"
"$work/.build/debug/App" "$work/data"
# The blocking entry points, called from async code, must each be refused by the compiler.
refused=$(swift build --disable-index-store --product BlockingFromAsync 2>&1 | grep -c 'is unavailable from asynchronous contexts; blocks the calling thread' || true)
expected=$(grep -cE '^(_ = )?try (SealedFileStore|PostgresStore|BackendResolver|store)' "$work/Sources/BlockingFromAsync/main.swift")
if [ "$refused" -lt "$expected" ]; then
    echo "consumer-check: $refused of $expected blocking calls from async code were refused by the compiler (expected all: @available(*, noasync))" >&2
    exit 1
fi
