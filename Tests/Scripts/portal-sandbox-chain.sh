#!/usr/bin/env bash
# The whole Secret-portal chain through the real `credvault-full`: the app runs in the Flatpak
# sandbox of scripts/sandbox/flatpak-sandbox.sh (bwrap with /.flatpak-info, xdg-dbus-proxy that
# lets only org.freedesktop.portal.* through, the real xdg-desktop-portal 1.16 and gnome-keyring's
# Secret backend), on a throw-away bus that can activate nothing:
#   portal-sandbox-chain.sh CREDVAULT_FULL SCRATCH_DIR
# Prints one line per step, `NAME STATUS`, for the test to check; never a secret. Exit status 77
# when the sandbox cannot run here (bwrap cannot make namespaces, a program is missing).
set -u
source "$(cd "$(dirname "$0")" && pwd)/sandbox-chain-common.sh"
a=org.example.App
b=org.example.Other
vault_a="$home/.var/app/$a/data/credential-vault/default.cvault"
vault_b="$home/.var/app/$b/data/credential-vault/default.cvault"

# Inside, org.freedesktop.secrets is out of reach (the proxy lets only the portals through).
step no-secret-service sandbox "$a" sh -c \
    '! dbus-send --session --print-reply --reply-timeout=5000 --dest=org.freedesktop.secrets /org/freedesktop/secrets org.freedesktop.DBus.Peer.Ping'
step info-before sh -c "$(declare -f sandbox); root='$root' cli='$cli' home='$home' runtime='$runtime';
    sandbox $a '$cli' info --backend auto > '$scratch/info' && grep -q '^chosen because: inside a Flatpak sandbox ($a): sealed file, device key from the Secret portal' '$scratch/info'"
step store sandbox "$a" sh -c "printf 'sandboxed value' | '$cli' store --backend auto app token"
step vault-under-portal-custody sh -c "$(declare -f sandbox); root='$root' cli='$cli' home='$home' runtime='$runtime';
    sandbox $a '$cli' info --backend auto > '$scratch/info' && grep -q '^custody: Secret portal' '$scratch/info' && grep -q '^rollback counter: yes' '$scratch/info'"
step second-run-reads sh -c "$(declare -f sandbox); root='$root' cli='$cli' home='$home' runtime='$runtime';
    test \"\$(sandbox $a '$cli' lookup --backend auto app token)\" = 'sandboxed value'"
# The lean `credvault` hands `auto` over to credvault-full beside it, as outside.
step lean-reads sh -c "$(declare -f sandbox); root='$root' cli='$cli' home='$home' runtime='$runtime';
    test \"\$(sandbox $a '$(dirname "$cli")/credvault' lookup --backend auto app token)\" = 'sandboxed value'"
# Moving the vault to the host-secret file's custody and back, inside the sandbox.
step custody-to-file sandbox "$a" "$cli" custody file --device
step custody-back-to-portal sandbox "$a" "$cli" custody portal --device
step reads-after-moves sh -c "$(declare -f sandbox); root='$root' cli='$cli' home='$home' runtime='$runtime';
    test \"\$(sandbox $a '$cli' lookup --backend auto app token)\" = 'sandboxed value'"
# Another app with A's vault file (and A's counters) copied into its own data: its portal secret,
# and so its device key, is another.
mkdir -p "$(dirname "$vault_b")" "$home/.var/app/$b/.local/state"
cp -p "$vault_a" "$vault_b"
cp -rp "$home/.var/app/$a/.local/state/credential-vault" "$home/.var/app/$b/.local/state/" 2>/dev/null
step other-app-cannot-open sandbox "$b" "$cli" lookup --backend auto app token
# Nor can it write: a store refuses the same way and leaves the file as it was (never a new
# vault, never a re-key under its own secret).
step other-app-store-refused sandbox "$b" sh -c "printf 'other value' | '$cli' store --backend auto app token"
step other-app-vault-unchanged cmp -s "$vault_a" "$vault_b"
# Outside a sandbox the portal custody refuses, whatever the vault says.
step outside-sandbox-refused env XDG_STATE_HOME="$home/.var/app/$a/.local/state" "$cli" lookup --backend file --vault "$vault_a" app token
