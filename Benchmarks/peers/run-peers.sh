#!/usr/bin/env bash
# Runs credvault-bench and the same operations with the tools people use today (Python keyring
# with keyrings.cryptfile and keyrings.alt, PyNaCl, secret-tool), prints them side by side, and
# draws docs/bench-save-latency.png (save latency against item count).
#
# Usage: Benchmarks/peers/run-peers.sh [--quick] [--items 1,100,1000,10000] [--ours FILE]
#   --ours FILE   reuse credvault-bench --json output instead of running it again
# Creates a Python venv in .bench-venv (packages from PyPI). The Secret Service parts run in a
# private keyring (scripts/with-keyring.sh); outputs go to .build/bench/.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${CREDVAULT_TEST_KEYRING:-}" ] && [ -x scripts/with-keyring.sh ] \
    && command -v gnome-keyring-daemon >/dev/null && command -v dbus-run-session >/dev/null; then
    exec scripts/with-keyring.sh "$0" "$@"
fi
quick=() items=() ours=""
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=(--quick); shift ;;
        --items) items=(--items "$2"); shift 2 ;;
        --ours) ours="$2"; shift 2 ;;
        *) echo "usage: $0 [--quick] [--items N,...] [--ours FILE]" >&2; exit 2 ;;
    esac
done
venv=.bench-venv
if ! "$venv/bin/python" -c 'import keyring, keyrings.alt, keyrings.cryptfile, nacl, matplotlib, secretstorage' 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check keyring keyrings.cryptfile keyrings.alt PyNaCl matplotlib
fi
out=.build/bench
mkdir -p "$out"
if [ -z "$ours" ]; then
    for product in credvault-bench credvault; do
        swift build -c release --product "$product" 2>&1 | grep -E 'error|warning: [^p]' || true
    done
    ours="$out/ours.jsonl"
    .build/release/credvault-bench --json "${quick[@]}" "${items[@]}" --only seal,file,secret-service,cli >"$ours"
fi
"$venv/bin/python" Benchmarks/peers/peers.py "${quick[@]}" "${items[@]}" --out "$out/peers.jsonl"
"$venv/bin/pip" freeze 2>/dev/null | grep -iE '^(keyring|keyrings|pynacl|secretstorage|jeepney|pycryptodome|argon2-cffi)' \
    >"$out/peer-versions.txt" || true
{ echo "Peer versions: $(tr '\n' ' ' <"$out/peer-versions.txt")"; echo; \
  "$venv/bin/python" Benchmarks/peers/compare.py "$ours" "$out/peers.jsonl"; } | tee "$out/comparison.md"
"$venv/bin/python" Benchmarks/peers/plot.py "$ours" "$out/peers.jsonl" --out docs/bench-save-latency.png
