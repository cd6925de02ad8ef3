"""Runs the peer benchmarks and writes JSON Lines (one object per figure, with `tool`, `name`,
`items` or `size_bytes`, `median_ns`, `min_ns`, `max_ns`, `runs`)."""

import argparse
import sys
import tempfile

import crypto_peers
import file_peers
import process_peers
import secret_service_peers
from timing import Output, progress


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="-", help="JSON Lines file (default stdout)")
    parser.add_argument("--quick", action="store_true", help="few runs, items 1 and 100")
    parser.add_argument("--items", default=None, help="item counts, e.g. 1,100,1000,10000")
    parser.add_argument("--secret-service-max-items", type=int, default=1000,
                        help="largest item count for the Secret Service (default 1000)")
    parser.add_argument("--only", default="crypto,file,secret-service,process")
    parser.add_argument("--secret-service", action="store_true",
                        help="use the Secret Service of this session even outside a private keyring")
    args = parser.parse_args()
    counts = [int(n) for n in args.items.split(",")] if args.items else ([1, 100] if args.quick else [1, 100, 1000, 10000])
    groups = set(args.only.split(","))
    stream = sys.stdout if args.out == "-" else open(args.out, "w", encoding="utf-8")
    out = Output(stream)
    with tempfile.TemporaryDirectory(prefix="credvault-peers.") as directory:
        if "crypto" in groups:
            crypto_peers.run(out, args.quick)
        if "file" in groups:
            file_peers.run(out, directory, counts, args.quick)
        if "secret-service" in groups:
            import os
            private = os.environ.get("CREDVAULT_TEST_KEYRING") == "unlocked"
            if not (private or args.secret_service):
                progress("== Secret Service peers skipped: run under scripts/with-keyring.sh (or pass --secret-service)")
            elif not secret_service_peers.reachable():
                progress("== Secret Service peers skipped: no unlocked Secret Service reachable")
            else:
                secret_service_peers.run(out, [n for n in counts if n <= args.secret_service_max_items], args.quick)
        if "process" in groups:
            process_peers.run(out, directory, args.quick)
    if stream is not sys.stdout:
        stream.close()


if __name__ == "__main__":
    main()
