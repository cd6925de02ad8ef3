#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The CLI's `--json` output: compact JSON with sorted keys, from FoundationEssentials'
/// `JSONEncoder` (the lean `credvault` has no `JSONSerialization`). String values and keys are
/// escaped by the encoder; `TerminalText.jsonEscaped` then escapes what a terminal would act on.
enum JSONOutput {
    static func sorted<Value: Encodable>(_ value: Value) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(value)
    }
}
