#!/usr/bin/env bash
# The software TPM for the TPM custody tests and the bench's tpm group: a private swtpm on a
# UNIX socket (mode 0600, 0700 directory).
#   swtpm.sh start   starts it on a fresh state and prints CREDVAULT_TEST_TPM_TCTI=swtpm:path=...,
#                    CREDVAULT_TEST_TPM_STATE=DIR and TSS2_LOG=all+NONE (ESYS logs every TPM
#                    error to stderr, expected ones included)
#   swtpm.sh stop    stops it and removes its state
# Tests that need another TPM, a restart or a TPM others can reach start their own
# (scripts/tpm/swtpm-start.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
# Where the running swtpm's directory is recorded: this test run's state, or one per user and
# checkout when called by hand (scripts/service-state.sh).
state=$("$here/service-state.sh" swtpm)
record=$state/swtpm.dir

stop() {
    if [ -f "$record" ]; then
        dir=$(cat "$record")
        [ -d "$dir" ] && "$here/tpm/swtpm-stop.sh" "$dir"
        rm -f "$record"
    fi
    rmdir "$state" 2>/dev/null || true
}

start() {
    "$here/install-deps.sh" tpm2
    stop
    local env dir tcti
    env=$("$here/tpm/swtpm-start.sh")
    dir=$(printf '%s\n' "$env" | sed -n 's/^SWTPM_DIR=//p')
    tcti=$(printf '%s\n' "$env" | sed -n 's/^TPM_TCTI=//p')
    mkdir -p "$state"; chmod 700 "$state"
    printf '%s\n' "$dir" > "$record"
    cat <<ENV
CREDVAULT_TEST_TPM_TCTI=$tcti
CREDVAULT_TEST_TPM_STATE=$dir
TSS2_LOG=all+NONE
ENV
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
