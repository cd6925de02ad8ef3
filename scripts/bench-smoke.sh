#!/usr/bin/env bash
# CI smoke run of the benchmarks: builds credvault-bench in debug (the objects the test suite's
# build reuses: the smoke run asserts no timing, and a debug bench runs its quick figures about as
# fast) and the lean `credvault` in release (the only product whose release build links
# differently: the Swift libraries statically, lld, no DWARF), runs
# `credvault-bench --quick --json --credvault .build/release/credvault` (about 10 s, so the
# whole-process figure is the shipped binary's), and checks that every line is a JSON object
# with the fields the figures promise (name, median_ns, min_ns, max_ns; size_bytes or items and
# ratio where they apply) and that every figure group is there. No timing is asserted: the
# machines are shared and noisy. Runs inside a private keyring (scripts/with-keyring.sh) when
# gnome-keyring is installed, so that the Secret Service figures are checked too, and with a
# throwaway PostgreSQL (scripts/services/postgres.sh, state of its own) when it starts, so that
# the fleet store's figures are checked too.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${CREDVAULT_TEST_KEYRING:-}" ] && [ -x scripts/with-keyring.sh ] \
    && command -v gnome-keyring-daemon >/dev/null && command -v dbus-run-session >/dev/null; then
    exec scripts/with-keyring.sh "$0" "$@"
fi
quiet() { grep -vE 'prohibited flag|^\[|^Building|^Build of|Compiling|Planning|Write' || true; }
# The same `swift build` arguments as scripts/test.sh's build: other arguments would make the
# suite's build compile these modules again.
swift build --enable-all-traits --product credvault-bench 2>&1 | quiet
swift build -c release --product credvault 2>&1 | quiet
out=$(mktemp)
pgstate=$(mktemp -d)
export CREDVAULT_PG_STATE=$pgstate/state
trap 'scripts/services/postgres.sh stop >/dev/null 2>&1 || true; rm -rf "$out" "$pgstate"' EXIT
expect_postgres=no
if [ -x scripts/services/postgres.sh ] && scripts/services/postgres.sh start >"$pgstate/env" 2>"$pgstate/log"; then
    while IFS= read -r line; do [ -n "$line" ] && export "$line"; done <"$pgstate/env"
    [ -n "${CREDVAULT_TEST_POSTGRES:-}" ] && expect_postgres=yes
else
    echo "bench-smoke: PostgreSQL did not start: the fleet store's figures are not checked" >&2
fi
.build/debug/credvault-bench --quick --json --credvault .build/release/credvault >"$out"
expect_secret_service=no
[ "${CREDVAULT_TEST_KEYRING:-}" = unlocked ] && expect_secret_service=yes
python3 - "$out" "$expect_secret_service" "$expect_postgres" <<'PY'
import json
import sys

path, expect_secret_service, expect_postgres = sys.argv[1], sys.argv[2] == "yes", sys.argv[3] == "yes"
fleet = {"raw_libpq_read", "raw_libpq_read_polled", "pg_cached_read", "pg_uncached_read", "raw_libpq_cas", "pg_cas_write",
         "raw_libpq_update_4_writers", "pg_cas_write_4_writers", "pg_rotate_100"}
by_size = {"seal", "open", "raw_seal", "raw_open"}
by_items = {"file_save", "file_save_amortized", "file_journal_floor", "file_load", "file_floor", "file_delete", "memory_save", "memory_load",
            "secret_service_store", "secret_service_lookup", "raw_secret_service_store",
            "raw_secret_service_lookup", "cli_lookup", "file_load_sync", "file_load_async", "file_save_sync",
            "file_save_async", "memory_load_sync", "memory_load_async"} | fleet
with_ratio = {"custody_unlock_device_keyring", "custody_save_counter_file", "custody_save_counter_keyring", "seal", "open", "file_save", "file_save_amortized", "file_delete", "secret_service_store", "secret_service_lookup",
              "unlock_interactive", "unlock_moderate", "cli_lookup", "file_load_async", "file_save_async", "memory_load_async",
              "raw_libpq_read_polled", "pg_cached_read", "pg_uncached_read", "pg_cas_write", "pg_cas_write_4_writers"}
required = {"seal", "open", "raw_seal", "raw_open", "unlock_interactive", "unlock_moderate", "unlock_key_file",
            "unlock_device", "file_save", "file_save_amortized", "file_load", "file_floor", "file_delete", "memory_save",
            "memory_load", "cli_lookup", "file_load_sync", "file_load_async", "file_save_sync", "file_save_async",
            "memory_load_sync", "memory_load_async", "custody_unlock_key_file", "custody_unlock_device_file",
            "custody_save_no_counter_file", "custody_save_counter_file", "custody_counter_read_increment_file"}
if expect_secret_service:
    required |= {"secret_service_store", "secret_service_lookup", "custody_unlock_device_keyring", "custody_save_counter_keyring"}
if expect_postgres:
    required |= fleet
problems, names, count = [], set(), 0
with open(path, encoding="utf-8") as stream:
    for number, line in enumerate(stream, 1):
        try:
            figure = json.loads(line)
        except ValueError as error:
            problems.append(f"line {number}: not JSON ({error}): {line[:80]!r}")
            continue
        count += 1
        name = figure.get("name")
        names.add(name)
        for field in ("name", "median_ns", "min_ns", "max_ns"):
            if field not in figure:
                problems.append(f"line {number} ({name}): no {field}")
        for field in ("median_ns", "min_ns", "max_ns"):
            value = figure.get(field)
            if not isinstance(value, (int, float)) or value <= 0:
                problems.append(f"line {number} ({name}): {field} is {value!r}")
        if all(isinstance(figure.get(f), (int, float)) for f in ("min_ns", "median_ns", "max_ns")):
            if not figure["min_ns"] <= figure["median_ns"] <= figure["max_ns"]:
                problems.append(f"line {number} ({name}): min <= median <= max does not hold")
        if name in by_size and not isinstance(figure.get("size_bytes"), int):
            problems.append(f"line {number} ({name}): no size_bytes")
        if name in by_items and not isinstance(figure.get("items"), int):
            problems.append(f"line {number} ({name}): no items")
        if name in with_ratio and not isinstance(figure.get("ratio"), (int, float)):
            problems.append(f"line {number} ({name}): no ratio")
        if name and name.startswith("unlock_") and "derivations_per_unlock" not in figure:
            problems.append(f"line {number} ({name}): no derivations_per_unlock")
for name in sorted(required - names):
    problems.append(f"missing figure: {name}")
for problem in problems:
    print(f"bench-smoke: {problem}", file=sys.stderr)
print(f"bench-smoke: {count} figures, {len(names)} names, {len(problems)} problems")
sys.exit(1 if problems else 0)
PY
