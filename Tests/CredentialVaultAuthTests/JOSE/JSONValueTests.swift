import CredentialVaultAuth
import Foundation
import CredentialVaultTestSupport
import Testing

@Suite("JSON parser", .ownThread)
struct JSONValueTests {
    private func parse(_ text: String, depth: Int = JSONValue.defaultMaximumDepth) throws -> JSONValue {
        try JSONValue.parse(Data(text.utf8), maximumDepth: depth)
    }

    @Test func parsesEveryKind() throws {
        let value = try parse(#" { "a": [1, -2.5e3, 0, true, false, null], "b": {"c": "d\n\u00e9\ud83d\ude00\/"} } "#)
        #expect(value == ["a": [1, -2500, 0, true, false, nil], "b": ["c": "d\né😀/"]])
        #expect(value["b"]?["c"]?.stringValue == "d\né😀/")
        #expect(value["a"]?.arrayValue?.count == 6)
    }

    @Test func numbersKeepNumericDates() throws {
        #expect(try parse("1300819380") == .number(1_300_819_380))
        #expect(try parse("1.5E+2") == .number(150))
        #expect(try parse("-0") == .number(0))
    }

    @Test(arguments: [
        "", " ", "{", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "[1] x", "01", "1.", ".5", "+1",
        "-", "1e", "NaN", "Infinity", "1e400", "tru", "nul", "\"abc", "\"\\x\"", "\"\\u12\"",
        "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"a\tb\"", "'a'", "{\"a\":1,\"a\":2}",
        "[\"\\u0000\" 1]",
    ])
    func rejectsInvalidJSON(_ text: String) {
        expectThrows({ (error: JOSEError) in error.kind == "invalidJSON" }) { try parse(text) }
    }

    @Test func rejectsInvalidUTF8() {
        for bytes: [UInt8] in [[0x22, 0xC3, 0x28, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0xFF]] {
            expectThrows({ (error: JOSEError) in error.kind == "invalidJSON" }, "\(bytes)") { try JSONValue.parse(Data(bytes)) }
        }
    }

    @Test func boundsNesting() throws {
        let ok = String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
        _ = try parse(ok, depth: 32)
        let deep = String(repeating: "[", count: 33) + String(repeating: "]", count: 33)
        #expect(throws: JOSEError.invalidJSON("nesting too deep")) { try parse(deep, depth: 32) }
        // A caller asking for an absurd depth still gets the hard cap, not a stack overflow.
        let hostile = String(repeating: "[", count: 100_000)
        #expect(throws: JOSEError.invalidJSON("nesting too deep")) { try parse(hostile, depth: Int.max) }
    }

    @Test func everyTruncationFailsCleanly() throws {
        let text = #"{"iss":"https://id","aud":["a","b"],"exp":1.5e9,"x":{"y":[true,null,"\u00e9"]}}"#
        let bytes = Array(text.utf8)
        for end in 0..<bytes.count {
            expectThrows({ (error: JOSEError) in error.kind == "invalidJSON" }, "\(end)") { try JSONValue.parse(Data(bytes[..<end])) }
        }
        _ = try JSONValue.parse(Data(bytes))
    }

    @Test func randomBytesNeverCrash() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array(#"{}[]":,.-+eE0123456789 truefalsn\u"#.utf8) + [0x00, 0xC3, 0xFF, 0x0A]
        for _ in 0..<3000 {
            let length = Int.random(in: 0..<40, using: &generator)
            let bytes = (0..<length).map { _ in alphabet.randomElement(using: &generator) ?? 0 }
            _ = try? JSONValue.parse(Data(bytes))
        }
    }

    @Test func codableRoundTrip() throws {
        let value: JSONValue = ["a": [1, "x", nil, false], "b": ["c": 2.5]]
        let data = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(JSONValue.self, from: data) == value)
        #expect(try JSONValue.parse(data) == value)
    }
}
