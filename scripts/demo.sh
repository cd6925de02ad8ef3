#!/usr/bin/env bash
# The main job, end to end: build credvault, store a credential in a sealed-file vault (unlocked
# with this machine's device key, the zero-configuration default), read it back byte for byte,
# list it, and show the vault's info. Installs missing Debian packages first.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh core
swift build -c release --product credvault 2>&1 | grep -vE 'prohibited flag' | tail -1
bin=$(swift build -c release --show-bin-path)/credvault
demo=$(mktemp -d "${TMPDIR:-/tmp}/credvault-demo.XXXXXX")
trap 'rm -rf "$demo"' EXIT
export XDG_DATA_HOME="$demo/data" XDG_STATE_HOME="$demo/state"
vault="$demo/data/credential-vault/default.cvault"

echo "+ printf 's3cret-token' | credvault store api.example.com alice"
printf 's3cret-token' | "$bin" store api.example.com alice
echo "+ credvault lookup api.example.com alice"
value=$("$bin" lookup api.example.com alice)
echo "$value"
[ "$value" = "s3cret-token" ] || { echo "demo: read back '$value'" >&2; exit 1; }
echo "+ credvault list"
"$bin" list
echo "+ credvault info"
"$bin" info
echo "+ the vault file holds no plaintext:"
if grep -q 's3cret-token\|api.example.com' "$vault"; then echo "demo: plaintext found in the vault" >&2; exit 1; fi
ls -l "$vault"
echo "demo: OK"
