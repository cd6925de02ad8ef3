/// Command-line arguments split into positionals, `--flag`s and `--option value`s.
/// Secrets are never accepted here: options only name files that hold them.
public struct ParsedArguments: Sendable {
    public var positionals: [String] = []
    public var flags: Set<String> = []
    public var options: [String: String] = [:]

    /// Parses `arguments` knowing which names take a value; throws `UsageError` on unknown names.
    public init(_ arguments: [String], flags allowedFlags: Set<String>, options allowedOptions: Set<String>) throws(UsageError) {
        var iterator = arguments.makeIterator()
        var onlyPositionals = false
        while let argument = iterator.next() {
            if onlyPositionals || !argument.hasPrefix("--") || argument == "-" {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let eq = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            if allowedFlags.contains(name) {
                guard inlineValue == nil else { throw UsageError("--\(name) takes no value") }
                flags.insert(name)
            } else if allowedOptions.contains(name) {
                guard let value = inlineValue ?? iterator.next() else { throw UsageError("--\(name) needs a value") }
                options[name] = value
            } else {
                throw UsageError("unknown option --\(name)")
            }
        }
    }

    /// Exactly `count` positionals, named in the usage message.
    public func positionals(_ names: String...) throws(UsageError) -> [String] {
        guard positionals.count == names.count else {
            throw UsageError("expected \(names.map { $0.uppercased() }.joined(separator: " "))")
        }
        return positionals
    }
}

/// A wrong command line: exit code 2 with one line on stderr.
public struct UsageError: Error {
    public let message: String
    public init(_ message: String) { self.message = message }
}
