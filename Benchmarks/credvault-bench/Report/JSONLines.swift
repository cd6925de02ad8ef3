/// One JSON object per figure, with the fields the documentation names (`name`, `size_bytes`, `items`,
/// `median_ns`, `min_ns`, `max_ns`, `ratio`) and a few more (`group`, `runs`, `iterations`,
/// `ratio_to`, `mb_per_s`, figure-specific extras, and `targets`).
enum JSONLines {
    static func line(for figure: Figure) -> String {
        var fields = [JSONField("name", .string(figure.name)), JSONField("group", .string(figure.group))]
        if let size = figure.sizeBytes { fields.append(JSONField("size_bytes", .int(size))) }
        if let items = figure.items { fields.append(JSONField("items", .int(items))) }
        fields.append(JSONField("median_ns", .double(figure.sample.median)))
        fields.append(JSONField("min_ns", .double(figure.sample.min)))
        fields.append(JSONField("max_ns", .double(figure.sample.max)))
        fields.append(JSONField("runs", .int(figure.sample.runs)))
        fields.append(JSONField("iterations", .int(figure.sample.iterations)))
        if let ratio = figure.ratio {
            fields.append(JSONField("ratio", .double(ratio)))
            if let to = figure.ratioTo { fields.append(JSONField("ratio_to", .string(to))) }
        }
        if let mbps = figure.megabytesPerSecond { fields.append(JSONField("mb_per_s", .double(mbps))) }
        fields.append(contentsOf: figure.extra)
        if !figure.checks.isEmpty {
            fields.append(JSONField(
                "targets",
                .array(figure.checks.map { check in
                    .object([
                        JSONField("what", .string(check.what)), JSONField("value", .double(check.value)),
                        JSONField("limit", .double(check.limit)),
                        JSONField("kind", .string(check.kind == .atMost ? "at_most" : "exactly")),
                        JSONField("met", .bool(check.met)),
                    ])
                })
            ))
        }
        return JSONValue.object(fields).render()
    }
}
