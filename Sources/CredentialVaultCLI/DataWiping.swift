#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Data {
    /// Overwrites every byte with zero in place (the storage this value owns; a copy made
    /// earlier is the copier's to wipe).
    mutating func wipe() { resetBytes(in: 0..<count) }
}
