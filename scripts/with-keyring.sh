#!/bin/sh
# Runs a command inside a private, throw-away D-Bus session bus, never the user's own bus or
# keyring, with DISPLAY/WAYLAND_DISPLAY unset so that no unlock prompt can ever appear.
#
# Usage: scripts/with-keyring.sh [--unlocked | --locked | --no-provider] [--no-activation] [--] COMMAND [ARG...]
#   --unlocked       (default) a gnome-keyring-daemon Secret Service whose "login" collection
#                    (the "default" alias) is created and unlocked non-interactively;
#   --locked         the same keyring, but the daemon is restarted without the password, so the
#                    default collection is locked;
#   --no-provider    a bus without any service directory: nothing provides org.freedesktop.secrets.
#   --no-activation  with --unlocked or --locked: the bus has no service directory either, so
#                    only what is started here runs on it (scripts/sandbox/flatpak-sandbox.sh
#                    starts xdg-desktop-portal on it, which would otherwise D-Bus-activate the
#                    permission store and the document portal).
#
# Inside, COMMAND sees:
#   CREDVAULT_TEST_KEYRING       the mode (unlocked, locked or no-provider): tests check it to
#                                know that they talk to a private test bus;
#   CREDVAULT_TEST_KEYRING_PID   the PID of the gnome-keyring-daemon (not for no-provider);
#   CREDVAULT_TEST_KEYRING_HOME  the temporary directory holding the bus's XDG dirs.
# The bus, the daemon and the keyring files are removed afterwards; the exit status is COMMAND's.
# Needs the Debian packages dbus-daemon, dbus-bin and gnome-keyring (scripts/deps/secret-service.txt).
set -eu
here=$(cd "$(dirname "$0")" && pwd)

if [ "${1:-}" != "--inside-private-bus" ]; then
    mode=unlocked
    activation=yes
    while :; do
        case "${1:-}" in
            --unlocked) mode=unlocked; shift ;;
            --locked) mode=locked; shift ;;
            --no-provider) mode=no-provider; shift ;;
            --no-activation) activation=no; shift ;;
            *) break ;;
        esac
    done
    [ "${1:-}" = "--" ] && shift
    if [ $# -eq 0 ]; then echo "usage: $0 [--unlocked|--locked|--no-provider] [--no-activation] [--] COMMAND [ARG...]" >&2; exit 2; fi
    for tool in dbus-run-session dbus-send gnome-keyring-daemon; do
        command -v "$tool" >/dev/null 2>&1 || {
            echo "with-keyring: $tool is missing: run scripts/install-deps.sh secret-service" >&2; exit 3; }
    done
    home=$(mktemp -d "${TMPDIR:-/tmp}/credvault-keyring.XXXXXX")
    chmod 700 "$home"
    mkdir -m 700 "$home/run" "$home/data" "$home/config" "$home/cache"
    # SwiftPM reads its configuration (the mirrors scripts/install-deps.sh writes for offline
    # machines) from $XDG_CONFIG_HOME/swiftpm/configuration when XDG_CONFIG_HOME is set, else
    # from ~/.swiftpm/configuration: the builds run in here keep the user's.
    swiftpm_config=${XDG_CONFIG_HOME:+$XDG_CONFIG_HOME/swiftpm/configuration}
    swiftpm_config=${swiftpm_config:-$HOME/.swiftpm/configuration}
    if [ -d "$swiftpm_config" ]; then
        mkdir -m 700 "$home/config/swiftpm"
        ln -s "$swiftpm_config" "$home/config/swiftpm/configuration"
    fi
    # Everything the daemon and the bus derive from the environment points into $home.
    export XDG_RUNTIME_DIR="$home/run" XDG_DATA_HOME="$home/data" XDG_CONFIG_HOME="$home/config"
    export XDG_CACHE_HOME="$home/cache" CREDVAULT_TEST_KEYRING_HOME="$home"
    # Never a GUI prompt (it blocks a synchronous libsecret call forever), never the desktop bus
    # or keyring of the user running this.
    unset DISPLAY WAYLAND_DISPLAY DBUS_SESSION_BUS_ADDRESS GNOME_KEYRING_CONTROL GNOME_KEYRING_PID \
        CREDVAULT_TEST_KEYRING CREDVAULT_TEST_KEYRING_PID
    config=""
    { [ "$mode" = "no-provider" ] || [ "$activation" = no ]; } && config="--config-file=$here/dbus-no-activation.conf"
    rc=0
    # shellcheck disable=SC2086
    dbus-run-session $config -- "$0" --inside-private-bus "$mode" "$@" || rc=$?
    rm -rf "$home"
    exit "$rc"
fi

# ---- inside the private bus ----
shift
mode=$1
shift
home=$CREDVAULT_TEST_KEYRING_HOME
export CREDVAULT_TEST_KEYRING="$mode"
password=${CREDVAULT_TEST_KEYRING_PASSWORD:-credvault-test}
gkd_pid=""

has_secrets_owner() {
    # NameHasOwner never triggers D-Bus activation: asking the Secret Service itself before our
    # daemon is up would activate a second, locked daemon from the .service file.
    dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
        org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q 'boolean true'
}

wait_for() { # wait_for WHAT CONDITION...: up to 10 s
    what=$1; shift
    i=0
    until "$@"; do
        i=$((i + 1))
        if [ "$i" -gt 100 ]; then
            echo "with-keyring: timed out waiting for $what" >&2
            cat "$home/gkd.log" >&2 2>/dev/null || true
            return 1
        fi
        sleep 0.1
    done
}

stop_daemon() {
    [ -n "$gkd_pid" ] || return 0
    kill -CONT "$gkd_pid" 2>/dev/null || true  # a test may have stopped it
    kill "$gkd_pid" 2>/dev/null || true
    wait "$gkd_pid" 2>/dev/null || true
    gkd_pid=""
}
trap stop_daemon EXIT
trap 'stop_daemon; exit 130' INT TERM

no_secrets_owner() { ! has_secrets_owner; }
keyring_written() { [ -s "$XDG_DATA_HOME/keyrings/login.keyring" ]; }

if [ "$mode" != "no-provider" ]; then
    # --unlock reads the password on stdin and creates (or unlocks) the "login" collection.
    printf '%s' "$password" \
        | gnome-keyring-daemon --foreground --unlock --components=secrets >>"$home/gkd.log" 2>&1 &
    gkd_pid=$!
    wait_for "gnome-keyring-daemon to own org.freedesktop.secrets" has_secrets_owner
    if [ "$mode" = "locked" ]; then
        wait_for "the login keyring file" keyring_written
        stop_daemon
        wait_for "org.freedesktop.secrets to be released" no_secrets_owner
        # Without --unlock the daemon loads login.keyring but cannot open it: locked.
        gnome-keyring-daemon --foreground --components=secrets </dev/null >>"$home/gkd.log" 2>&1 &
        gkd_pid=$!
        wait_for "the locked gnome-keyring-daemon" has_secrets_owner
    fi
    export CREDVAULT_TEST_KEYRING_PID="$gkd_pid"
fi

rc=0
"$@" || rc=$?
exit "$rc"
