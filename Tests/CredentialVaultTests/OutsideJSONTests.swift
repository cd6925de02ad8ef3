import CredentialVault
import Foundation
import Testing

@testable import CredentialVaultCLI

/// The nesting bound put before every decode of JSON from outside: brackets count only outside
/// strings, and input past the bound is a thrown error, never a trap of the decoder.
@Suite struct OutsideJSONTests {
    @Test func nestingIsCountedOutsideStringsOnly() {
        #expect(OutsideJSON.nestingIsWithinLimit(Array(String(repeating: "[", count: 64).utf8)))
        #expect(!OutsideJSON.nestingIsWithinLimit(Array(String(repeating: "[", count: 65).utf8)))
        #expect(OutsideJSON.nestingIsWithinLimit(Array((String(repeating: "[]", count: 1000)).utf8)), "siblings are not nesting")
        let quoted = "[\"" + String(repeating: "[{", count: 500) + "\\\"" + String(repeating: "[", count: 500) + "\"]"
        #expect(OutsideJSON.nestingIsWithinLimit(Array(quoted.utf8)), "brackets in a string, past an escaped quote, are text")
        #expect(!OutsideJSON.nestingIsWithinLimit(Array(("[\"\\\\\"" + String(repeating: "{", count: 64)).utf8)), "an escaped backslash ends no string")
    }

    @Test func inputNestedTooDeeplyIsAThrownErrorAndShallowInputDecodes() throws {
        for depth in [65, 513, 100_000] {
            #expect(throws: OutsideJSON.TooDeeplyNested()) {
                _ = try OutsideJSON.decode([String].self, from: Data(String(repeating: "[", count: depth).utf8))
            }
        }
        #expect(try OutsideJSON.decode([[String]].self, from: Data(#"[["a]]]]"]]"#.utf8)) == [["a]]]]"]])
    }

    /// The decoder reads UTF-16 and UTF-32 too, converted first: in those bytes a character
    /// can hold a quote's byte (U+2200 is 00 22 in UTF-16LE), so the count of the bytes as given
    /// can take the rest for a string and miss the nesting the decoder then sees. Only UTF-8
    /// (never a zero byte) is decoded; the input that trapped is the docker helper's test's
    /// (`inputNestedTooDeeplyInUTF16IsRefusedNotACrash`): here it could stop the test process.
    @Test func jsonThatIsNotUTF8IsRefusedBeforeDecoding() throws {
        let text = #"["a"]"#
        for encoded in [text.data(using: .utf16LittleEndian)!, Data([0xFF, 0xFE]) + text.data(using: .utf16LittleEndian)!, text.data(using: .utf32BigEndian)!] {
            #expect(throws: OutsideJSON.NotUTF8()) { _ = try OutsideJSON.decode([String].self, from: encoded) }
        }
        #expect(try OutsideJSON.decode([String].self, from: Data([0xEF, 0xBB, 0xBF]) + Data(#"["a"]"#.utf8)) == ["a"], "a UTF-8 byte-order mark")
    }

    @Test func aProgramStartedWithNoArgumentsAtAllHasNone() throws {
        var argv: [UnsafeMutablePointer<CChar>?] = [nil]
        #expect(try RawArguments.decode(count: 0, &argv) == [])
        #expect(try RawArguments.decode(count: 1, &argv) == [])
    }
}
