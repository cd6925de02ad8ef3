#!/usr/bin/env bash
# cluster.sh - a private, throwaway PostgreSQL cluster for tests (Debian's postgresql-15).
#
#   eval "$(pg-test-cluster.sh start)"              # unix socket only, trust auth
#   eval "$(pg-test-cluster.sh start --tcp)"        # + 127.0.0.1 on a free port
#   eval "$(pg-test-cluster.sh start --tls)"        # TLS (own CA, verify-full) + scram-sha-256, TCP only
#   eval "$(pg-test-cluster.sh start --replica)"    # + a streaming replica (pg_basebackup), for failover tests
#   pg-test-cluster.sh stop [DIR]                   # DIR defaults to $PGTEST_DIR; stops and deletes it
#   pg-test-cluster.sh kill-primary [DIR]           # failover drill: crash-stop the primary ...
#   pg-test-cluster.sh promote [DIR]                # ... and promote the replica
#
# stdout of `start` is only `export NAME='value'` lines (PGHOST, PGPORT, PGUSER, PGDATABASE,
# PGTEST_DIR, PGTEST_CONNINFO, ... ); they are also written to $PGTEST_DIR/env. Logs go to stderr.
# As root (CI), the server runs as the user $PGTEST_OS_USER (default: Debian's `postgres`, else a
# system user `pgtest` is created), because postgres refuses to run as root. As any other user it
# runs as that user. Data lives in a mktemp -d directory under ${TMPDIR:-/tmp}.
# Durability is switched off (fsync, synchronous_commit, full_page_writes): tests only.
set -euo pipefail

log() { printf 'pg-test-cluster: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
is_root() { [[ $(id -u) -eq 0 ]]; }

find_bin() {
    if [[ -n "${PGBIN:-}" ]]; then echo "$PGBIN"; return; fi
    local d
    d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    [[ -n "$d" && -x "$d/initdb" ]] || d=$(dirname "$(command -v initdb 2>/dev/null || echo /nonexistent/initdb)")
    echo "$d"
}

ensure_installed() {
    local explicit=${PGBIN:-}
    PGBIN=$(find_bin)
    if [[ ! -x "$PGBIN/initdb" ]]; then
        [[ -z "$explicit" ]] || die "no initdb in PGBIN=$explicit"
        is_root || die "PostgreSQL server binaries not found; install postgresql-15 (or set PGBIN)"
        # --no-upgrade: install what is missing, never upgrade what is there (a plain
        # `apt-get install postgresql-15` upgrades an installed 15.x and pulls a newer libssl3)
        log "installing postgresql-15 (apt-get)"
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-upgrade postgresql-15 libpq-dev openssl; } >&2
        PGBIN=$(find_bin)
        [[ -x "$PGBIN/initdb" ]] || die "initdb still not found after install"
    fi
}

# Run a command as the server's OS user (postgres refuses root).
as_srv() {
    if is_root; then
        setpriv --reuid="$SRV_UID" --regid="$SRV_GID" --init-groups -- env HOME="$PGTEST_DIR" "$@"
    else
        "$@"
    fi
}

