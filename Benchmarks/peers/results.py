"""Reads credvault-bench --json and peers.py output into one table of figures keyed by
(tool, name, items or size)."""

import json

OURS = "credvault"
RAW_TOOLS = {
    "raw_seal": ("libsodium (raw, same run)", "seal"),
    "raw_open": ("libsodium (raw, same run)", "open"),
    "file_floor": ("physical floor (same run)", "file_save"),
    "file_journal_floor": ("journal floor (same run)", "file_save"),
    "raw_secret_service_store": ("libsecret (bare, same run)", "secret_service_store"),
    "raw_secret_service_lookup": ("libsecret (bare, same run)", "secret_service_lookup"),
    "cli_startup": ("credvault --help (process start only)", "cli_lookup"),
    "process_spawn": ("/bin/true from Swift (posix_spawn)", "process_spawn"),
}


def load(paths):
    """Figures from JSON Lines files: {(tool, name, where): record}."""
    figures = {}
    for path in paths:
        with open(path, encoding="utf-8") as stream:
            for line in stream:
                line = line.strip()
                if not line:
                    continue
                record = json.loads(line)
                tool, name = record.get("tool"), record["name"]
                if tool is None:
                    tool, name = RAW_TOOLS.get(name, (OURS, name))
                where = record.get("items", record.get("size_bytes"))
                if name == "cli_lookup":
                    where = 1
                figures[(tool, name, where)] = record
                if tool == "secret-tool (process)" and name == "secret_service_lookup" and where == 1:
                    figures[("secret-tool lookup (process)", "cli_lookup", 1)] = record
    return figures


def tools(figures, name):
    """Tools that have figures named `name`, ours first."""
    found = sorted({tool for (tool, n, _) in figures if n == name}, key=lambda t: (t != OURS, t))
    return found


def wheres(figures, name):
    return sorted({where for (_, n, where) in figures if n == name and where is not None})


def human(ns):
    if ns is None:
        return ""
    if ns < 1e3:
        return f"{ns:.0f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.3g} µs"
    if ns < 1e9:
        return f"{ns / 1e6:.3g} ms"
    return f"{ns / 1e9:.3g} s"
