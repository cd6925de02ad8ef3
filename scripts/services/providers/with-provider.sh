#!/bin/bash
# with-provider.sh PROVIDER CMD [ARG...]
#
# Runs CMD against a throw-away Secret Service (org.freedesktop.secrets) provider, headless, on a
# private D-Bus session bus. PROVIDER is one of:
#   keepassxc      KeePassXC's Secret Service integration (FdoSecrets; Debian 12: keepassxc 2.7.4)
#   kwallet        KWallet's own Secret Service API in kwalletd5 (Debian 12: libkf5wallet-bin 5.103)
#   gnome-keyring  gnome-keyring-daemon --components=secrets (Debian 12: gnome-keyring 42.1)
# The packages are in scripts/deps/secret-service-providers.txt (scripts/install-deps.sh).
#
# What it does:
#   - a private 0700 temp dir holding HOME, XDG_RUNTIME_DIR, XDG_CONFIG_HOME, XDG_DATA_HOME and
#     XDG_CACHE_HOME (exported to CMD); DISPLAY/WAYLAND_DISPLAY are unset, so no dialog can appear;
#   - a private dbus-daemon WITHOUT any <servicedir>: nothing is ever D-Bus-activated, so the only
#     Secret Service on the bus is the one started here (never an auto-started gnome-keyring);
#   - the provider, started headless (by default with its default collection unlocked);
#   - CMD, with DBUS_SESSION_BUS_ADDRESS pointing at the private bus;
#   - on exit (also on INT/TERM/HUP) it stops only what it started, by PID, and removes the temp dir.
# The exit status is CMD's. Before CMD runs: 2 = usage, 3 = a tool is missing, 4 = the provider
# did not come up (its log is printed on stderr).
#
# Exported to CMD besides the bus and XDG variables:
#   WITH_PROVIDER_NAME        keepassxc | kwallet | gnome-keyring
#   WITH_PROVIDER_BUS         the private bus's address (also DBUS_SESSION_BUS_ADDRESS)
#   WITH_PROVIDER_DIR         the private temp dir (also holds the provider's log, <name>.log)
#   WITH_PROVIDER_PID         PID of the provider process (for SIGSTOP/SIGKILL tests)
#   WITH_PROVIDER_BUS_PID     PID of the private dbus-daemon
#   WITH_PROVIDER_COLLECTION  D-Bus object path of the default collection (empty: none)
#   WITH_PROVIDER_LOCK        path of provider-lock.sh   (locks the default collection)
#   WITH_PROVIDER_UNLOCK      path of provider-unlock.sh (unlocks it again, no dialog)
# Options (environment):
#   WITH_PROVIDER_KEEPASSXC_DEFAULTS=1  start KeePassXC with its default Secret Service settings
#                                       (only Enabled=true: access confirmation, delete
#                                       confirmation, unlock before search are on)
#   WITH_PROVIDER_KWALLET_STATE=S       the KWallet session to start in:
#                                         unlocked     (default) as after a login plus one client's
#                                                      Unlock + Prompt
#                                         login-locked as at every login: the wallet is open (PAM),
#                                                      but its collection reports Locked until a
#                                                      client runs Unlock and the returned Prompt
#                                         first-login  as at the very first login: the wallet was
#                                                      just created and kwalletd5 exposes no
#                                                      collection (no default alias) until it restarts
#   WITH_PROVIDER_TIMEOUT=N             seconds to wait for each start-up step (default 20)
#
# Needs: dbus-daemon, dbus-bin (dbus-send), systemd (busctl), python3, and the provider's package;
# kwallet also needs libqca-qt5-2-plugins (its Secret Service sessions need QCA's OpenSSL plugin).

# Functions called through trap and wait_for look unreachable to shellcheck:
# shellcheck disable=SC2317
set -u

here=$(cd "$(dirname "$0")" && pwd)
me=with-provider

usage() {
    echo "usage: $0 keepassxc|kwallet|gnome-keyring COMMAND [ARG...]" >&2
    exit 2
}

