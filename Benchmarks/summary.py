"""The summary rows of docs/BENCHMARKS.md (*Latest figures*) from a credvault-bench run: one
row per performance target, with the measured medians and whether the target is met.

Usage: python3 Benchmarks/summary.py RUN.jsonl   (from credvault-bench --json or --json-out)"""

import json
import sys


def human(ns):
    if ns < 1e3:
        return f"{ns:.0f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.3g} µs"
    return f"{ns / 1e6:.3g} ms"


def main():
    figures = {}
    for line in open(sys.argv[1], encoding="utf-8"):
        record = json.loads(line)
        figures[(record["name"], record.get("items", record.get("size_bytes")))] = record

    def get(name, where=None):
        return figures.get((name, where))

    def status(records, what):
        checks = [c for r in records if r for c in r.get("targets", []) if c["what"] == what]
        if not checks:
            return "not measured"
        missed = [c for c in checks if not c["met"]]
        if not missed:
            return "met"
        worst = max(missed, key=lambda c: c["value"] / c["limit"])
        return f"**missed** (up to {worst['value'] / worst['limit']:.2f}x over)"

    rows = []
    small = [get("seal", 32), get("open", 32)]
    if all(small):
        rows.append(("seal / open 32 B: at most 1.5x raw libsodium",
                     f"seal {human(small[0]['median_ns'])} ({small[0]['ratio']:.2f}x), "
                     f"open {human(small[1]['median_ns'])} ({small[1]['ratio']:.2f}x)",
                     status(small, "ratio to raw")))
    large = [get(n, s) for n in ("seal", "open") for s in (4096, 65536, 1 << 20)]
    if all(large):
        rows.append(("seal / open 4 KiB to 1 MiB: at most 1.15x raw",
                     f"{min(r['ratio'] for r in large):.2f}x to {max(r['ratio'] for r in large):.2f}x; "
                     f"1 MiB at {get('seal', 1 << 20)['mb_per_s']:.0f} MB/s",
                     status(large, "ratio to raw")))
    counts = sorted(w for (n, w) in figures if n == "file_save")
    saves = [get("file_save", c) for c in counts]
    if saves:
        rows.append(("durable save: at most 1.2x the physical floor",
                     ", ".join(f"{c:,}: {human(r['median_ns'])} ({r['ratio']:.2f}x)" for c, r in zip(counts, saves)),
                     status(saves, "ratio to floor")))
        floors = [get("file_floor", c) for c in counts]
        rows.append(("save flat: 1 to 1,000 items at most 1.3x, to 10,000 at most 2x",
                     ", ".join(f"{c:,}: {r['median_ns'] / saves[0]['median_ns']:.2f}x" for c, r in zip(counts[1:], saves[1:]))
                     + " (the floor itself: "
                     + ", ".join(f"{f['median_ns'] / floors[0]['median_ns']:.2f}x" for f in floors[1:]) + ")",
                     status(saves, "vs 1 item")))
        loads = [get("file_load", c) for c in counts]
        rows.append(("load from an open vault: at most 10 µs, flat",
                     ", ".join(f"{c:,}: {human(r['median_ns'])}" for c, r in zip(counts, loads)),
                     "met" if status(loads, "median") == "met" and status(loads, "vs 1 item") == "met"
                     else status(loads, "median") + " / " + status(loads, "vs 1 item")))
    unlocks = [get(f"unlock_{k}") for k in ("interactive", "moderate", "key_file", "device")]
    if all(unlocks):
        rows.append(("unlock: exactly one password derivation per unlock",
                     f"interactive {human(unlocks[0]['median_ns'])}, moderate {human(unlocks[1]['median_ns'])} "
                     f"(1 derivation each, {unlocks[0]['ratio']:.2f}x / {unlocks[1]['ratio']:.2f}x raw Argon2id); "
                     f"key file {human(unlocks[2]['median_ns'])}, device {human(unlocks[3]['median_ns'])}",
                     status(unlocks[:2], "derivations per unlock")))
    ss = [r for (n, _), r in sorted(figures.items(), key=lambda kv: str(kv[0])) if n.startswith("secret_service_")]
    if ss:
        stores = [r for r in ss if r["name"] == "secret_service_store"]
        lookups = [r for r in ss if r["name"] == "secret_service_lookup"]
        rows.append(("Secret Service: at most 1.2x bare libsecret (held connection)",
                     f"store {min(r['ratio'] for r in stores):.1f}x to {max(r['ratio'] for r in stores):.1f}x, "
                     f"lookup {min(r['ratio'] for r in lookups):.1f}x to {max(r['ratio'] for r in lookups):.1f}x "
                     "(" + ", ".join(format(r["items"], ",") for r in stores) + " items)",
                     status(ss, "ratio to bare")))
    cli = get("cli_lookup", 1)
    if cli:
        startup = get("cli_startup")
        rows.append(("`credvault lookup` with a key file: at most 5 ms per process",
                     f"{human(cli['median_ns'])}, of which {human(startup['median_ns'])} is starting the process"
                     if startup else human(cli["median_ns"]),
                     status([cli], "median")))
    print("| performance target | measured (median) | |\n|---|---|---|")
    for target, measured, verdict in rows:
        print(f"| {target} | {measured} | {verdict} |")


if __name__ == "__main__":
    main()
