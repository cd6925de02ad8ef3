#!/usr/bin/env bash
# Runs a command the way Flatpak runs an app, with the real XDG Secret portal behind it:
#
#   scripts/sandbox/flatpak-sandbox.sh [OPTIONS] [--] COMMAND [ARG...]
#   scripts/sandbox/flatpak-sandbox.sh --probe
#
# On the session bus given (--bus, else $DBUS_SESSION_BUS_ADDRESS), which must already have
# gnome-keyring's Secret Service (scripts/with-keyring.sh; use its --no-activation option so
# that nothing else can be D-Bus-activated there), it:
#   1. starts xdg-desktop-portal (Debian 12: 1.16) with XDG_DESKTOP_PORTAL_DIR holding only a
#      copy of gnome-keyring.portal, so the Secret portal is the only backend it can find, and
#      waits until it owns org.freedesktop.portal.Desktop;
#   2. starts xdg-dbus-proxy with Flatpak's filter for an app without bus permissions (it may own
#      APPID.* and call and receive the broadcasts of org.freedesktop.portal.*, nothing else),
#      inside a bwrap of its own that shows the same /.flatpak-info as the app: the portal
#      finds the caller's app id in /proc/PID/root/.flatpak-info, and through a proxy PID is
#      the proxy's, which is why Flatpak runs its proxy this way;
#   3. runs COMMAND in bwrap as Flatpak runs an app: new namespaces (no network, so no abstract
#      socket of the host either), the host's /usr and /etc read-only, fresh /tmp and /run,
#      /.flatpak-info, only ~/.var/app/APPID of the home directory (read-write), the proxy's
#      socket as /run/flatpak/bus, and Flatpak's environment (HOME, XDG_DATA_HOME=
#      ~/.var/app/APPID/data and the other XDG dirs, FLATPAK_ID, container=flatpak).
# Only /.flatpak-info is made up; the portal, gnome-keyring, the proxy and bwrap are the real
# programs. On exit (also INT/TERM/HUP) it stops what it started, by PID, and removes its temp dir.
#
# Options:
#   --app-id ID          the Flatpak app id (default org.example.App)
#   --home DIR           the host directory that plays the user's home: the app's own data is
#                        DIR/.var/app/ID (created if missing), so runs given the same DIR and ID
#                        share their data, as two runs of an installed app do. Default: a temp
#                        directory removed afterwards.
#   --expose PATH        also make host PATH visible, read-only, at the same path (repeatable).
#                        COMMAND's own directory and the directories of its shared libraries
#                        outside /usr (ldd), e.g. a Swift build directory and /opt/swift, are
#                        exposed without it.
#   --env NAME=VALUE     set NAME inside (repeatable); the sandbox starts with an empty
#                        environment besides Flatpak's variables, as the app's would.
#   --bus ADDRESS        the session bus (default $DBUS_SESSION_BUS_ADDRESS)
#   --timeout SECONDS    deadline of each start-up step (default 10)
#   --command-timeout S  deadline of COMMAND (default 300; then it is killed, status 124)
#   --keep-logs DIR      copy the portal's and the proxy's logs to DIR at exit
#   --backend-delay MS   put delayed-secret-backend.py between the portal and gnome-keyring: each
#                        answer is held back MS milliseconds (default 0: no relay). For libsecret
#                        (secret-tool), which can miss a quick answer (see that script); never
#                        for this project's own client, which must hear a quick one.
#   --probe              only check that bwrap can create the namespaces needed: 0 or 77
# Environment: FLATPAK_SANDBOX_VERBOSE=1 logs the sandbox's bus traffic (the proxy's --log, as
# flatpak run --log-session-bus) and prints it and the portal's log at exit.
#
# Exit status: COMMAND's. Before COMMAND runs, the harness exits with
#   2  usage;  3  a program is missing (scripts/install-deps.sh sandbox);
#   4  the set-up failed: no Secret Service on the bus, the portal or the proxy did not come up
#      (their logs are printed on stderr);
#   77 bwrap cannot create namespaces on this machine (the reason is printed): tests skip.
# Every message of the harness itself starts with "flatpak-sandbox:".
# Needs the Debian packages in scripts/deps/sandbox.txt.
set -uo pipefail

me=flatpak-sandbox
portal_bin=/usr/libexec/xdg-desktop-portal
portal_file=/usr/share/xdg-desktop-portal/portals/gnome-keyring.portal
app_id=org.example.App
home_dir=""
bus=${DBUS_SESSION_BUS_ADDRESS:-}
timeout=10
command_timeout=300
keep_logs=""
backend_delay=0
probe_only=no
exposes=()
envs=()