[ $# -ge 2 ] || usage
provider=$1
shift
case "$provider" in
    keepassxc|kwallet|gnome-keyring) ;;
    *) usage ;;
esac

need() { # need TOOL HINT: exits 3 if TOOL is not on PATH
    command -v "$1" >/dev/null 2>&1 || { echo "$me: $1 is missing (apt-get install $2)" >&2; exit 3; }
}
need dbus-daemon dbus-daemon
need dbus-send dbus-bin
need busctl systemd
need python3 python3
case "$provider" in
    keepassxc) need keepassxc keepassxc; need keepassxc-cli keepassxc ;;
    kwallet) need kwalletd5 libkf5wallet-bin ;;
    gnome-keyring) need gnome-keyring-daemon gnome-keyring ;;
esac

step_timeout=${WITH_PROVIDER_TIMEOUT:-20}

# ---------------------------------------------------------------------------------------------
# Private directories. Everything the bus, the provider and CMD derive from the environment
# points into $W; nothing of the calling user's session is used.
W=$(mktemp -d "${TMPDIR:-/tmp}/with-provider.XXXXXX") || exit 3
chmod 700 "$W"
mkdir -m 700 "$W/home" "$W/run" "$W/config" "$W/data" "$W/cache"
export HOME="$W/home" XDG_RUNTIME_DIR="$W/run" XDG_CONFIG_HOME="$W/config" \
    XDG_DATA_HOME="$W/data" XDG_CACHE_HOME="$W/cache"
unset DISPLAY WAYLAND_DISPLAY DBUS_SESSION_BUS_ADDRESS GNOME_KEYRING_CONTROL GNOME_KEYRING_PID \
    SSH_AUTH_SOCK PAM_KWALLET5_LOGIN WITH_PROVIDER_PID WITH_PROVIDER_COLLECTION WITH_PROVIDER_BUS
log="$W/$provider.log"

bus_pid=""       # our dbus-daemon (our child)
prov_pid=""      # the provider process
launcher_pid=""  # kwallet only: the python launcher, parent of kwalletd5 (our child)

# ---------------------------------------------------------------------------------------------
# Stopping, by PID only.
alive() { # alive PID: true while the process exists and is not a zombie
    local st
    st=$(sed -n 's/^[0-9]* (.*) \([A-Za-z]\) .*/\1/p' "/proc/$1/stat" 2>/dev/null) || return 1
    [ -n "$st" ] && [ "$st" != Z ]
}

