import Foundation
import CredentialVaultTestSupport
import Testing

/// No output error crashes a command, and `lookup --take` deletes only what it wrote: stdout to `/dev/full`, closed, or a pipe whose reader has gone gives exit
/// code 3 with one line on stderr, never a signal; a value that could not be written stays
/// stored; concurrent takers in separate processes never both get it.
@Suite(.ownThread) final class CLIOutputFailureTests {
    let dir = TempDirectory()
    static let failingOutputs: [CLIChild.Output] = [.devFull, .closed, .brokenPipe]

    func credvault(_ arguments: [String], stdin: Data = Data(), stdout: CLIChild.Output = .pipe) throws -> CLIChild.Outcome {
        try CLIChild.run(arguments, environment: CLIChild.environment(dir), stdin: stdin, stdout: stdout)
    }

    func expectOutputFailure(_ outcome: CLIChild.Outcome, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(outcome.signal == nil, "\(what): killed by signal \(outcome.signal ?? 0)", sourceLocation: sourceLocation)
        #expect(outcome.status == 3, "\(what): exit \(outcome.status) \(outcome.stderr)", sourceLocation: sourceLocation)
        #expect(outcome.stderr.contains("cannot write to stdout"), "\(what): \(outcome.stderr)", sourceLocation: sourceLocation)
    }

    @Test(arguments: failingOutputs)
    func takeKeepsTheValueWhenStdoutFails(output: CLIChild.Output) throws {
        let value = Data("single-use \(output)".utf8)
        #expect(try credvault(["store", "svc", "once", "--ttl", "600"], stdin: value).status == 0)
        #expect(try credvault(["store", "svc", "kept"], stdin: value).status == 0)
        expectOutputFailure(try credvault(["lookup", "svc", "once", "--take"], stdout: output), "lookup --take to \(output)")
        expectOutputFailure(try credvault(["lookup", "svc", "kept", "--take"], stdout: output), "lookup --take to \(output)")
        expectOutputFailure(try credvault(["lookup", "svc", "kept"], stdout: output), "lookup to \(output)")
        // Nothing was lost: the value is still there, and a working stdout takes it.
        let taken = try credvault(["lookup", "svc", "once", "--take"])
        #expect(taken.status == 0 && taken.stdout == value, "the ephemeral value survived: \(taken.stderr)")
        #expect(try credvault(["lookup", "svc", "once"]).status == 1, "then it is gone")
        #expect(try credvault(["lookup", "svc", "kept", "--take"]).stdout == value, "the persistent value survived")
    }

    @Test(arguments: failingOutputs)
    func everyCommandThatPrintsFailsCleanly(output: CLIChild.Output) throws {
        #expect(try credvault(["store", "svc", "acct"], stdin: Data("v".utf8)).status == 0)
        for arguments in [["list"], ["list", "--json"], ["info"], ["info", "--json"], ["--help"], ["store", "--help"], ["lookup", "-h"]] {
            expectOutputFailure(try credvault(arguments, stdout: output), "\(arguments) to \(output)")
        }
    }

    @Test func concurrentTakersInSeparateProcessesNeverBothGetTheValue() throws {
        for round in 0..<3 {
            let value = Data("round \(round)".utf8)
            #expect(try credvault(["store", "svc", "race", "--ttl", "600"], stdin: value).status == 0)
            let outcomes = Outcomes(count: 6)
            let environment = CLIChild.environment(dir)
            DispatchQueue.concurrentPerform(iterations: 6) { i in
                outcomes.set(i, try? CLIChild.run(["lookup", "svc", "race", "--take"], environment: environment))
            }
            let all = outcomes.all.compactMap { $0 }
            #expect(all.count == 6)
            let winners = all.filter { $0.status == 0 }
            #expect(winners.count == 1, "round \(round): \(all.map { "\($0.status) \($0.stderr)" })")
            #expect(winners.first?.stdout == value)
            #expect(all.allSatisfy { $0.status == 0 || $0.status == 1 }, "the others find nothing: \(all.map(\.status))")
        }
    }

    @Test func takeIntoAFileWritesTheExactBytes() throws {
        let value = Data([0, 0xFF, 0x0A, 0x41])
        #expect(try credvault(["store", "svc", "file"], stdin: value).status == 0)
        let path = dir.path("out").path
        let outcome = try CLIChild.run(
            ["-c", "exec \"$0\" lookup svc file --take > \"$1\"", BuiltProducts.credvault.path, path],
            executable: URL(fileURLWithPath: "/bin/sh"), environment: CLIChild.environment(dir))
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(FileManager.default.contents(atPath: path) == value)
        #expect(try credvault(["lookup", "svc", "file"]).status == 1)
    }
}

/// Results collected from concurrent threads.
final class Outcomes: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [CLIChild.Outcome?]
    init(count: Int) { storage = Array(repeating: nil, count: count) }
    func set(_ i: Int, _ outcome: CLIChild.Outcome?) { lock.withLock { storage[i] = outcome } }
    var all: [CLIChild.Outcome?] { lock.withLock { storage } }
}
