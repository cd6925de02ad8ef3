#!/usr/bin/env python3
"""Adds the `.ownThread` trait (Tests/Support/OwnThread.swift) to every `@Suite` of the test
files given (or under the directories given) that does not have it, except suites tagged
`.poolBound`-style exceptions listed with --except NAME. A one-off tool for test authors."""
import re, sys, pathlib
args = sys.argv[1:]
skip = set()
while '--except' in args:
    i = args.index('--except'); skip.add(args[i + 1]); del args[i:i + 2]
files = []
for a in args:
    p = pathlib.Path(a)
    files += sorted(p.rglob('*.swift')) if p.is_dir() else [p]
for p in files:
    s = p.read_text(); o = s
    def rep(m):
        args = m.group(1)
        after = s[m.end():m.end() + 200]
        name = re.search(r'(?:struct|class|enum|actor)\s+(\w+)', after)
        if name and name.group(1) in skip: return m.group(0)
        if args is None: return '@Suite(.ownThread)'
        inner = args[1:-1]
        if '.ownThread' in inner: return m.group(0)
        if inner.strip().startswith('"'):
            head, _, tail = inner.partition(',')
            return '@Suite(' + head + ', .ownThread' + (',' + tail if tail else '') + ')'
        return '@Suite(.ownThread, ' + inner + ')' if inner.strip() else '@Suite(.ownThread)'
    s = re.sub(r'@Suite(\([^)]*\))?(?=\s)', rep, s)
    if s != o:
        if 'import CredentialVaultTestSupport' not in s:
            s = s.replace('import Testing\n', 'import CredentialVaultTestSupport\nimport Testing\n', 1)
        p.write_text(s); print('ownThread:', p)