stop_pid() { # stop_pid PID: SIGCONT (a test may have stopped it), SIGTERM, SIGKILL after 5 s
    local pid=$1 i=0
    kill -CONT "$pid" 2>/dev/null
    kill -TERM "$pid" 2>/dev/null
    while alive "$pid" && [ "$i" -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
    alive "$pid" && kill -KILL "$pid" 2>/dev/null
}

stop_provider() {
    if [ -n "$launcher_pid" ]; then
        # kwalletd5 is the launcher's child: while the launcher runs, kwalletd5 has not been
        # reaped, so $prov_pid still names kwalletd5 (no risk of hitting a recycled PID).
        if kill -0 "$launcher_pid" 2>/dev/null && [ -n "$prov_pid" ]; then stop_pid "$prov_pid"; fi
        wait "$launcher_pid" 2>/dev/null
    elif [ -n "$prov_pid" ]; then
        stop_pid "$prov_pid"
        wait "$prov_pid" 2>/dev/null
    fi
    prov_pid=""
    launcher_pid=""
}

cleanup() {
    stop_provider
    if [ -n "$bus_pid" ]; then stop_pid "$bus_pid"; wait "$bus_pid" 2>/dev/null; fi
    bus_pid=""
    rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

fail() { # fail MESSAGE: start-up failed; show the provider's log
    echo "$me: $*" >&2
    [ -s "$log" ] && tail -n 20 "$log" >&2
    exit 4
}

wait_for() { # wait_for SECONDS CMD...: polls CMD every 0.1 s
    local n=$(($1 * 10)) i=0
    shift
    until "$@"; do
        i=$((i + 1))
        [ "$i" -gt "$n" ] && return 1
        sleep 0.1
    done
}

# ---------------------------------------------------------------------------------------------
# The private bus: like the project's scripts/dbus-no-activation.conf (no <servicedir>), but
# listening on a socket file inside our 0700 runtime dir.
cat >"$W/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <keep_umask/>
  <listen>unix:dir=$XDG_RUNTIME_DIR</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
EOF
# --nofork keeps it our child, so that cleanup can stop and reap it by PID.
dbus-daemon --config-file="$W/bus.conf" --nofork --print-address=3 3>"$W/bus.addr" \
    </dev/null 2>>"$W/bus.log" &
bus_pid=$!
wait_for "$step_timeout" test -s "$W/bus.addr" || { log="$W/bus.log"; fail "dbus-daemon did not start"; }
DBUS_SESSION_BUS_ADDRESS=$(head -n 1 "$W/bus.addr")
export DBUS_SESSION_BUS_ADDRESS

# ---------------------------------------------------------------------------------------------
# Bus helpers (NameHasOwner never triggers activation; there is none here anyway).
has_secrets_owner() {
    dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
        org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q 'boolean true'
}
no_secrets_owner() { ! has_secrets_owner; }
ss_busctl() { busctl --user "$@" 2>/dev/null; }
default_collection() { # object path of the "default" alias, empty if none
    ss_busctl call org.freedesktop.secrets /org/freedesktop/secrets org.freedesktop.Secret.Service \
        ReadAlias s default | sed -n 's/^o "\(.*\)"$/\1/p' | grep -v '^/$'
}
locked_of() { # locked_of PATH: prints true/false (the collection's Locked property)
    ss_busctl get-property org.freedesktop.secrets "$1" org.freedesktop.Secret.Collection Locked | sed 's/^b //'
}
has_default_collection() { [ -n "$(default_collection)" ]; }
default_unlocked() { local p; p=$(default_collection) && [ -n "$p" ] && [ "$(locked_of "$p")" = false ]; }

# ---------------------------------------------------------------------------------------------
# KeePassXC: a database whose root group is exposed over the Secret Service, opened with
# --pw-stdin, headless (QT_QPA_PLATFORM=offscreen). Its collection is named after the file.
start_keepassxc() {
    local pw db="$XDG_DATA_HOME/secrets.kdbx" conf="$XDG_CONFIG_HOME/keepassxc/keepassxc.ini"
    pw=$(head -c 18 /dev/urandom | od -An -v -tx1 | tr -d ' \n')
    (umask 077 && printf '%s' "$pw" >"$W/password")
    printf '%s' "$db" >"$W/keepassxc.db"

    # The exposed group is stored in the database's custom data, FDO_SECRETS_EXPOSED_GROUP =
    # "{uuid of the group}" (KeePassXC src/fdosecrets/FdoSecretsSettings.cpp); keepassxc-cli cannot
    # set it, so: create, export to XML, add it (and switch the recycle bin off, so that a Delete
    # deletes instead of moving the item to a "Recycle Bin" group that is still exposed), import.
    printf '%s\n%s\n' "$pw" "$pw" | keepassxc-cli db-create -q -p -t 100 "$W/base.kdbx" >>"$log" 2>&1 \
        || fail "keepassxc-cli db-create failed"
    keepassxc-cli export -q -f xml "$W/base.kdbx" <"$W/password" >"$W/base.xml" 2>>"$log" \
        || fail "keepassxc-cli export failed"
    python3 - "$W/base.xml" "$W/exposed.xml" <<'EOF' || fail "editing the exported XML failed"
import base64, sys, uuid, xml.etree.ElementTree as ET
tree = ET.parse(sys.argv[1]); root = tree.getroot(); meta = root.find('Meta')
group = uuid.UUID(bytes=base64.b64decode(root.find('./Root/Group/UUID').text))
custom = meta.find('CustomData')
if custom is None:
    custom = ET.SubElement(meta, 'CustomData')
item = ET.SubElement(custom, 'Item')
ET.SubElement(item, 'Key').text = 'FDO_SECRETS_EXPOSED_GROUP'
ET.SubElement(item, 'Value').text = '{%s}' % group
meta.find('RecycleBinEnabled').text = 'False'
tree.write(sys.argv[2], encoding='UTF-8', xml_declaration=True)
EOF
    printf '%s\n%s\n' "$pw" "$pw" | keepassxc-cli import -q -p -t 100 "$W/exposed.xml" "$db" >>"$log" 2>&1 \
        || fail "keepassxc-cli import failed"
    rm -f "$W/base.kdbx" "$W/base.xml" "$W/exposed.xml"

    # Configuration ([FdoSecrets] keys as in KeePassXC 2.7.4 src/core/Config.cpp), passed with
    # --config so that no other configuration is read.
    mkdir -p "$(dirname "$conf")"
    {
        printf '[General]\nConfigVersion=2\nSingleInstance=false\nRememberLastDatabases=false\n'
        # Not KeePassXC's default: with "save after every change", KeePassXC 2.7.4 crashes
        # (segmentation fault in its background save thread) when a client stores, reads and
        # deletes many items in quick succession (the conformance suite's concurrent tasks).
        printf 'OpenPreviousDatabasesOnStartup=false\nAutoSaveAfterEveryChange=false\n'
        printf '[GUI]\nCheckForUpdates=false\nShowTrayIcon=false\n'
        printf '[Security]\nLockDatabaseIdle=false\nClearClipboard=false\n'
        printf '[Browser]\nEnabled=false\n[SSHAgent]\nEnabled=false\n'
        printf '[FdoSecrets]\nEnabled=true\n'
        if [ "${WITH_PROVIDER_KEEPASSXC_DEFAULTS:-0}" != 1 ]; then
            # Headless: no dialog can be answered, so no access confirmation, no delete
            # confirmation, no unlock dialog when a client searches a locked database.
            printf 'ShowNotification=false\nConfirmDeleteItem=false\nConfirmAccessItem=false\nUnlockBeforeSearch=false\n'
        fi
    } >"$conf"

    QT_QPA_PLATFORM=offscreen keepassxc --config "$conf" --pw-stdin "$db" <"$W/password" >>"$log" 2>&1 &
    prov_pid=$!
    wait_for "$step_timeout" has_secrets_owner || fail "keepassxc did not take org.freedesktop.secrets"
    wait_for "$step_timeout" default_unlocked || fail "keepassxc: the database did not get unlocked"
}

# ---------------------------------------------------------------------------------------------
# KWallet (kwalletd5 >= 5.97 implements org.freedesktop.secrets; on by default:
# kwalletrc [org.freedesktop.secrets] apiEnabled=true). Started the way pam_kwallet5 starts it at
# login, so that the wallet opens without a dialog.
kwallet_wallet=kdewallet
kwallet_state=${WITH_PROVIDER_KWALLET_STATE:-unlocked}
case "$kwallet_state" in
    unlocked|login-locked|first-login) ;;
    *) echo "$me: WITH_PROVIDER_KWALLET_STATE is unlocked, login-locked or first-login" >&2; exit 2 ;;
