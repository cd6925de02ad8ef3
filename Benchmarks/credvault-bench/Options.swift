import Foundation

/// Command-line options of `credvault-bench`.
struct Options {
    enum Group: String, CaseIterable {
        case seal, unlock, file, async, waits, custody, memory, secretService = "secret-service", cli
        case tpm, postgres
    }

    var quick = false
    var json = false
    var groups = Set(Group.allCases)
    /// Item counts for the sealed-file and in-memory backends.
    var items: [Int] = [1, 100, 1_000, 10_000]
    /// Where vaults are written (the durable-write figures depend on this file system).
    var directory: URL?
    /// Also write JSON Lines to this file (with the table on stdout).
    var jsonOut: String?
    /// The `credvault` executable for the whole-process figure.
    var credvault: String?
    /// Another `credvault` (an earlier build) whose lookup is measured in the same run.
    var credvaultBaseline: String?
    /// Multiplies the number of runs of every measurement (`--runs-factor`).
    var runsFactor: Double?
    /// Run the Secret Service group against the session's keyring even outside a private bus.
    var useSessionKeyring = false
    /// The PostgreSQL server of the fleet-store group (`--postgres`, else
    /// `$CREDVAULT_BENCH_POSTGRES` or `$CREDVAULT_TEST_POSTGRES`); the group is skipped without one.
    var postgres: String? = ProcessInfo.processInfo.environment["CREDVAULT_BENCH_POSTGRES"]
        ?? ProcessInfo.processInfo.environment["CREDVAULT_TEST_POSTGRES"]

    static let usage = """
        usage: credvault-bench [--quick] [--json | --json-out FILE] [--only GROUP,...] [--items N,...] [--dir PATH]
                               [--credvault PATH] [--credvault-baseline PATH] [--runs-factor X] [--session-keyring] [--postgres CONNINFO]

        Measures CredentialVault next to raw libsodium / libsecret and the physical floor, in one run.
          --quick            a small smoke run (CI): fewer runs, items 1 and 100
          --json             JSON Lines on stdout (one object per figure); notes on stderr
          --json-out FILE    the table on stdout and the JSON Lines in FILE, from the same run
          --only GROUPS      some of: seal, unlock, file, async, waits, custody, memory, secret-service, cli, tpm,
                             postgres
          --items N,...      item counts for the backends (default 1,100,1000,10000)
          --dir PATH         where vaults are written (default: $TMPDIR or /tmp); durable-write
                             figures are those of this file system
          --credvault PATH   the credvault executable (default: next to this one)
          --credvault-baseline PATH
                             another credvault (an earlier build) whose lookup and binary size
                             are measured beside it, interleaved in the same run
          --runs-factor X    multiply the number of runs (e.g. 3 on a noisy machine)
          --session-keyring  also measure the Secret Service of the current session bus; by
                             default only a private one (scripts/with-keyring.sh) is used
          --postgres CONNINFO
                             the PostgreSQL server of the fleet-store group (default
                             $CREDVAULT_BENCH_POSTGRES, else $CREDVAULT_TEST_POSTGRES; skipped without)
        """

    /// Parses `arguments` (without the program name); prints usage and exits on `--help` or an error.
    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var rest = arguments[...]
        var itemsGiven = false
        func value(_ flag: String) -> String {
            guard let next = rest.popFirst() else { fail("\(flag) needs a value") }
            return next
        }
        while let arg = rest.popFirst() {
            switch arg {
            case "--quick": options.quick = true
            case "--json": options.json = true
            case "--only":
                var chosen = Set<Group>()
                for name in value(arg).split(separator: ",") {
                    guard let group = Group(rawValue: String(name)) else { fail("unknown group '\(name)'") }
                    chosen.insert(group)
                }
                options.groups = chosen
            case "--items":
                let counts = value(arg).split(separator: ",").compactMap { Int($0) }
                guard !counts.isEmpty, counts.allSatisfy({ $0 > 0 }) else { fail("--items takes positive counts") }
                options.items = counts.sorted()
                itemsGiven = true
            case "--json-out": options.jsonOut = value(arg)
            case "--dir": options.directory = URL(fileURLWithPath: value(arg))
            case "--credvault": options.credvault = value(arg)
            case "--credvault-baseline": options.credvaultBaseline = value(arg)
            case "--runs-factor":
                guard let factor = Double(value(arg)), factor > 0 else { fail("--runs-factor takes a positive number") }
                options.runsFactor = factor
            case "--session-keyring": options.useSessionKeyring = true
            case "--postgres": options.postgres = value(arg)
            case "--help", "-h":
                print(usage)
                exit(0)
            default: fail("unknown option '\(arg)'")
            }
        }
        if options.quick && !itemsGiven { options.items = [1, 100] }
        return options
    }

    private static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("credvault-bench: \(message)\n\n\(usage)\n".utf8))
        exit(2)
    }
}
