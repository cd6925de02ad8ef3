#!/bin/sh
# swtpm-start.sh [--state DIR] [--shared] - a private software TPM 2.0 (swtpm) on a UNIX socket.
#
#   eval "$(scripts/tpm/swtpm-start.sh)"               # fresh state in a new mktemp dir
#   scripts/tpm/swtpm-stop.sh --keep "$SWTPM_DIR"       # stop, keep the state...
#   eval "$(scripts/tpm/swtpm-start.sh --state "$SWTPM_DIR")"   # ...and start on it (a TPM "reboot")
#   scripts/tpm/swtpm-stop.sh "$SWTPM_DIR"              # stop and remove the state
#
# The socket is mode 0600 in a 0700 directory: only its owner reaches this TPM. --shared (tests
# of "another local user who reaches the TPM") makes the socket 0666 and the directory 0711.
# stdout: shell lines SWTPM_DIR, SWTPM_PID, TPM_TCTI (also in $SWTPM_DIR/env). The state (seeds,
# NV) lives in the directory: a fresh directory is another TPM. Needs swtpm (Debian 12: 0.7.1).
set -eu
log() { printf 'swtpm-start: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
command -v swtpm >/dev/null 2>&1 || die "swtpm not found: scripts/install-deps.sh (scripts/deps/tpm2.txt)"

state= shared=no
while [ $# -gt 0 ]; do
    case "$1" in
        --state) [ -d "${2:-}" ] || die "--state needs an existing directory"; state=$(cd "$2" && pwd); shift ;;
        --shared) shared=yes ;;
        *) die "usage: swtpm-start.sh [--state DIR] [--shared]" ;;
    esac
    shift
done

if [ -n "$state" ]; then
    dir=$state; rm -f "$dir/sock" "$dir/sock.ctrl"
else
    dir=$(mktemp -d "${TMPDIR:-/tmp}/swtpm.XXXXXX")
fi
mode=0600; chmod 700 "$dir"
if [ "$shared" = yes ]; then mode=0666; chmod 711 "$dir"; fi
# AF_UNIX paths are limited to 107 bytes.
[ ${#dir} -le 95 ] || { [ -n "$state" ] || rm -rf "$dir"; die "socket path too long: $dir (use a shorter TMPDIR)"; }

# not-need-init,startup-clear: no CMD_INIT and no TPM2_Startup needed (a client's Startup then
# gets TPM2_RC_INITIALIZE, "already started"). --daemon returns once the sockets listen; its
# stdio goes to /dev/null (errors to the log): a daemon holding our stdout would keep every
# reader of this script's output waiting for end of file.
swtpm socket --tpm2 --server "type=unixio,path=$dir/sock,mode=$mode" --ctrl "type=unixio,path=$dir/sock.ctrl,mode=$mode" \
    --tpmstate dir="$dir" --flags not-need-init,startup-clear --pid file="$dir/swtpm.pid" \
    --log file="$dir/swtpm.log",level=1 --daemon </dev/null >/dev/null 2>&1 \
    || { cat "$dir/swtpm.log" >&2 2>/dev/null || true; [ -n "$state" ] || rm -rf "$dir"; die "swtpm did not start"; }

i=0
while [ ! -s "$dir/swtpm.pid" ]; do   # written by --daemon before it returns; bounded anyway
    i=$((i + 1)); [ $i -le 100 ] || die "swtpm wrote no pid file ($dir/swtpm.log)"
    sleep 0.05
done
{
    echo "SWTPM_DIR=$dir"
    echo "SWTPM_PID=$(cat "$dir/swtpm.pid")"
    echo "TPM_TCTI=swtpm:path=$dir/sock"
} > "$dir/env"
cat "$dir/env"
