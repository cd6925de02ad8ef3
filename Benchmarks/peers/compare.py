"""Prints credvault's figures beside the peers' as Markdown tables (medians)."""

import argparse

from results import OURS, human, load, tools, wheres

SECTIONS = [
    ("Seal (per call)", "seal", "size"),
    ("Open (per call)", "open", "size"),
    ("Save (credvault: durable, fdatasync'd journal append and commit; the INI keyrings: rewritten in place, no fsync)", "file_save", "items"),
    ("Load from a file store", "file_load", "items"),
    ("Secret Service store", "secret_service_store", "items"),
    ("Secret Service lookup", "secret_service_lookup", "items"),
    ("Whole-process lookup (what a shell script pays)", "cli_lookup", "items"),
    ("Starting a process (floor of the line above)", "process_spawn", None),
]


def size_label(n):
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB" if n >= 1 << 10 else f"{n} B"


def table(figures, title, name, axis):
    columns = tools(figures, name)
    if not columns:
        return ""
    rows = wheres(figures, name) or [None]
    out = [f"### {title}", "", "| " + " | ".join([axis or ""] + columns) + " |", "|" + "---|" * (len(columns) + 1)]
    for where in rows:
        label = "" if where is None else size_label(where) if axis == "size" else f"{where:,}"
        cells = []
        for tool in columns:
            record = figures.get((tool, name, where))
            cells.append(human(record["median_ns"]) if record else "")
        out.append("| " + " | ".join([label] + cells) + " |")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("files", nargs="+", help="credvault-bench --json output and peers.py output")
    figures = load(parser.parse_args().files)
    print(f"Medians; `{OURS}` is this library. Columns marked 'same run' were measured by credvault-bench beside it.\n")
    for title, name, axis in SECTIONS:
        text = table(figures, title, name, axis)
        if text:
            print(text)


if __name__ == "__main__":
    main()
