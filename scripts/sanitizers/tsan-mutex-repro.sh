#!/usr/bin/env bash
# Shows why scripts/sanitizers/tsan.supp exists: ThreadSanitizer reports correct code that
# uses Synchronization.Mutex (Linux, Swift 6.3) and not the same code with NSLock.
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/mutex.swift" <<'SWIFT'
import Dispatch
import Synchronization
final class Box: Sendable { let m = Mutex(0) }
let box = Box()
DispatchQueue.concurrentPerform(iterations: 8) { _ in for _ in 0..<20_000 { box.m.withLock { $0 += 1 } } }
print("Mutex total:", box.m.withLock { $0 })
SWIFT
cat >"$dir/nslock.swift" <<'SWIFT'
import Foundation
final class Box: @unchecked Sendable { let lock = NSLock(); var n = 0 }
let box = Box()
DispatchQueue.concurrentPerform(iterations: 8) { _ in for _ in 0..<20_000 { box.lock.lock(); box.n += 1; box.lock.unlock() } }
print("NSLock total:", box.n)
SWIFT
for name in mutex nslock; do
    swiftc -sanitize=thread -swift-version 6 -Onone "$dir/$name.swift" -o "$dir/$name" 2>&1 | grep -v 'Cannot export' || true
    { TSAN_OPTIONS=halt_on_error=0 "$dir/$name" 2>&1 || true; } | grep -E 'total|WARNING: ThreadSanitizer' | sed 's/ (pid=[0-9]*)//' | sort | uniq -c
done
