#!/usr/bin/env bash
# Prints the state directory of the test service NAME (pid files, ports, logs, keys):
#   scripts/service-state.sh NAME
# Inside a scripts/test.sh run it is NAME under that run's $CREDVAULT_SERVICE_STATE (a fresh
# directory per run), so that two runs in one checkout (a focused run beside
# scripts/sanitizers.sh, two focused runs) each start and stop services of their own. A service
# script called by hand, without it, gets one directory per user and checkout, as before:
# its `stop` finds what its `start` left.
set -euo pipefail
name=${1:?usage: $0 NAME}
if [ -n "${CREDVAULT_SERVICE_STATE:-}" ]; then
    echo "$CREDVAULT_SERVICE_STATE/$name"
else
    checkout=$(cd "$(dirname "$0")/.." && pwd)
    echo "${TMPDIR:-/tmp}/credvault-$name.$(id -u).$(printf %s "$checkout" | cksum | cut -d' ' -f1)"
fi
