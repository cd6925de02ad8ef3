/// Command-line arguments split into positionals, `--flag`s and `--option value`s.
/// Secrets are never accepted here: options only name files that hold them.
///
/// `--help` and `-h` ask for help only where an option may stand: not as an option's value
/// (`--vault --help` names a vault called `--help`) and not after `--`, after which every
/// argument is a positional (`store -- -h alice` stores under the service `-h`).
package struct ParsedArguments: Sendable {
    /// The arguments that are not options, in order (everything after `--` included).
    package var positionals: [String] = []
    /// The flags given (without their `--`); `help` when `--help` or `-h` stood in option position.
    package var flags: Set<String> = []
    /// The options given, by name (without their `--`), with their values.
    package var options: [String: String] = [:]
    /// Every value of each option, in the order given (`options` keeps the last one): for the
    /// options a command takes more than once (`exec --env`, `exec --fd`, `serve-credentials --map`).
    package var optionValues: [String: [String]] = [:]
    /// How many positionals stood before `--`; `nil` when there was no `--` (`exec` takes its
    /// command only after it).
    package var separatorIndex: Int?

    /// The flag every command accepts: `--help`, or `-h`.
    package static let helpFlag = "help"

    /// Whether `--help` or `-h` was given in option position.
    package var wantsHelp: Bool { flags.contains(Self.helpFlag) }

    /// Parses `arguments` knowing which names take a value (`--help` and `-h` are always
    /// accepted as the flag `help`); throws `UsageError` on unknown names.
    package init(_ arguments: [String], flags allowedFlags: Set<String>, options allowedOptions: Set<String>) throws(UsageError) {
        let allowedFlags = allowedFlags.union([Self.helpFlag])
        var iterator = arguments.makeIterator()
        var onlyPositionals = false
        while let argument = iterator.next() {
            if onlyPositionals {
                positionals.append(argument)
                continue
            }
            if argument == "-h" {
                flags.insert(Self.helpFlag)
                continue
            }
            if !argument.hasPrefix("--") {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                separatorIndex = positionals.count
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
                optionValues[name, default: []].append(value)
            } else {
                throw UsageError("unknown option --\(name)")
            }
        }
    }

    /// Exactly `count` positionals, named in the usage message.
    package func positionals(_ names: String...) throws(UsageError) -> [String] {
        guard positionals.count == names.count else {
            throw UsageError("expected \(names.map { $0.uppercased() }.joined(separator: " "))")
        }
        return positionals
    }
}

/// A wrong command line: exit code 2 with one line on stderr.
package struct UsageError: Error {
    package let message: String
    package init(_ message: String) { self.message = message }
}