usage() {
    echo "usage: $0 [--app-id ID] [--home DIR] [--expose PATH]... [--env NAME=VALUE]... [--bus ADDRESS]" \
        "[--timeout S] [--command-timeout S] [--keep-logs DIR] [--] COMMAND [ARG...] | --probe" >&2
    exit 2
}
fail() { echo "$me: $*" >&2; exit 4; }

while (($#)); do
    case "$1" in
        --app-id) [ $# -ge 2 ] || usage; app_id=$2; shift 2 ;;
        --home) [ $# -ge 2 ] || usage; home_dir=$2; shift 2 ;;
        --expose) [ $# -ge 2 ] || usage; exposes+=("$2"); shift 2 ;;
        --env) [ $# -ge 2 ] || usage; case "$2" in *=*) envs+=("$2") ;; *) usage ;; esac; shift 2 ;;
        --bus) [ $# -ge 2 ] || usage; bus=$2; shift 2 ;;
        --timeout) [ $# -ge 2 ] || usage; timeout=$2; shift 2 ;;
        --command-timeout) [ $# -ge 2 ] || usage; command_timeout=$2; shift 2 ;;
        --keep-logs) [ $# -ge 2 ] || usage; keep_logs=$2; shift 2 ;;
        --backend-delay) [ $# -ge 2 ] || usage; backend_delay=$2; shift 2 ;;
        --probe) probe_only=yes; shift ;;
        --) shift; break ;;
        -*) usage ;;
        *) break ;;
    esac
