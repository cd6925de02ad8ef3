#!/bin/sh
# swtpm-stop.sh [--keep] DIR - stops the swtpm that swtpm-start.sh started in DIR and removes DIR
# (--keep leaves it: the TPM's state, for a later swtpm-start.sh --state DIR).
#
# Waits for swtpm to remove its pid file (it does on exit, < 50 ms after SIGTERM), not for the
# PID to vanish: --daemon reparents swtpm to PID 1, and where PID 1 reaps slowly the exited
# swtpm stays a zombie for seconds.
set -eu
keep=no
[ "${1:-}" = --keep ] && { keep=yes; shift; }
dir=${1:-}
[ -n "$dir" ] && [ -d "$dir" ] || { echo "swtpm-stop: no swtpm directory given" >&2; exit 1; }
if [ -s "$dir/swtpm.pid" ]; then
    pid=$(cat "$dir/swtpm.pid")
    # Only signal the PID if it is still a swtpm: a stale pid file must not kill anything else.
    if [ "$(cat "/proc/$pid/comm" 2>/dev/null || true)" = swtpm ]; then
        kill -TERM "$pid" 2>/dev/null || true
        i=0
        while [ -e "$dir/swtpm.pid" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
        if [ -e "$dir/swtpm.pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null || true)" = swtpm ]; then
            echo "swtpm-stop: $pid ignored SIGTERM for 5 s, sending SIGKILL" >&2
            kill -KILL "$pid" 2>/dev/null || true
        fi
    fi
fi
rm -f "$dir/sock" "$dir/sock.ctrl" "$dir/swtpm.pid"
[ "$keep" = yes ] || rm -rf "$dir"
