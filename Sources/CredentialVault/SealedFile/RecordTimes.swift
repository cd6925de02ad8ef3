#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// When a record's key was first saved and when the record was written, in Unix milliseconds,
/// as every record's plaintext carries them (see docs/FORMAT.md, *Records*).
struct RecordTimes: Sendable, Equatable {
    /// When the key was first saved; `nil` when unknown (stored as 0). This library never
    /// writes 0 (`init(savingAt:replacing:)`); a reader takes it as unknown, so that a writer
    /// that cannot tell (a key brought from elsewhere) need not invent a time.
    var createdMillis: UInt64?
    /// When this record was written (the key's last save).
    var modifiedMillis: UInt64

    /// The times of a save at `now` that replaces `previous`: it keeps when the key was created
    /// (unknown stays unknown). A new key, or one whose `previous` record has expired (it is
    /// gone, only not purged yet), is created now.
    init(savingAt now: Date, replacing previous: RecordEntry?) {
        let millis = Self.millis(now)
        if let previous, !previous.isExpired(at: now) {
            createdMillis = previous.times.createdMillis
        } else {
            // 0 reads as unknown: a clock at or before 1970 is recorded one millisecond late.
            createdMillis = max(millis, 1)
        }
        modifiedMillis = millis
    }

    init(createdMillis: UInt64?, modifiedMillis: UInt64) {
        self.createdMillis = createdMillis
        self.modifiedMillis = modifiedMillis
    }

    var created: Date? { createdMillis.map(Self.date) }
    var modified: Date { Self.date(modifiedMillis) }

    /// `date` in whole Unix milliseconds (the nearest: a date in whole milliseconds comes back
    /// exactly from `date(_:)`), clamped to what a u64 holds.
    static func millis(_ date: Date) -> UInt64 {
        let millis = (date.timeIntervalSince1970 * 1000).rounded()
        guard millis > 0 else { return 0 }
        return millis < Double(UInt64.max) ? UInt64(millis) : .max
    }

    /// The date `millis` Unix milliseconds name.
    static func date(_ millis: UInt64) -> Date { Date(timeIntervalSince1970: Double(millis) / 1000) }
}
