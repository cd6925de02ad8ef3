/// One JSON object per figure, with the fields the issue names (`name`, `size_bytes`, `items`,
/// `median_ns`, `min_ns`, `max_ns`, `ratio`) and a few more (`group`, `runs`, `iterations`,
/// `ratio_to`, `mb_per_s`, figure-specific extras, and `targets`).
enum JSONLines {
    static func line(for figure: Figure) -> String {
        var fields: [(key: String, value: JSONValue)] = [("name", .string(figure.name)), ("group", .string(figure.group))]
        if let size = figure.sizeBytes { fields.append(("size_bytes", .int(size))) }
        if let items = figure.items { fields.append(("items", .int(items))) }
        fields.append(("median_ns", .double(figure.sample.median)))
        fields.append(("min_ns", .double(figure.sample.min)))
        fields.append(("max_ns", .double(figure.sample.max)))
        fields.append(("runs", .int(figure.sample.runs)))
        fields.append(("iterations", .int(figure.sample.iterations)))
        if let ratio = figure.ratio {
            fields.append(("ratio", .double(ratio)))
            if let to = figure.ratioTo { fields.append(("ratio_to", .string(to))) }
        }
        if let mbps = figure.megabytesPerSecond { fields.append(("mb_per_s", .double(mbps))) }
        fields.append(contentsOf: figure.extra)
        if !figure.checks.isEmpty {
            fields.append((
                "targets",
                .array(figure.checks.map { check in
                    .object([
                        ("what", .string(check.what)), ("value", .double(check.value)),
                        ("limit", .double(check.limit)),
                        ("kind", .string(check.kind == .atMost ? "at_most" : "exactly")),
                        ("met", .bool(check.met)),
                    ])
                })
            ))
        }
        return JSONValue.object(fields).render()
    }
}