esac

start_kwalletd_once() { # one "login": the launcher starts kwalletd5 and stays its parent
    rm -f "$W/kwalletd.pid"
    QT_QPA_PLATFORM=offscreen python3 "$here/kwallet-login.py" "$W/kwallet.hash" "$log" "$W/kwalletd.pid" &
    launcher_pid=$!
    wait_for "$step_timeout" test -s "$W/kwalletd.pid" || fail "the kwalletd5 launcher failed"
    prov_pid=$(cat "$W/kwalletd.pid")
    wait_for "$step_timeout" has_secrets_owner || fail "kwalletd5 did not take org.freedesktop.secrets"
}

kwallet_fdo_unlock() {
    # What a libsecret client does when it finds the collection locked: Service.Unlock, then
    # Prompt.Prompt on the prompt it returns. With the wallet open (by the PAM-style login) and
    # "Prompt on Open=false", kwalletd5 completes the prompt without a dialog.
    local coll=$1 out p
    out=$(ss_busctl call org.freedesktop.secrets /org/freedesktop/secrets org.freedesktop.Secret.Service \
        Unlock ao 1 "$coll")
    p=$(printf '%s' "$out" | grep -o '"/org/freedesktop/secrets/prompt/[^"]*"' | tr -d '"')
    [ -n "$p" ] && ss_busctl call org.freedesktop.secrets "$p" org.freedesktop.Secret.Prompt Prompt s "" >/dev/null
    wait_for "$step_timeout" default_unlocked
}

