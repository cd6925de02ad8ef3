"""Timing for the peer benchmarks: warm-up, several runs, median/min/max per operation, in
nanoseconds, the same statistics credvault-bench reports."""

import json
import statistics
import sys
import time


def _batch(fn, iterations):
    start = time.perf_counter_ns()
    for _ in range(iterations):
        fn()
    return (time.perf_counter_ns() - start) / iterations


def measure(fn, runs, warmup=1, min_batch_ns=0, setup=None):
    """Times `fn`: `warmup` discarded runs, then `runs` timed ones. Fast operations are timed
    in batches of at least `min_batch_ns`; `setup` runs untimed before each single run."""
    iterations = 1
    if min_batch_ns > 0 and setup is None:
        while _batch(fn, iterations) * iterations < min_batch_ns and iterations < 1 << 20:
            iterations *= 2
    times = []
    for index in range(warmup + runs):
        if setup is not None:
            setup()
        elapsed = _batch(fn, iterations)
        if index >= warmup:
            times.append(elapsed)
    return {
        "median_ns": statistics.median(times),
        "min_ns": min(times),
        "max_ns": max(times),
        "runs": runs,
        "iterations": iterations,
    }


class Output:
    """Writes one JSON object per figure (JSON Lines), like credvault-bench --json."""

    def __init__(self, stream):
        self.stream = stream

    def figure(self, tool, name, sample, **fields):
        record = {"tool": tool, "name": name}
        record.update(fields)
        record.update(sample)
        self.stream.write(json.dumps(record) + "\n")
        self.stream.flush()
        where = " ".join(f"{key}={value}" for key, value in fields.items() if key in ("items", "size_bytes"))
        print(f"   {tool:<24} {name:<22} {where:<16} {sample['median_ns'] / 1e3:12.1f} us", file=sys.stderr)


def progress(text):
    print(text, file=sys.stderr, flush=True)
