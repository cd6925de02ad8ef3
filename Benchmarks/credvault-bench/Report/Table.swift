/// The Markdown table of one group: only the columns some figure of the group has.
enum Table {
    static func markdown(_ figures: [Figure]) -> String {
        let hasSize = figures.contains { $0.sizeBytes != nil }
        let hasItems = figures.contains { $0.items != nil }
        let hasThroughput = figures.contains { $0.megabytesPerSecond != nil }
        let hasRatio = figures.contains { $0.ratio != nil }
        let hasChecks = figures.contains { !$0.checks.isEmpty }
        var header = ["figure"]
        if hasSize { header.append("size") }
        if hasItems { header.append("items") }
        header += ["median", "min", "max"]
        if hasThroughput { header.append("MB/s") }
        if hasRatio { header.append("ratio") }
        if hasChecks { header.append("target") }
        var rows: [[String]] = []
        for figure in figures {
            var row = [figure.name]
            if hasSize { row.append(figure.sizeBytes.map(Format.bytes) ?? "") }
            if hasItems { row.append(figure.items.map(Format.count) ?? "") }
            row += [Format.time(figure.sample.median), Format.time(figure.sample.min), Format.time(figure.sample.max)]
            if hasThroughput { row.append(figure.megabytesPerSecond.map(Format.throughput) ?? "") }
            if hasRatio { row.append(figure.ratio.map { "\(Format.ratio($0)) \(figure.ratioTo ?? "")" } ?? "") }
            if hasChecks {
                row.append(figure.checks.map(Format.checkShort).joined(separator: "; "))
            }
            rows.append(row)
        }
        var out = "| " + header.joined(separator: " | ") + " |\n"
        out += "|" + header.map { _ in "---" }.joined(separator: "|") + "|\n"
        for row in rows { out += "| " + row.joined(separator: " | ") + " |\n" }
        return out
    }

    /// `seal 4 KiB`, `file_save 1,000 items`.
    static func label(_ figure: Figure) -> String {
        var text = figure.name
        if let size = figure.sizeBytes, figure.items == nil { text += " \(Format.bytes(size))" }
        if let items = figure.items { text += " \(Format.count(items)) item\(items == 1 ? "" : "s")" }
        return text
    }
}
