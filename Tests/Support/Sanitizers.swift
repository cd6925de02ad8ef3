import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Whether this test process runs under AddressSanitizer or ThreadSanitizer
/// (`scripts/sanitizers.sh`): their allocators and shadow memory make memory scans meaningless.
package enum Sanitizers {
    package static let active: Bool = {
        guard let handle = dlopen(nil, RTLD_NOW) else { return false }
        defer { dlclose(handle) }
        return dlsym(handle, "__asan_init") != nil || dlsym(handle, "__tsan_init") != nil
    }()

    /// The sanitizer options of this process (scripts/sanitizers.sh), for child processes
    /// started with an environment of their own.
    package static var options: [String: String] {
        ProcessInfo.processInfo.environment.filter { ["ASAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS"].contains($0.key) }
    }
}
