#!/bin/sh
# swtpm-stop.sh [--keep] DIR - stops the swtpm that swtpm-start.sh started in DIR and removes DIR
# (--keep leaves it: the TPM's state, for a later swtpm-start.sh --state DIR).
#
# Returns once swtpm has exited, not merely once its pid file is gone: swtpm removes the pid file
# before it lets go of its state directory's lock, and on a loaded machine a swtpm started at
# once on the same state (a TPM "reboot") found the lock still held ("Could not lock access to
# lockfile") and did not start. An exited swtpm counts as gone while still a zombie: --daemon
# reparents swtpm to PID 1, and where PID 1 reaps slowly the zombie stays for seconds (its
# descriptors, and so the lock, are already closed).
set -eu
keep=no
[ "${1:-}" = --keep ] && { keep=yes; shift; }
dir=${1:-}
[ -n "$dir" ] && [ -d "$dir" ] || { echo "swtpm-stop: no swtpm directory given" >&2; exit 1; }
# Whether $pid is a swtpm that has not exited (gone, zombie or another program: no). Checking the
# name keeps a stale pid file from making us signal or wait for anything else.
running() {
    [ "$(cat "/proc/$pid/comm" 2>/dev/null || true)" = swtpm ] || return 1
    state=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1 || true)
    [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}
# Waits up to 5 s (100 x 50 ms) for it to exit.
exited() {
    i=0
    while running && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
    ! running
}
if [ -s "$dir/swtpm.pid" ]; then
    pid=$(cat "$dir/swtpm.pid")
    if running; then
        kill -TERM "$pid" 2>/dev/null || true
        if ! exited; then
            echo "swtpm-stop: $pid did not exit within 5 s of SIGTERM, sending SIGKILL" >&2
            kill -KILL "$pid" 2>/dev/null || true
            exited || { echo "swtpm-stop: $pid survived SIGKILL" >&2; exit 1; }
        fi
    fi
fi
rm -f "$dir/sock" "$dir/sock.ctrl" "$dir/swtpm.pid"
[ "$keep" = yes ] || rm -rf "$dir"
