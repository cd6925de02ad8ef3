#!/usr/bin/env bash
# Crash consistency, long setting: SIGKILL the writer, the passphrase-change loop and the
# key-rotation loop at random moments, N times each, checking the vault after every kill.
# Usage: scripts/reliability/crash.sh [--kills N]   (default 200; `swift test` runs 20)
set -euo pipefail
cd "$(dirname "$0")/../.."
kills=200
while (($#)); do
    case "$1" in
    --kills) kills=$2; shift 2 ;;
    *) echo "usage: $0 [--kills N]" >&2; exit 2 ;;
    esac
done
scripts/install-deps.sh core
swift build --build-tests 2>&1 | grep -vE 'prohibited flag|^\[' || true
CREDVAULT_CRASH_KILLS=$kills swift test --skip-build --filter CrashConsistencyTests 2>&1 \
    | grep -E '^crash/|✘|Test run|error' 