done
[ "$probe_only" = yes ] || [ $# -ge 1 ] || usage
# The portal's own rule for app ids (xdp_is_valid_app_id): dot-separated elements of
# [A-Za-z0-9_-], at least two, none starting with a digit. It would answer an invalid one as a
# host app, never as this sandbox.
[[ "$app_id" =~ ^[A-Za-z_-][A-Za-z0-9_-]*(\.[A-Za-z_-][A-Za-z0-9_-]*)+$ ]] && [ ${#app_id} -le 255 ] \
    || { echo "$me: not a valid app id: $app_id" >&2; exit 2; }
[[ "$timeout" =~ ^[0-9]+$ && "$command_timeout" =~ ^[0-9]+$ && "$backend_delay" =~ ^[0-9]{1,5}$ ]] || usage

need() { # need PROGRAM PACKAGE
    command -v "$1" >/dev/null 2>&1 || [ -x "$1" ] \
        || { echo "$me: $1 is missing (scripts/install-deps.sh sandbox installs $2)" >&2; exit 3; }
}
need bwrap bubblewrap

# Flatpak gives an app new user, mount, PID, IPC, network, UTS and cgroup namespaces; as root
# bwrap can do without the user namespace (--unshare-all asks for it only if it can have it).
# A container without CAP_SYS_ADMIN and without unprivileged user namespaces cannot do this.
if ! probe_err=$(bwrap --unshare-all --die-with-parent --ro-bind / / --proc /proc --dev /dev true 2>&1); then
    echo "$me: bwrap cannot create the namespaces a Flatpak sandbox needs here: ${probe_err:-no reason given}" >&2
    exit 77
fi
[ "$probe_only" = yes ] && exit 0

need dbus-send dbus-bin
need xdg-dbus-proxy xdg-dbus-proxy
need timeout coreutils
need "$portal_bin" xdg-desktop-portal
[ -r "$portal_file" ] || { echo "$me: $portal_file is missing (gnome-keyring)" >&2; exit 3; }
[ -n "$bus" ] || fail "no session bus: give --bus or set DBUS_SESSION_BUS_ADDRESS (scripts/with-keyring.sh)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/flatpak-sandbox.XXXXXX") || fail "cannot create a temp dir"
chmod 700 "$tmp"
portal_pid=""
proxy_pid=""
relay_pid=""
app_pid=""

# shellcheck disable=SC2317  # called through trap
stop_pid() { # stop_pid PID [SIGNAL]: SIGNAL (default TERM), then KILL after 3 s; reaps it
    [ -n "$1" ] || return 0
    kill "-${2:-TERM}" "$1" 2>/dev/null
    for _ in $(seq 30); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$1" 2>/dev/null
    wait "$1" 2>/dev/null
}
# shellcheck disable=SC2317  # called through trap
cleanup() {
    local rc=$?
    trap - EXIT INT TERM HUP
    # The app's bwrap ends with its monitor (--die-with-parent), which timeout's TERM ends.
    stop_pid "$app_pid"
    # Closing the read end of the proxy's sync pipe makes xdg-dbus-proxy exit by itself (its
    # --fd): it gets 3 s for that before TERM and KILL.
    exec 6<&-
    if [ -n "$proxy_pid" ]; then
        for _ in $(seq 30); do kill -0 "$proxy_pid" 2>/dev/null || break; sleep 0.1; done
        stop_pid "$proxy_pid"
    fi
    stop_pid "$portal_pid"
    stop_pid "$relay_pid"
    if [ -n "$keep_logs" ]; then mkdir -p "$keep_logs" && cp "$tmp"/*.log "$keep_logs"/ 2>/dev/null; fi
    if [ -n "${FLATPAK_SANDBOX_VERBOSE:-}" ]; then
        for log in "$tmp"/*.log; do [ -s "$log" ] && { echo "== $log" >&2; cat "$log" >&2; }; done
    fi
    rm -rf "$tmp"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

show_log() { echo "$me: $1:" >&2; tail -n 30 "$2" >&2 2>/dev/null; }

has_owner() { # has_owner NAME: NameHasOwner never activates anything
    dbus-send --bus="$bus" --print-reply --reply-timeout=2000 --dest=org.freedesktop.DBus \
        /org/freedesktop/DBus org.freedesktop.DBus.NameHasOwner "string:$1" 2>/dev/null | grep -q 'boolean true'
}
wait_until() { # wait_until DESCRIPTION COMMAND...: up to $timeout seconds
    local what=$1 deadline=$((SECONDS + timeout))
    shift
    until "$@"; do
        ((SECONDS < deadline)) || { echo "$me: timed out after ${timeout}s waiting for $what" >&2; return 1; }
        sleep 0.1
    done
}

has_owner org.freedesktop.secrets || fail "nothing owns org.freedesktop.secrets on $bus (start gnome-keyring: scripts/with-keyring.sh)"
# On a bus that can activate services the portal starts the permission store and the document
# portal: it works, but they outlive this run. scripts/with-keyring.sh --no-activation avoids it.
if dbus-send --bus="$bus" --print-reply --reply-timeout=2000 --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.ListActivatableNames 2>/dev/null | grep -q 'org.freedesktop.impl.portal.PermissionStore'; then
    echo "$me: warning: this bus can D-Bus-activate the portal's permission store and document portal" \
        "(scripts/with-keyring.sh --no-activation gives a bus that cannot)" >&2
fi

# ---- 1. the portal frontend, with gnome-keyring's Secret backend only ----
# A previous run's portal releases the name when it exits; another one would serve our calls
# with portals that are not ours.
name_free() { ! has_owner org.freedesktop.portal.Desktop; }
wait_until "org.freedesktop.portal.Desktop to be free on the bus (another portal runs there)" name_free || exit 4
mkdir -m 700 "$tmp/portals" "$tmp/portal-home"
cp "$portal_file" "$tmp/portals/"
if [ "$backend_delay" -gt 0 ]; then
    # The portal then finds the relay as its Secret backend; the relay forwards to gnome-keyring.
    need /usr/bin/python3 python3-gi
    relay_name=org.example.DelayedSecretBackend.p$$
    mkfifo "$tmp/relay-ready"
    DBUS_SESSION_BUS_ADDRESS="$bus" /usr/bin/python3 "$(dirname "$0")/delayed-secret-backend.py" \
        "$relay_name" "$backend_delay" </dev/null >"$tmp/relay-ready" 2>"$tmp/relay.log" &
    relay_pid=$!
    exec 8<"$tmp/relay-ready"
    if ! IFS= read -r -t "$timeout" -u 8 relay_said || [ "$relay_said" != ready ]; then
        show_log "delayed-secret-backend.py did not take $relay_name within ${timeout}s" "$tmp/relay.log"
        exit 4
    fi
    exec 8<&-
    sed -i "s/^DBusName=.*/DBusName=$relay_name/" "$tmp/portals/gnome-keyring.portal"
fi
# gnome-keyring.portal says UseIn=gnome: XDG_CURRENT_DESKTOP=GNOME makes 1.16 choose it as on a
# GNOME desktop rather than by its fallback. No display: nothing can open a dialog. The XDG dirs
# keep whatever it writes in the temp dir; GSETTINGS_BACKEND and GIO_USE_VFS keep GLib from
# starting dconf or gvfs.
env -i PATH=/usr/bin:/bin DBUS_SESSION_BUS_ADDRESS="$bus" \
    XDG_DESKTOP_PORTAL_DIR="$tmp/portals" XDG_CURRENT_DESKTOP=GNOME \
    HOME="$tmp/portal-home" XDG_RUNTIME_DIR="$tmp/portal-home" XDG_DATA_HOME="$tmp/portal-home/data" \
    XDG_CONFIG_HOME="$tmp/portal-home/config" XDG_CACHE_HOME="$tmp/portal-home/cache" \
    GSETTINGS_BACKEND=memory GIO_USE_VFS=local \
    "$portal_bin" --verbose </dev/null >"$tmp/portal.log" 2>&1 &
portal_pid=$!
portal_up() {
    kill -0 "$portal_pid" 2>/dev/null || return 2
    has_owner org.freedesktop.portal.Desktop
}
wait_until "xdg-desktop-portal to own org.freedesktop.portal.Desktop" portal_up \
    || { show_log "xdg-desktop-portal's log" "$tmp/portal.log"; exit 4; }
# The owner could still be another portal that took the name first.
owner_pid=$(dbus-send --bus="$bus" --print-reply --reply-timeout=2000 --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.portal.Desktop 2>/dev/null \
    | awk '/uint32/ {print $2}')
[ "$owner_pid" = "$portal_pid" ] || fail "org.freedesktop.portal.Desktop is owned by PID ${owner_pid:-?}, not by our portal ($portal_pid)"
grep -q 'providing portal org.freedesktop.portal.Secret' "$tmp/portal.log" \
    || { show_log "xdg-desktop-portal does not provide the Secret portal" "$tmp/portal.log"; exit 4; }

# ---- the app's files: /.flatpak-info and ~/.var/app/APPID ----
if [ -z "$home_dir" ]; then
    home_dir="$tmp/home"
fi
mkdir -p "$home_dir" || fail "cannot create $home_dir"
home_dir=$(cd "$home_dir" && pwd -P)
app_dir="$home_dir/.var/app/$app_id"
mkdir -p "$app_dir/data" "$app_dir/config" "$app_dir/cache" "$app_dir/.local/state" \
    || fail "cannot create $app_dir"
# xdg-desktop-portal 1.16 reads one key from it for the Secret portal: [Application] name, the
# app id ([Runtime] name would make it a runtime). [Instance] holds two more of the keys flatpak
# writes, for facts this sandbox has: an instance id, a filtered session bus.
instance_id=$((RANDOM * 32768 + RANDOM))
printf '[Application]\nname=%s\n\n[Instance]\ninstance-id=%s\nsession-bus-proxy=true\n' \
    "$app_id" "$instance_id" >"$tmp/flatpak-info"

# ---- 2. the bus proxy, in a bwrap that shows the same /.flatpak-info ----
# As flatpak's add_bwrap_wrapper: the host's top-level directories (tmp, var and run
# read-write, so that the bus socket is reachable), symlinks kept, and /.flatpak-info as a file.
proxy_root_args=()
for entry in /*; do
    name=${entry#/}
    [ "$name" = .flatpak-info ] && continue
    if [ -L "$entry" ]; then
        proxy_root_args+=(--symlink "$(readlink "$entry")" "$entry")
    elif [ -d "$entry" ]; then
        case "$name" in
            tmp | var | run) proxy_root_args+=(--bind "$entry" "$entry") ;;
            *) proxy_root_args+=(--ro-bind "$entry" "$entry") ;;
        esac
    fi
done
mkdir -m 700 "$tmp/proxy"
mkfifo "$tmp/proxy-sync"
# Flatpak's filter for an app with no session-bus permission in its manifest: it may own its
# own names and call and hear org.freedesktop.portal.*; org.freedesktop.secrets stays hidden.
# --fd: the proxy writes one byte there once it listens, and exits when the reader goes away.
bwrap "${proxy_root_args[@]}" --bind "$tmp/proxy" "$tmp/proxy" --die-with-parent \
    --perms 0600 --file 3 /.flatpak-info -- \
    xdg-dbus-proxy --fd=4 "$bus" "$tmp/proxy/bus" --filter \
    "--own=$app_id.*" "--own=org.mpris.MediaPlayer2.$app_id.*" \
    '--call=org.freedesktop.portal.*=*' '--broadcast=org.freedesktop.portal.*=@/org/freedesktop/portal/*' \
    ${FLATPAK_SANDBOX_VERBOSE:+--log} \
    3<"$tmp/flatpak-info" 4>"$tmp/proxy-sync" </dev/null >"$tmp/proxy.log" 2>&1 &
proxy_pid=$!
# Opening the FIFO waits for the writer, which the background job opens at once.
exec 6<"$tmp/proxy-sync"
if ! IFS= read -r -t "$timeout" -n 1 -u 6 _; then
    show_log "xdg-dbus-proxy did not start listening within ${timeout}s" "$tmp/proxy.log"
    exit 4
fi
[ -S "$tmp/proxy/bus" ] || { show_log "xdg-dbus-proxy has no socket" "$tmp/proxy.log"; exit 4; }

# ---- 3. the app ----
uid=$(id -u)
app_args=(--unshare-all --die-with-parent
    --ro-bind /usr /usr --ro-bind /etc /etc)
# Debian 12 has merged /usr: /bin, /lib... are symlinks into it, as in a Flatpak runtime.
for top in /bin /sbin /lib /lib32 /lib64 /libx32; do
    if [ -L "$top" ]; then app_args+=(--symlink "$(readlink "$top")" "$top")
    elif [ -d "$top" ]; then app_args+=(--ro-bind "$top" "$top"); fi
done
app_args+=(--proc /proc --dev /dev --tmpfs /tmp --tmpfs /run --tmpfs /var
    --dir "/run/user/$uid" --chmod 0700 "/run/user/$uid"
    --ro-bind "$tmp/proxy/bus" /run/flatpak/bus --symlink /run/flatpak/bus "/run/user/$uid/bus"
    --ro-bind-data 5 /.flatpak-info)

# COMMAND's directory and its libraries' directories outside the read-only /usr: a Swift build
# directory, the Swift toolchain's runtime (/opt/swift/...). Never one that holds the outer
# bus's socket: the app would reach org.freedesktop.secrets past the proxy.
outer_socket=""
case "$bus" in unix:path=*) outer_socket=${bus#unix:path=}; outer_socket=${outer_socket%%,*} ;; esac
expose_dirs=()
add_expose() { # add_expose PATH: once, unless /usr already shows it
    local path d
    path=$(readlink -f "$1") || return 0
    case "$path" in /usr/* | /etc/*) return 0 ;; esac
    if [ -n "$outer_socket" ] && { [ "$path" = / ] || [[ "$outer_socket/" == "$path"/* ]]; }; then
        fail "will not expose $path: it holds the outer bus socket $outer_socket (move the program or the bus)"
    fi
    for d in "${expose_dirs[@]}"; do [ "$d" = "$path" ] && return 0; done
    expose_dirs+=("$path")
}
for path in "${exposes[@]}"; do
    [ -e "$path" ] || fail "--expose $path: no such file or directory"
    add_expose "$path"
done
program=$1
if [[ "$program" == */* ]]; then
    # Inside, the working directory is the app's home: a relative path would not resolve.
    [ -e "$program" ] || fail "$program: no such file"
    program=$(readlink -f "$program")
    set -- "$program" "${@:2}"
else
    program=$(command -v "$program" || true)
fi
if [ -n "$program" ] && [ -f "$program" ]; then
    add_expose "$(dirname "$program")"
    while read -r lib; do
        add_expose "$(dirname "$lib")"
    done < <(ldd "$program" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3}')
fi
for path in "${expose_dirs[@]}"; do app_args+=(--ro-bind "$path" "$path"); done
# After the exposed paths, so that none of them covers the app's own directory.
app_args+=(--dir "$home_dir" --bind "$app_dir" "$app_dir")

app_env=(--clearenv
    --setenv PATH /app/bin:/usr/bin:/bin
    --setenv HOME "$home_dir"
    --setenv XDG_DATA_HOME "$app_dir/data" --setenv XDG_CONFIG_HOME "$app_dir/config"
    --setenv XDG_CACHE_HOME "$app_dir/cache" --setenv XDG_STATE_HOME "$app_dir/.local/state"
    --setenv XDG_RUNTIME_DIR "/run/user/$uid"
    --setenv DBUS_SESSION_BUS_ADDRESS unix:path=/run/flatpak/bus
    --setenv FLATPAK_ID "$app_id" --setenv container flatpak
    --setenv LANG C.UTF-8)
for kv in "${envs[@]}"; do app_env+=(--setenv "${kv%%=*}" "${kv#*=}"); done

# In the background, so that a signal reaches this shell (and its cleanup) while it waits; a
# background job's stdin would be /dev/null, so COMMAND gets ours explicitly (secret-tool store
# reads the secret there).
exec 7<&0
timeout -k 5 "$command_timeout" \
    bwrap "${app_args[@]}" "${app_env[@]}" --chdir "$home_dir" -- "$@" 5<"$tmp/flatpak-info" 0<&7 7<&- &
app_pid=$!
wait "$app_pid"
rc=$?
app_pid=""
[ "$rc" -ne 124 ] || echo "$me: the command did not end within ${command_timeout}s" >&2
exit "$rc"
