#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The command line as the kernel passed it (`CommandLine.unsafeArgv`), decoded strictly:
/// an argument that is not valid UTF-8 is refused, never replaced by U+FFFD as
/// `CommandLine.arguments` does (which made `svc\xff` and `svc\xfe` one name).
enum RawArguments {
    /// The arguments after the program name, or a `UsageError` naming the first one (by
    /// position, never by its bytes) that is not UTF-8.
    static func decode() throws(UsageError) -> [String] {
        try decode(count: Int(CommandLine.argc), CommandLine.unsafeArgv)
    }

    /// The arguments after the program name among `count` entries of `argv`. A program may be
    /// started with no arguments at all, not even its name (older kernels pass `argc` 0): that
    /// is no argument, not a range from 1 to 0, which would trap.
    static func decode(count: Int, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) throws(UsageError) -> [String] {
        var arguments: [String] = []
        for index in stride(from: 1, to: count, by: 1) {
            guard let pointer = argv[index] else { break }
            let bytes = UnsafeRawBufferPointer(start: pointer, count: strlen(pointer)).bindMemory(to: UInt8.self)
            guard let argument = String(validating: bytes, as: UTF8.self) else {
                throw UsageError("argument \(index) is not valid UTF-8; names, paths and options must be UTF-8 text")
            }
            arguments.append(argument)
        }
        return arguments
    }
}
