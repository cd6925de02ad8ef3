import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// With CREDVAULT_FUZZ_SEEDS=DIR (scripts/fuzz/targets.sh), writes each seed to DIR/NAME and
/// exits; otherwise returns. Shared by the auth fuzz targets' `LLVMFuzzerInitialize`.
func writeSeedsIfAsked(_ seeds: [(name: String, text: String)]) {
    guard let directory = ProcessInfo.processInfo.environment["CREDVAULT_FUZZ_SEEDS"] else { return }
    for seed in seeds {
        _ = FileManager.default.createFile(atPath: "\(directory)/\(seed.name)", contents: Data(seed.text.utf8))
    }
    _exit(0)  // not exit(): LeakSanitizer would count the seed values still in scope
}
