#!/usr/bin/env bash
# Test service: one KeePassXC and one KWallet (kwalletd5) Secret Service, each headless on a
# private D-Bus bus of its own (scripts/services/providers/with-provider.sh), for the tests that
# run the Secret Service backend against every provider (Tests/CredentialVaultSecretServiceTests,
# "Providers" suites). The gnome-keyring of scripts/with-keyring.sh stays the test process's own
# session bus; these buses are apart from it and from each other, so the providers' tests never
# disturb one another. Tests that lock, stop or kill a provider start an instance of their own.
#   start: starts both (in parallel, ~5 s) and prints, for each one that came up,
#            CREDVAULT_TEST_KEEPASSXC_BUS=<address>   CREDVAULT_TEST_KWALLET_BUS=<address>
#          A provider whose package is missing is left out (its tests report themselves skipped).
#   stop:  stops them (each also stops by itself when the process that started it exits).
# Set CREDVAULT_SKIP_PROVIDERS=1 to start none.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
state="${TMPDIR:-/tmp}/credvault-providers.$PPID"
providers=(keepassxc kwallet)

stop() {
    for name in "${providers[@]}"; do
        [ -s "$state/$name.holder" ] || continue
        # The holder is `tail --pid`: ending it ends with-provider.sh's command, which then stops
        # its provider and bus and removes its directory.
        kill "$(cat "$state/$name.holder")" 2>/dev/null
    done
    for name in "${providers[@]}"; do
        [ -s "$state/$name.wrapper" ] || continue
        pid=$(cat "$state/$name.wrapper")
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    done
    rm -rf "$state"
}

if [ "${1:-start}" = stop ]; then
    stop
    exit 0
fi
[ -n "${CREDVAULT_SKIP_PROVIDERS:-}" ] && exit 0
rm -rf "$state"
mkdir -m 700 -p "$state"
# The process that runs the tests (scripts/test.sh): the providers end when it ends, even if it
# is killed before it can call "stop".
owner=$PPID
for name in "${providers[@]}"; do
    case "$name" in
        keepassxc) command -v keepassxc >/dev/null || continue ;;
        kwallet) command -v kwalletd5 >/dev/null || continue ;;
    esac
    # The command run inside: writes the bus address and its own PID, then waits for the owner.
    setsid "$here/providers/with-provider.sh" "$name" sh -c '
        printf "%s\n" "$WITH_PROVIDER_BUS" >"$1.bus.tmp" && mv "$1.bus.tmp" "$1.bus"
        echo $$ >"$1.holder"
        exec tail --pid="$2" -f /dev/null' holder "$state/$name" "$owner" \
        </dev/null >"$state/$name.log" 2>&1 &
    echo $! >"$state/$name.wrapper"
done
for name in "${providers[@]}"; do
    [ -s "$state/$name.wrapper" ] || continue
    pid=$(cat "$state/$name.wrapper")
    for _ in $(seq 600); do
        [ -s "$state/$name.bus" ] && [ -s "$state/$name.holder" ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if [ -s "$state/$name.bus" ]; then
        echo "CREDVAULT_TEST_$(echo "$name" | tr a-z A-Z)_BUS=$(cat "$state/$name.bus")"
    else
        echo "secret-service-providers: $name did not start:" >&2
        tail -n 20 "$state/$name.log" >&2
    fi
done
exit 0
