#!/usr/bin/env bash
# Keyring custody across gnome-keyring-daemon restarts, through the real `credvault` CLI: a vault
# under login-keyring custody, with a rollback counter, opens after the daemon restarts, refuses
# an older copy put back, reports a locked keyring, and takes the copy back on accept-restore.
# Run inside `scripts/with-keyring.sh --unlocked` (a private bus and daemon):
#   keyring-custody-restarts.sh CREDVAULT SCRATCH_DIR
# Prints one line per step, `NAME STATUS`, for the test to check; never a secret.
set -u
cli=$1
scratch=$2
export XDG_STATE_HOME="$scratch/state" HOME="$scratch/home"
mkdir -p -m 700 "$XDG_STATE_HOME" "$HOME"
vault="$scratch/vaults/v.cvault"
mkdir -p -m 700 "$scratch/vaults"
printf 'custody test passphrase' >"$scratch/pass"
chmod 600 "$scratch/pass"
password=${CREDVAULT_TEST_KEYRING_PASSWORD:-credvault-test}
common=(--vault "$vault" --passphrase-file "$scratch/pass")
pid=${CREDVAULT_TEST_KEYRING_PID:?inside with-keyring.sh only}

step() { # step NAME COMMAND...: runs it, prints NAME and its exit status
    local name=$1; shift
    "$@" >"$scratch/out" 2>"$scratch/err"
    echo "$name $?"
}

owned() {
    dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
        org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q 'boolean true'
}

restart() { # restart unlocked|locked: prints restart-MODE 0, or 1 when the daemon's name did
    # not go or come back within a minute (a loaded machine is slow, never that slow)
    local status=1
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
    for _ in $(seq 1200); do owned || { status=0; break; }; sleep 0.05; done
    if [ "$1" = unlocked ]; then
        printf '%s' "$password" | gnome-keyring-daemon --foreground --unlock --components=secrets >>"$scratch/gkd.log" 2>&1 &
    else
        gnome-keyring-daemon --foreground --components=secrets </dev/null >>"$scratch/gkd.log" 2>&1 &
    fi
    pid=$!
    if [ $status -eq 0 ]; then
        status=1
        for _ in $(seq 1200); do owned && { status=0; break; }; sleep 0.05; done
    fi
    echo "restart-$1 $status"
}
trap 'kill "$pid" 2>/dev/null' EXIT

step init "$cli" init "${common[@]}" --custody keyring --kdf insecure-testing-only
step info-custody sh -c "'$cli' info ${common[*]@Q} | grep -q '^custody: login keyring'"
step info-counter sh -c "'$cli' info ${common[*]@Q} | grep -q '^rollback counter: yes'"
step store-device sh -c "printf device-value | '$cli' store ${common[*]@Q} app device"
step store-token sh -c "printf old-token | '$cli' store ${common[*]@Q} --portable app token"
cp -p "$vault" "$scratch/older"
step store-newer sh -c "printf new-token | '$cli' store ${common[*]@Q} --portable app token"
restart unlocked
step lookup-after-restart sh -c "'$cli' lookup ${common[*]@Q} app token | grep -qx new-token"
step lookup-device-after-restart sh -c "'$cli' lookup ${common[*]@Q} app device | grep -qx device-value"
cp -p "$scratch/older" "$vault"
step lookup-older-copy "$cli" lookup "${common[@]}" app token
restart locked
step lookup-locked "$cli" lookup "${common[@]}" app device
restart unlocked
step accept-restore "$cli" accept-restore "${common[@]}"
step lookup-restored sh -c "'$cli' lookup ${common[*]@Q} app token | grep -qx old-token"
exit 0
