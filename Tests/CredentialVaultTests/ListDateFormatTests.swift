import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultCLI

/// `list --json` prints the millisecond a store recorded, for every backend (they share the
/// formatter): never one early because a millisecond count went through a `Double`.
@Suite(.ownThread) struct ListDateFormatTests {
    @Test func everyMillisecondOfASecondIsPrintedAsRecorded() {
        // Two seconds of 2026 and one of 1970's first: dates made as the stores make them
        // (milliseconds / 1000), every millisecond of each.
        var wrong: [String] = []
        for second: Int64 in [1_767_225_600, 1_800_000_123, 0] {
            let prefix = String(Date(timeIntervalSince1970: Double(second)).formatted(Date.ISO8601FormatStyle()).dropLast())
            for ms: Int64 in 0..<1000 {
                let date = Date(timeIntervalSince1970: Double(second * 1000 + ms) / 1000)
                let expected = prefix + String(format: ".%03dZ", Int(ms))
                let printed = ListCommand.timestamp(date)
                if printed != expected { wrong.append("\(printed) for \(expected)") }
            }
        }
        #expect(wrong.isEmpty, "\(wrong.count) of 3000 dates printed wrong: \(wrong.prefix(5))")
    }

    @Test func aDateBetweenMillisecondsIsPrintedToTheNearestOne() {
        #expect(ListCommand.timestamp(Date(timeIntervalSince1970: 1_767_225_600.0126)) == "2026-01-01T00:00:00.013Z")
        #expect(ListCommand.timestamp(Date(timeIntervalSince1970: 1_767_225_600.9996)) == "2026-01-01T00:00:01.000Z")
    }
}