pick_os_user() {
    if [[ $(id -u) -ne 0 ]]; then SRV_UID=$(id -u); SRV_GID=$(id -g); return; fi
    local u=${PGTEST_OS_USER:-}
    if [[ -z "$u" ]]; then
        if id postgres >/dev/null 2>&1; then u=postgres; else u=pgtest; fi
    fi
    if ! id "$u" >/dev/null 2>&1; then
        useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$u" >&2
    fi
    SRV_UID=$(id -u "$u"); SRV_GID=$(id -g "$u")
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
pick_port() {
    local p i
    for i in $(seq 1 50); do
        p=$(( 20000 + (RANDOM * 32768 + RANDOM) % 40000 ))
        if port_free "$p" && [[ ! -e "$PGTEST_DIR/.s.PGSQL.$p" ]]; then echo "$p"; return; fi
    done
    die "no free port found"
}

make_certs() {
    local t="$PGTEST_DIR/tls"
    mkdir -p "$t"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3 \
        -subj "/CN=pg-test-ca" -keyout "$t/ca.key" -out "$t/ca.crt" 2>/dev/null
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -subj "/CN=localhost" -keyout "$t/server.key" -out "$t/server.csr" 2>/dev/null
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' > "$t/ext.cnf"
    openssl x509 -req -in "$t/server.csr" -CA "$t/ca.crt" -CAkey "$t/ca.key" -CAcreateserial \
        -days 3 -extfile "$t/ext.cnf" -out "$t/server.crt" 2>/dev/null
    rm -f "$t/ca.key" "$t/server.csr" "$t/ext.cnf" "$t/ca.srl"
    chmod 0600 "$t/server.key"
    if is_root; then chown "$SRV_UID:$SRV_GID" "$t/server.key" "$t/server.crt"; fi
    chmod 0644 "$t/ca.crt"
}

write_conf() { # $1 = data dir, $2 = port
    cat >> "$1/postgresql.conf" <<EOF

# --- pg-test-cluster.sh ---
port = $2
unix_socket_directories = '$PGTEST_DIR'
listen_addresses = '$LISTEN'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
shared_buffers = 32MB
max_wal_senders = 5
wal_keep_size = 64MB
log_min_messages = warning
log_connections = off
EOF
    if [[ $TLS -eq 1 ]]; then
        cat >> "$1/postgresql.conf" <<EOF
ssl = on
ssl_cert_file = '$PGTEST_DIR/tls/server.crt'
ssl_key_file = '$PGTEST_DIR/tls/server.key'
ssl_min_protocol_version = 'TLSv1.3'
password_encryption = 'scram-sha-256'
EOF
        cat > "$1/pg_hba.conf" <<EOF
local     all          all                 scram-sha-256
local     replication  all                 scram-sha-256
hostssl   all          all   127.0.0.1/32  scram-sha-256
hostssl   replication  all   127.0.0.1/32  scram-sha-256
hostnossl all          all   0.0.0.0/0     reject
EOF
    fi
}

start_server() { # $1 = data dir, $2 = log file
    as_srv "$PGBIN/pg_ctl" -D "$1" -l "$2" -w -t 60 -s start >&2 || {
        log "server failed to start; log:"; tail -n 30 "$2" >&2 || true; return 1; }
}

cmd_start() {
    TLS=0; TCP=0; REPLICA=0
    for a in "$@"; do
        case $a in
            --tls) TLS=1; TCP=1 ;;
            --tcp) TCP=1 ;;
            --replica) REPLICA=1 ;;
            *) die "unknown option $a" ;;
        esac
    done
    local t_start; t_start=$(date +%s%N)
    ensure_installed
    pick_os_user
    PGTEST_DIR=$(mktemp -d "${TMPDIR:-/tmp}/pgt.XXXXXX")
    touch "$PGTEST_DIR/.pg-test-cluster"
    # EXIT, not ERR: with set -e a failure inside a function exits without running an ERR trap.
    trap '[[ ${STARTED_OK:-0} == 1 ]] || { log "start failed, cleaning up"; cmd_stop "$PGTEST_DIR" >/dev/null 2>&1 || true; }' EXIT
    # The socket path (DIR/.s.PGSQL.PORT) must fit in sockaddr_un (107 bytes).
    (( ${#PGTEST_DIR} + 18 <= 107 )) || die "TMPDIR path too long for a unix socket: $PGTEST_DIR"
    if is_root; then
        chown "$SRV_UID:$SRV_GID" "$PGTEST_DIR"
        as_srv test -x "$PGTEST_DIR" || die "user $SRV_UID cannot reach $PGTEST_DIR (a parent dir is not world-searchable); set TMPDIR=/tmp"
    fi
    chmod 0755 "$PGTEST_DIR"   # the clients (root or you) need the socket; the data dir itself is 0700
    PORT=$(pick_port)
    if [[ $TCP -eq 1 ]]; then LISTEN=127.0.0.1; else LISTEN=''; fi

    local initargs=(-D "$PGTEST_DIR/data" -U postgres -E UTF8 --locale=C --no-sync --no-instructions)
    if [[ $TLS -eq 1 ]]; then
        make_certs
        PGTEST_PASSWORD=$(openssl rand -hex 18)
        printf '%s\n' "$PGTEST_PASSWORD" > "$PGTEST_DIR/pw"
        if is_root; then chown "$SRV_UID" "$PGTEST_DIR/pw"; fi
        chmod 0600 "$PGTEST_DIR/pw"
        initargs+=(--auth=scram-sha-256 --pwfile="$PGTEST_DIR/pw")
    else
        initargs+=(--auth=trust)
    fi
    as_srv "$PGBIN/initdb" "${initargs[@]}" >"$PGTEST_DIR/initdb.log" 2>&1 || {
        cat "$PGTEST_DIR/initdb.log" >&2; die "initdb failed"; }
    rm -f "$PGTEST_DIR/pw"
    local t_initdb; t_initdb=$(date +%s%N)
    write_conf "$PGTEST_DIR/data" "$PORT"
    start_server "$PGTEST_DIR/data" "$PGTEST_DIR/server.log"

    local envf="$PGTEST_DIR/env" conninfo
    {
        # clear libpq variables an earlier cluster's env may have left in the caller's shell
        echo "unset PGHOSTADDR PGPASSWORD PGPASSFILE PGSSLMODE PGSSLROOTCERT PGSSLCERT PGSSLKEY PGSERVICE PGOPTIONS PGTARGETSESSIONATTRS PGCHANNELBINDING PGTEST_PASSWORD PGTEST_TCP_CONNINFO PGTEST_REPLICA_PORT PGTEST_FAILOVER_CONNINFO"
        echo "export PGTEST_DIR='$PGTEST_DIR'"
        echo "export PGUSER='postgres'"
        echo "export PGDATABASE='postgres'"
        echo "export PGPORT='$PORT'"
        echo "export PGCONNECT_TIMEOUT='5'"
        if [[ $TLS -eq 1 ]]; then
            # pgpass belongs to the client user (libpq ignores a group/world-readable one).
            printf '*:*:*:postgres:%s\n' "$PGTEST_PASSWORD" > "$PGTEST_DIR/pgpass"
            chmod 0600 "$PGTEST_DIR/pgpass"
            echo "export PGHOST='localhost'"
            echo "export PGHOSTADDR='127.0.0.1'"
            echo "export PGSSLMODE='verify-full'"
            echo "export PGSSLROOTCERT='$PGTEST_DIR/tls/ca.crt'"
            echo "export PGPASSFILE='$PGTEST_DIR/pgpass'"
            echo "export PGTEST_PASSWORD='$PGTEST_PASSWORD'"
            conninfo="host=localhost hostaddr=127.0.0.1 port=$PORT user=postgres dbname=postgres sslmode=verify-full sslrootcert=$PGTEST_DIR/tls/ca.crt passfile=$PGTEST_DIR/pgpass connect_timeout=5"
        else
            echo "export PGHOST='$PGTEST_DIR'"
            conninfo="host=$PGTEST_DIR port=$PORT user=postgres dbname=postgres connect_timeout=5"
            if [[ $TCP -eq 1 ]]; then echo "export PGTEST_TCP_CONNINFO='host=127.0.0.1 port=$PORT user=postgres dbname=postgres connect_timeout=5'"; fi
        fi
        echo "export PGTEST_CONNINFO='$conninfo'"
    } > "$envf"
    chmod 0600 "$envf"

    if [[ $REPLICA -eq 1 ]]; then
        local rport; rport=$(pick_port)
        [[ $rport != "$PORT" ]] || rport=$(pick_port)
        local bbargs=(-D "$PGTEST_DIR/replica" -U postgres -R -X stream -c fast --no-sync -p "$PORT")
        if [[ $TLS -eq 1 ]]; then
            # the replica's primary_conninfo needs a passfile the server user can read
            cp "$PGTEST_DIR/pgpass" "$PGTEST_DIR/pgpass.srv"
            if is_root; then chown "$SRV_UID" "$PGTEST_DIR/pgpass.srv"; fi
            as_srv env PGPASSFILE="$PGTEST_DIR/pgpass.srv" PGSSLMODE=verify-full PGSSLROOTCERT="$PGTEST_DIR/tls/ca.crt" \
                "$PGBIN/pg_basebackup" "${bbargs[@]}" -h localhost >&2
        else
            as_srv "$PGBIN/pg_basebackup" "${bbargs[@]}" -h "$PGTEST_DIR" >&2
        fi
        echo "port = $rport" >> "$PGTEST_DIR/replica/postgresql.conf"
        start_server "$PGTEST_DIR/replica" "$PGTEST_DIR/replica.log"
        {
            echo "export PGTEST_REPLICA_PORT='$rport'"
            if [[ $TLS -eq 1 ]]; then
                echo "export PGTEST_FAILOVER_CONNINFO='host=localhost,localhost hostaddr=127.0.0.1,127.0.0.1 port=$PORT,$rport user=postgres dbname=postgres sslmode=verify-full sslrootcert=$PGTEST_DIR/tls/ca.crt passfile=$PGTEST_DIR/pgpass connect_timeout=2 target_session_attrs=read-write'"
            else
                echo "export PGTEST_FAILOVER_CONNINFO='host=$PGTEST_DIR,$PGTEST_DIR port=$PORT,$rport user=postgres dbname=postgres connect_timeout=2 target_session_attrs=read-write'"
            fi
        } >> "$envf"
    fi
    STARTED_OK=1
    cat "$envf"
    log "ready: $PGTEST_DIR (port $PORT, tcp=$TCP, tls=$TLS, replica=$REPLICA) in $(( ($(date +%s%N) - t_start) / 1000000 )) ms (initdb+certs $(( (t_initdb - t_start) / 1000000 )) ms)"
}

cmd_stop() {
    local dir=${1:-${PGTEST_DIR:-}}
    [[ -n "$dir" && -f "$dir/.pg-test-cluster" ]] || die "not a pg-test-cluster directory: '${dir}'"
    PGBIN=$(find_bin)
    local d pid
    for d in "$dir/replica" "$dir/data"; do
        [[ -f "$d/postmaster.pid" ]] || continue
        pid=$(head -n 1 "$d/postmaster.pid")
        if is_root; then
            SRV_UID=$(stat -c %u "$d"); SRV_GID=$(stat -c %g "$d"); PGTEST_DIR=$dir
        fi
        as_srv "$PGBIN/pg_ctl" -D "$d" -m immediate -w -t 20 -s stop >&2 2>/dev/null || kill -9 "$pid" 2>/dev/null || true
    done
    rm -rf -- "$dir"
}

# Failover drills: `kill-primary` = immediate stop of the primary (like a crash), `promote` = the
# replica becomes a primary (pg_ctl promote -w). Both take [DIR] like stop.
cmd_ctl() { # $1 = what, $2 = dir
    local dir=${2:-${PGTEST_DIR:-}}
    [[ -n "$dir" && -f "$dir/.pg-test-cluster" ]] || die "not a pg-test-cluster directory: '${dir}'"
    PGBIN=$(find_bin); PGTEST_DIR=$dir
    local d=$dir/data; [[ $1 == promote ]] && d=$dir/replica
    [[ -d $d ]] || die "no $d"
    if is_root; then SRV_UID=$(stat -c %u "$d"); SRV_GID=$(stat -c %g "$d"); fi
    case $1 in
        kill-primary) as_srv "$PGBIN/pg_ctl" -D "$d" -m immediate -w -s stop >&2 ;;
        promote) as_srv "$PGBIN/pg_ctl" -D "$d" -w -t 30 -s promote >&2 ;;
    esac
}

