#!/usr/bin/env bash
# Test service for the Secret Service interop tests and Python keyring's own backend suite: a
# Python venv with the `keyring` package (whose Linux backend talks to the Secret Service; it
# ships the suite, keyring.testing.backend) and pytest, under .build/ so that it is reused.
#   start: makes the venv if needed and prints CREDVAULT_TEST_PYTHON_KEYRING=<its python>
#   stop:  nothing (the venv stays for the next run)
# Set CREDVAULT_SKIP_PYTHON_KEYRING=1 to skip it (offline); the Python interop test then
# reports itself skipped.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "${1:-start}" = "stop" ] && exit 0
[ -n "${CREDVAULT_SKIP_PYTHON_KEYRING:-}" ] && exit 0
venv="$PWD/.build/python-keyring-venv"
if ! "$venv/bin/python" -c 'import keyring, secretstorage, pytest' >/dev/null 2>&1; then
    rm -rf "$venv"
    mkdir -p "$PWD/.build"
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check keyring pytest >&2
fi
echo "CREDVAULT_TEST_PYTHON_KEYRING=$venv/bin/python"
