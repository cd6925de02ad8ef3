#!/usr/bin/env bash
# Sharing libsecret's keyring file inside a Flatpak sandbox: the real `credvault-full`
# (--backend libsecret-file) and libsecret's own `secret-tool`, run one after the other in the
# sandbox of scripts/sandbox/flatpak-sandbox.sh with the same app id and home (bwrap with
# /.flatpak-info, xdg-dbus-proxy letting only org.freedesktop.portal.* through, the real
# xdg-desktop-portal 1.16 and gnome-keyring's Secret backend), on a throw-away bus that can
# activate nothing. Both key the file ~/.var/app/APPID/data/keyrings/default.keyring with the
# Secret portal's 64 bytes for the app; each sees what the other stores, replaces and deletes.
# Also: a vault the CLI makes there with the default backend (no --backend, no --custody) is
# under the portal's custody.
#   libsecret-file-sandbox-chain.sh CREDVAULT_FULL SCRATCH_DIR
# Prints one line per step, `NAME STATUS`, for the test to check; never a secret. Exit status 77
# when the sandbox cannot run here (bwrap cannot make namespaces, a program is missing).
#
# secret-tool (libsecret 0.20.5 with Debian 12's GLib) can wait forever for a quick answer of the
# portal (docs/TESTING.md, "The Flatpak sandbox": GLib drops the Response signal from the
# well-known name until its GetNameOwner returns; under load, most runs): its runs go through
# scripts/sandbox/delayed-secret-backend.py, which holds gnome-keyring's answer back 500 ms.
# credvault's own runs get the quick answer, as they must handle it.
set -u
if [ "${3:-}" != --inside-private-bus ] && ! command -v secret-tool >/dev/null 2>&1; then
    echo "libsecret-file-sandbox-chain: secret-tool is missing" >&2; exit 77
fi
source "$(cd "$(dirname "$0")" && pwd)/sandbox-chain-common.sh"
lean="$(dirname "$cli")/credvault"
a=org.example.App
keyring="$home/.var/app/$a/data/keyrings/default.keyring"

ours() { # ours ARGS...: credvault-full in app A's sandbox, once
    sandbox "$a" "$cli" "$@"
}
theirs() { # theirs ARGS...: secret-tool in app A's sandbox, the portal's answer held back
    backend_delay=500 sandbox "$a" secret-tool "$@"
}
prints() { # prints EXPECTED COMMAND...: COMMAND succeeds and prints exactly EXPECTED
    local expected=$1 got rc=0; shift
    got=$("$@") || rc=$?
    [ "$rc" = 0 ] || return "$rc"
    [ "$got" = "$expected" ] || { echo "printed something else" >&2; return 1; }
}
fed() { # fed INPUT COMMAND...: COMMAND with INPUT on its stdin
    local input=$1; shift
    printf '%s' "$input" | "$@"
}
info_says() { # info_says PATTERN...: `credvault-full info --backend libsecret-file` in A has every line
    local out pattern
    out=$(ours info --backend libsecret-file) || return $?
    for pattern in "$@"; do grep -q -- "$pattern" <<<"$out" || { echo "info lacks $pattern: $out" >&2; return 1; }; done
}

# Inside, org.freedesktop.secrets is out of reach (the proxy lets only the portals through).
step no-secret-service sandbox "$a" sh -c \
    '! dbus-send --session --print-reply --reply-timeout=5000 --dest=org.freedesktop.secrets /org/freedesktop/secrets org.freedesktop.DBus.Peer.Ping'
step info-names-file-and-key info_says '^backend: libsecret-file$' "^path: $keyring\$" "^key from: the Secret portal's secret for this app\$" \
    '^chosen because: chosen explicitly$'

# credvault stores, secret-tool reads (by the attributes credvault writes: service, username).
step ours-store fed "from credvault" ours store --backend libsecret-file app token
step file-in-app-data test -s "$keyring"
step theirs-read-ours prints "from credvault" theirs lookup service app username token
# secret-tool stores, credvault reads.
step theirs-store fed "from secret-tool" theirs store --label "by secret-tool" service app username other
step ours-read-theirs prints "from secret-tool" ours lookup --backend libsecret-file app other
# Replacements, each seen by the other side.
step ours-replace fed "replaced by credvault" ours store --backend libsecret-file app other
step theirs-see-our-replacement prints "replaced by credvault" theirs lookup service app username other
step theirs-replace fed "replaced by secret-tool" theirs store --label "by secret-tool" service app username token
step ours-see-their-replacement prints "replaced by secret-tool" ours lookup --backend libsecret-file app token
# Deletions, each seen by the other side (secret-tool lookup: status 1 when nothing matches).
step theirs-clear theirs clear service app username other
step ours-see-their-deletion ours lookup --backend libsecret-file app other
step ours-delete ours delete --backend libsecret-file app token
step theirs-see-our-deletion theirs lookup service app username token
# The lean credvault hands libsecret-file over to credvault-full beside it.
step lean-store fed "through the lean credvault" sandbox "$a" "$lean" store --backend libsecret-file app lean
step lean-read-by-theirs prints "through the lean credvault" theirs lookup service app username lean
# Nothing of it is in gnome-keyring (the login collection, outside the sandbox).
step not-in-gnome-keyring sh -c '[ -z "$(secret-tool search --all service app 2>&1)" ]'

# The CLI's default backend (the sealed file) inside a sandbox: a new vault is under the
# portal's custody without --custody, through the lean credvault as well.
c=org.example.Defaults
step default-store fed "default backend" sandbox "$c" "$lean" store app token
step default-vault-under-portal-custody sh -c "$(declare -f sandbox); root='$root' cli='$cli' home='$home' runtime='$runtime';
    sandbox $c '$cli' info > '$scratch/info' && grep -q '^custody: Secret portal' '$scratch/info' && grep -q '^rollback counter: yes' '$scratch/info'"
step default-second-run-reads sh -c "$(declare -f sandbox); root='$root' cli='$cli' home='$home' runtime='$runtime';
    test \"\$(sandbox $c '$lean' lookup app token)\" = 'default backend'"
# Outside the sandbox, libsecret-file without a password is refused (8, not available).
step outside-without-password-refused env HOME="$home" XDG_DATA_HOME="$home/.var/app/$a/data" "$cli" lookup --backend libsecret-file app token
