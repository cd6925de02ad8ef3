import Foundation

// credvault-bench: seal/open, unlock, the sealed-file and in-memory backends, the Secret
// Service backend and the whole CLI process, each next to its raw counterpart or physical
// floor measured in the same run. See docs/BENCHMARKS.md.

let options = Options.parse(Array(CommandLine.arguments.dropFirst()))
let jsonCopy: FileHandle? = options.jsonOut.flatMap { path in
    FileManager.default.createFile(atPath: path, contents: nil) ? FileHandle(forWritingAtPath: path) : nil
}
if let path = options.jsonOut, jsonCopy == nil {
    FileHandle.standardError.write(Data("credvault-bench: cannot write \(path)\n".utf8))
    exit(2)
}
let reporter = Reporter(mode: options.json ? .jsonLines : .table, jsonCopy: jsonCopy)

func runAll(_ options: Options, _ reporter: Reporter, _ workspace: Workspace) async throws {
    reporter.text(MachineInfo.header(options: options, directory: workspace.root))
    reporter.progress("credvault-bench: vaults in \(workspace.root.path)\(options.quick ? " (quick)" : "")")
    if options.groups.contains(.seal) { try SealGroup.run(options, reporter) }
    if options.groups.contains(.unlock) { try UnlockGroup.run(options, reporter, workspace) }
    if options.groups.contains(.file) { try SealedFileGroup.run(options, reporter, workspace) }
    // A nonisolated async function: it runs on the cooperative pool, not the main actor (see `AsyncTimer`).
    if options.groups.contains(.async) { try await AsyncGroup.run(options, reporter, workspace) }
    if options.groups.contains(.waits) { try await WaitsGroup.run(options, reporter, workspace) }
    if options.groups.contains(.custody) { try CustodyGroup.run(options, reporter, workspace) }
    if options.groups.contains(.memory) { try MemoryGroup.run(options, reporter) }
    if options.groups.contains(.secretService) { try SecretServiceGroup.run(options, reporter) }
    if options.groups.contains(.cli) { try CLIGroup.run(options, reporter, workspace) }
    if options.groups.contains(.tpm) { try TPMGroup.run(options, reporter, workspace) }
    if options.groups.contains(.postgres) {
        try PostgresGroup.run(options, reporter, workspace)
        try PostgresLoadGroup.run(options, reporter, workspace)
    }
    reporter.finish()
    reporter.text("\nload average at the end: \(MachineInfo.loadAverage)")
}

do {
    let workspace = try Workspace(base: options.directory)
    defer { workspace.remove() }
    try await runAll(options, reporter, workspace)
} catch {
    FileHandle.standardError.write(Data("credvault-bench: \(error)\n".utf8))
    exit(1)
}
