#!/usr/bin/env python3
"""Development aid: inserts `await ` where the compiler says "expression is 'async' but is not
marked with 'await'" (reads `swift build` output on stdin). Run repeatedly until none are left."""
import re, sys, collections
hits = collections.defaultdict(set)
for line in sys.stdin:
    m = re.match(r"^(/[^:]+):(\d+):(\d+): error: expression is 'async' but is not marked with 'await'", line)
    if m:
        hits[m.group(1)].add((int(m.group(2)), int(m.group(3))))
for path, spots in hits.items():
    lines = open(path).read().split("\n")
    for (ln, col) in sorted(spots, key=lambda x: (x[0], -x[1])):
        text = lines[ln - 1]
        i = col - 1
        if text[i:].startswith("await "):
            continue
        if text[i:].startswith("try "):  # the error points at `try x.f()`: `try await x.f()`
            i += 4
        lines[ln - 1] = text[:i] + "await " + text[i:]
    open(path, "w").write("\n".join(lines))
    print(path, len(spots))