# The caller's libpq variables (PGHOSTADDR, PGSSLMODE, PGPASSFILE, ... left by an earlier
# `eval` of this script) would redirect this script's own pg_basebackup and pg_ctl: drop them.
PGTEST_DIR_FROM_ENV=${PGTEST_DIR:-}
for v in $(compgen -e); do
    case $v in PGBIN|PGTEST_OS_USER) ;; PG*) unset "$v" ;; esac
done
PGTEST_DIR=$PGTEST_DIR_FROM_ENV

case ${1:-} in
    start)
        shift
        # Each attempt runs in a subshell: a failed one has cleaned up after itself (EXIT trap),
        # and a retry picks new ports (a port picked as free can be taken before the bind).
        for attempt in 1 2 3; do
            (PGTEST_DIR=; cmd_start "$@") && exit 0
            log "start attempt $attempt failed"
        done
        exit 1 ;;
    kill-primary|promote) cmd_ctl "$1" "${2:-}" ;;
    stop) shift; cmd_stop "$@" ;;
    env) cat "${2:-${PGTEST_DIR:?}}/env" ;;
    *) echo "usage: $0 start [--tcp] [--tls] [--replica] | stop [DIR] | env [DIR] | kill-primary [DIR] | promote [DIR]" >&2; exit 2 ;;
esac
