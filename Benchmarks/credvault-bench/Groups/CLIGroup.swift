import Foundation

/// Group 5: a whole `credvault lookup` process with a key file, as a shell script or a systemd
/// unit runs it; next to the same executable doing nothing (`--help`: loading and starting the
/// process) and `/bin/true` (the cost of starting any process here).
enum CLIGroup {
    static let title = "Whole process: credvault lookup with a key file (vault with 1 item)"
    static let secret = "s3cr3t-refresh-token"

    static func run(_ options: Options, _ reporter: Reporter, _ workspace: Workspace) throws {
        reporter.begin(title)
        defer { reporter.end() }
        guard let credvault = locate(options) else {
            reporter.note("skipped: no credvault executable next to credvault-bench (it is built with it); pass --credvault PATH")
            return
        }
        let directory = try workspace.directory("cli")
        // The CLI's device key (device-only is its default) comes from a host secret in this
        // private state directory, never the user's.
        var environment = ["PATH": "/usr/bin:/bin", "HOME": directory.path, "XDG_STATE_HOME": directory.appendingPathComponent("state").path,
                           "XDG_DATA_HOME": directory.appendingPathComponent("data").path]
        environment["LANG"] = ProcessInfo.processInfo.environment["LANG"]
        let keyFile = directory.appendingPathComponent("key").path
        let vault = directory.appendingPathComponent("vaults/cli.cvault").path
        _ = try runCapturing([credvault, "keygen", keyFile], environment: environment)
        _ = try runCapturing(
            [credvault, "store", "api.example.com", "deploy", "--vault", vault, "--key-file", keyFile],
            environment: environment, input: Data(secret.utf8))
        let lookupArguments = [credvault, "lookup", "api.example.com", "deploy", "--vault", vault, "--key-file", keyFile]
        let read = try runCapturing(lookupArguments, environment: environment)
        guard read == Data(secret.utf8) else { throw BenchError("credvault lookup returned something else") }

        let lookup = SpawnedCommand(lookupArguments, environment: environment)
        let help = SpawnedCommand([credvault, "--help"], environment: environment)
        let trueCommand = SpawnedCommand(["/bin/true"], environment: environment)
        // The earlier build reads the same vault: its lookup is interleaved with this one's.
        var baseline: SpawnedCommand?
        if let path = options.credvaultBaseline {
            let arguments = [path] + lookupArguments.dropFirst()
            guard try runCapturing(arguments, environment: environment) == Data(secret.utf8) else {
                throw BenchError("the baseline credvault's lookup returned something else")
            }
            baseline = SpawnedCommand(arguments, environment: environment)
        }
        let commands = [lookup.run, help.run, trueCommand.run] + (baseline.map { [$0.run] } ?? [])
        let samples = try Timer.measureInterleaved(Plan.process(options), commands)
        let size = try binaryBytes(credvault)
        var figure = Figure(group: title, name: "cli_lookup", items: 1, sample: samples[0])
        figure.checks.append(.atMost("median", samples[0].median, 5_000_000, unit: "ns"))
        figure.extra.append(JSONField("binary_bytes", .int(size)))
        let startup = Figure(group: title, name: "cli_startup", sample: samples[1])
        figure.relate(to: startup)
        var before: Figure?
        if let path = options.credvaultBaseline {
            var figure = Figure(group: title, name: "cli_lookup_baseline", items: 1, sample: samples[3])
            figure.extra.append(JSONField("binary_bytes", .int(try binaryBytes(path))))
            before = figure
        }
        if let before {
            figure.extra.append(JSONField("ratio_to_cli_lookup_baseline", .double(samples[0].median / before.sample.median)))
        }
        reporter.add(figure)
        if let before { reporter.add(before) }
        reporter.add(startup)
        reporter.add(Figure(group: title, name: "process_spawn", sample: samples[2]))
        reporter.note("cli_startup: `credvault --help` (starting the lean executable: the Swift libraries and FoundationEssentials linked in, libsodium loaded; no vault work); process_spawn: `/bin/true`.")
        reporter.note("binary size: credvault \(megabytes(size))" + (options.credvaultBaseline.map { ", baseline \(megabytes((try? binaryBytes($0)) ?? 0)) (cli_lookup_baseline: \($0))" } ?? ""))
    }

    /// The size of the executable file at `path` (what `ls -l` shows).
    private static func binaryBytes(_ path: String) throws -> Int {
        guard let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber else {
            throw BenchError("cannot read the size of \(path)")
        }
        return size.intValue
    }

    private static func megabytes(_ bytes: Int) -> String {
        "\((Double(bytes) / 1e5).rounded() / 10) MB (\(bytes) bytes)"
    }

    /// `--credvault PATH`, else `credvault` next to this executable.
    private static func locate(_ options: Options) -> String? {
        if let path = options.credvault { return path }
        let own = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let sibling = own.deletingLastPathComponent().appendingPathComponent("credvault").path
        return FileManager.default.isExecutableFile(atPath: sibling) ? sibling : nil
    }
}
