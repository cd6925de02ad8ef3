#!/usr/bin/env bash
# The README's install table, measured: a package that uses only the sealed-file product
# (`CredentialVault`) builds and runs with libsodium-dev alone. The other -dev packages are made
# absent for the build: as root, in a mount namespace of its own, the pkg-config directories
# hold only libsodium's .pc file and the other libraries' header directories are empty (SwiftPM
# reads .pc files itself, from the system's directories). Not root: only PKG_CONFIG_LIBDIR,
# which proves less (the output says which). Prints the warnings such a consumer sees (README,
# "Install"); fails on a build error, on a warning that is not one of those, or when it builds
# another Swift module than CredentialVault and swift-log's Logging.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/cv-sealed-only-XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/Sources/App" "$work/pkgconfig" "$work/empty"
pcdir=$(pkg-config --variable=pcfiledir libsodium)
cp "$pcdir/libsodium.pc" "$work/pkgconfig/libsodium.pc"
. "$root/scripts/consumer-package.sh"
consumer_target App CredentialVault | consumer_manifest "$work"
cat >"$work/Sources/App/main.swift" <<'SWIFT'
import CredentialVault
import Foundation

let directory = URL(fileURLWithPath: CommandLine.arguments[1])
let keyFile = try VaultSecret.createKeyFile(at: directory.appendingPathComponent("vault.key"))
let vault = try SealedFileStore.create(at: directory.appendingPathComponent("vault/app.cvault"), secret: keyFile)
let key = CredentialKey(service: "api.example.com", account: "bot")
try vault.save(Data("s3cret".utf8), for: key, options: .portable)
guard try vault.load(key) == Data("s3cret".utf8) else { fatalError("the value did not round-trip") }
print("sealed-file-only consumer ok")
SWIFT
# What the other -dev packages install: pkg-config files and header directories.
hidden="/usr/share/pkgconfig /usr/lib/pkgconfig /usr/include/glib-2.0 /usr/include/gio-unix-2.0
    /usr/include/libsecret-1 /usr/include/openssl /usr/include/postgresql /usr/include/tss2
    /usr/include/x86_64-linux-gnu/curl /usr/include/curl"
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
    how="only libsodium's pkg-config file and headers present"
    log=$(WORK="$work" PCDIR="$pcdir" HIDDEN="$hidden" unshare -m bash -c '
        set -e
        for d in $HIDDEN; do if [ -d "$d" ]; then mount --bind "$WORK/empty" "$d"; fi; done
        mount --bind "$WORK/pkgconfig" "$PCDIR"
        cd "$WORK" && swift build --disable-index-store 2>&1') \
        || { printf '%s\n' "$log"; echo "sealed-file-only-check: the package does not build with libsodium-dev alone" >&2; exit 1; }
else
    how="PKG_CONFIG_LIBDIR limited to libsodium (not root: other files left in place)"
    log=$(cd "$work" && PKG_CONFIG_LIBDIR="$work/pkgconfig" swift build --disable-index-store 2>&1) \
        || { printf '%s\n' "$log"; echo "sealed-file-only-check: the package does not build" >&2; exit 1; }
fi
warnings=$(printf '%s\n' "$log" | grep -E 'warning:' | sort | uniq -c || true)
echo "sealed-file-only-check ($how): the warnings a consumer sees (count, text):"
printf '%s\n' "${warnings:-  (none)}"
# Only SwiftPM's notes that a declared system library is not installed, and -pthread.
unexpected=$(printf '%s\n' "$warnings" | grep -vE "you may be able to install|prohibited flag\(s\): -pthread|^$" || true)
if [ -n "$unexpected" ]; then
    echo "sealed-file-only-check: unexpected warnings" >&2
    exit 1
fi
# What such a consumer builds: CredentialVault and swift-log's Logging, no other Swift module.
# (It fetches every package the library declares, and pins each in its Package.resolved: SwiftPM
# resolves packages whole; it builds only what the products used need.)
built=$(cd "$work/.build/debug/Modules" && ls -- *.swiftmodule | sed 's/\.swiftmodule$//' | grep -vxE 'App|CredentialVault|Logging' | tr '\n' ' ' || true)
pinned=$(python3 -c 'import json, sys; print(" ".join(sorted(p["identity"] for p in json.load(open(sys.argv[1]))["pins"])))' "$work/Package.resolved")
echo "sealed-file-only-check: Swift packages fetched: ${pinned:-(none)}; modules built besides CredentialVault and Logging: ${built:-(none)}"
if [ -n "$built" ]; then
    echo "sealed-file-only-check: a package using only CredentialVault must build no Swift module but CredentialVault and Logging" >&2
    exit 1
fi
mkdir -m 700 "$work/data"
"$work/.build/debug/App" "$work/data"