start_kwallet() {
    cat >"$XDG_CONFIG_HOME/kwalletrc" <<EOF
[Wallet]
Enabled=true
First Use=false
Default Wallet=$kwallet_wallet
Close When Idle=false
Prompt on Open=false
Leave Open=true
EOF
    # pam_kwallet5 hands kwalletd5 a 56-byte key derived from the login password; any 56 bytes do.
    (umask 077 && head -c 56 /dev/urandom | od -An -v -tx1 | tr -d ' \n' >"$W/kwallet.hash")
    printf '%s' "$kwallet_wallet" >"$W/kwallet.wallet"


    # First login: kwalletd5 creates the wallet, but exposes no collection until it restarts.
    local wallet_file="$XDG_DATA_HOME/kwalletd/$kwallet_wallet.kwl"
    start_kwalletd_once
    wait_for "$step_timeout" test -s "$wallet_file" || fail "kwalletd5 did not create $wallet_file"
    [ "$kwallet_state" = first-login ] && return 0
    stop_provider
    wait_for "$step_timeout" no_secrets_owner || fail "kwalletd5 did not release org.freedesktop.secrets"

    # Every later login: the wallet is open, the collection exists but reports Locked=true until
    # a client runs Unlock + Prompt.
    start_kwalletd_once
    local coll=/org/freedesktop/secrets/collection/$kwallet_wallet
    wait_for "$step_timeout" has_default_collection || fail "kwalletd5 exposes no default collection"
    [ "$kwallet_state" = login-locked ] && return 0
    kwallet_fdo_unlock "$coll" || fail "kwalletd5: the collection is still locked after Unlock + Prompt"
}

# ---------------------------------------------------------------------------------------------
# gnome-keyring, as the project's scripts/with-keyring.sh starts it: --unlock reads the password
# on stdin and creates (or unlocks) the "login" collection (the "default" alias).
start_gnome_keyring() {
    (umask 077 && head -c 18 /dev/urandom | od -An -v -tx1 | tr -d ' \n' >"$W/password")
    gnome-keyring-daemon --foreground --unlock --components=secrets <"$W/password" >>"$log" 2>&1 &
    prov_pid=$!
    wait_for "$step_timeout" has_secrets_owner || fail "gnome-keyring-daemon did not take org.freedesktop.secrets"
    wait_for "$step_timeout" default_unlocked || fail "gnome-keyring: the login collection is not unlocked"
}

case "$provider" in
    keepassxc) start_keepassxc ;;
    kwallet) start_kwallet ;;
    gnome-keyring) start_gnome_keyring ;;
esac

WITH_PROVIDER_COLLECTION=$(default_collection)
export WITH_PROVIDER_BUS="$DBUS_SESSION_BUS_ADDRESS" WITH_PROVIDER_NAME="$provider" WITH_PROVIDER_DIR="$W" WITH_PROVIDER_PID="$prov_pid" \
    WITH_PROVIDER_BUS_PID="$bus_pid" WITH_PROVIDER_COLLECTION \
    WITH_PROVIDER_LOCK="$here/provider-lock.sh" WITH_PROVIDER_UNLOCK="$here/provider-unlock.sh"

# CMD runs in the foreground (same stdin, same process group, so Ctrl-C reaches it).
rc=0
"$@" || rc=$?
exit "$rc"
