import Foundation

/// Human-readable numbers for the table.
enum Format {
    /// `812 ns`, `3.41 µs`, `1.23 ms`, `391 ms`, `1.20 s`.
    static func time(_ nanos: Double) -> String {
        switch nanos {
        case ..<1_000: return String(format: "%.0f ns", nanos)
        case ..<1_000_000: return significant(nanos / 1e3) + " µs"
        case ..<1_000_000_000: return significant(nanos / 1e6) + " ms"
        default: return significant(nanos / 1e9) + " s"
        }
    }

    /// `32 B`, `4 KiB`, `1 MiB`, `1.7 MiB`.
    static func bytes(_ count: Int) -> String {
        if count >= 1 << 20 { return count % (1 << 20) == 0 ? "\(count >> 20) MiB" : String(format: "%.1f MiB", Double(count) / 1048576) }
        if count >= 1 << 10 { return count % (1 << 10) == 0 ? "\(count >> 10) KiB" : String(format: "%.1f KiB", Double(count) / 1024) }
        return "\(count) B"
    }

    /// `1.07x`.
    static func ratio(_ value: Double) -> String { String(format: "%.2fx", value) }

    /// `1,000`.
    static func count(_ value: Int) -> String {
        let digits = String(value)
        var out = ""
        for (index, ch) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out += "," }
            out.append(ch)
        }
        return out
    }

    /// `950 MB/s`.
    static func throughput(_ mbPerSecond: Double) -> String {
        mbPerSecond >= 100 ? String(format: "%.0f MB/s", mbPerSecond) : String(format: "%.1f MB/s", mbPerSecond)
    }

    /// A check in a table cell: `ratio <= 1.15x: met`.
    static func checkShort(_ check: Check) -> String {
        "\(check.what) \(bound(check)): \(status(check))"
    }

    /// A check with its value: `ratio = 1.32x, target <= 1.2x: MISSED (1.10x over)`.
    static func checkLong(_ check: Check) -> String {
        "\(check.what) = \(value(check.value, check.unit)), target \(bound(check)): \(status(check))"
    }

    private static func value(_ value: Double, _ unit: String) -> String {
        switch unit {
        case "ns": time(value)
        case "x": ratio(value)
        default: String(format: "%g", value)
        }
    }

    private static func bound(_ check: Check) -> String {
        (check.kind == .atMost ? "<= " : "== ") + value(check.limit, check.unit)
    }

    private static func status(_ check: Check) -> String {
        if check.met { return "met" }
        if let over = check.overBy { return String(format: "MISSED (%.2fx over)", over) }
        return "MISSED"
    }

    private static func significant(_ value: Double) -> String {
        value >= 100 ? String(format: "%.0f", value) : value >= 10 ? String(format: "%.1f", value) : String(format: "%.2f", value)
    }
}
