# Sourced (bash) by the chain scripts of Tests/Scripts, run as `NAME.sh CREDVAULT_FULL SCRATCH_DIR`:
# outside, it checks that the Flatpak sandbox of scripts/sandbox/flatpak-sandbox.sh runs here
# (else exit 77) and runs the script again on a throw-away bus with an unlocked gnome-keyring that
# can activate nothing (scripts/with-keyring.sh); inside, it sets root, cli, scratch, home (the
# sandboxed apps' home, in SCRATCH_DIR) and runtime, and defines:
#   sandbox APP_ID COMMAND...   COMMAND in APP_ID's sandbox with that home (deadline
#                               $command_timeout seconds, default 120; the portal's answers
#                               held back $backend_delay ms, default 0: for secret-tool only)
#   step NAME COMMAND...        runs it (stdin /dev/null), prints `NAME STATUS`; its output on
#                               stderr, commented, when it fails
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# Resolved: a path through a symbolic link (.build/debug) is not there inside the sandbox.
cli=$(readlink -f "$1")
scratch=$2

if [ "${3:-}" != --inside-private-bus ]; then
    rc=0
    "$root/scripts/sandbox/flatpak-sandbox.sh" --probe >/dev/null 2>&1 || rc=$?
    [ "$rc" = 0 ] || { echo "$(basename "$0" .sh): the sandbox cannot run here (status $rc)" >&2; exit 77; }
    exec "$root/scripts/with-keyring.sh" --unlocked --no-activation -- "$0" "$cli" "$scratch" --inside-private-bus
fi

home="$scratch/home"
mkdir -p -m 700 "$home"
# The Swift runtime's directory is outside /usr: visible inside for commands run through sh.
runtime=$(ldd "$cli" | awk '/libswiftCore/ { print $3 }' | xargs -r dirname)
sandbox() { # sandbox APP_ID COMMAND...
    local app=$1; shift
    "$root/scripts/sandbox/flatpak-sandbox.sh" --timeout 30 --command-timeout "${command_timeout:-120}" \
        --backend-delay "${backend_delay:-0}" --home "$home" --app-id "$app" \
        --expose "$(dirname "$cli")" ${runtime:+--expose "$runtime"} -- "$@"
}
step() { # step NAME COMMAND...: runs it, prints NAME and its exit status
    local name=$1; shift
    "$@" >"$scratch/out" 2>"$scratch/err" </dev/null
    local rc=$?
    echo "$name $rc"
    [ "$rc" = 0 ] || sed 's/^/# /' "$scratch/err" "$scratch/out" >&2
}
