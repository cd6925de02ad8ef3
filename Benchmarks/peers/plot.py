"""Plots save latency against item count for credvault and the peers (PNG)."""

import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from results import OURS, load  # noqa: E402

SERIES = [
    (OURS, "file_save", "credvault sealed file (durable: journal append + commit record)", "-", "o"),
    ("physical floor (same run)", "file_save", "physical floor: write temp + fsync + rename + fsync dir", ":", "."),
    ("journal floor (same run)", "file_save", "journal floor: append + fdatasync + commit write + fdatasync", ":", "+"),
    ("keyrings.alt plaintext", "file_save", "keyrings.alt plaintext (no encryption, no fsync)", "--", "s"),
    ("keyrings.alt encrypted", "file_save", "keyrings.alt encrypted (PBKDF2 per value, no fsync)", "--", "^"),
    ("keyrings.cryptfile", "file_save", "keyrings.cryptfile (Argon2id per value, no fsync)", "--", "v"),
    (OURS, "secret_service_store", "credvault Secret Service backend", "-", "D"),
    ("libsecret (bare, same run)", "secret_service_store", "bare libsecret store (held connection)", ":", "d"),
    ("Python keyring (SecretService)", "secret_service_store", "Python keyring SecretService", "--", "P"),
    ("secret-tool (process)", "secret_service_store", "secret-tool store (whole process)", "-.", "x"),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("files", nargs="+")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    figures = load(args.files)
    fig, ax = plt.subplots(figsize=(12, 5.5), dpi=110)
    for tool, name, label, style, marker in SERIES:
        points = sorted((where, record["median_ns"] / 1e6) for (t, n, where), record in figures.items()
                        if t == tool and n == name and where is not None)
        if points:
            ax.plot([p[0] for p in points], [p[1] for p in points], linestyle=style, marker=marker, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("credentials in the store")
    ax.set_ylabel("save latency, median (ms, log scale)")
    ax.set_title("Save latency against item count")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    fig.savefig(args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
