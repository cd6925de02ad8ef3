import Foundation
import Testing

@testable import CredentialVaultAuth

@Suite("JSON serialization of signed claims")
struct JSONSerializationTests {
    @Test("whole numbers are written as integers, others as decimals, non-finite as null")
    func numbers() {
        #expect(JSONValue.number(1_800_000_060).serialized == "1800000060")
        #expect(JSONValue.number(-5).serialized == "-5")
        #expect(JSONValue.number(0.5).serialized == "0.5")
        #expect(JSONValue.number(.nan).serialized == "null")
        #expect(JSONValue.number(9_007_199_254_740_992).serialized == "9007199254740992")
    }

    @Test("members are sorted, strings escaped, and the text parses back to the same value")
    func roundTrip() throws {
        let value: JSONValue = ["b": [1, true, nil], "a": "q\"\\/\u{01}\n\té", "c": ["z": 1.25]]
        let text = value.serialized
        #expect(text == #"{"a":"q\"\\/\u0001\n\té","b":[1,true,null],"c":{"z":1.25}}"#)
        #expect(try JSONValue.parse(Data(text.utf8)) == value)
    }
}
