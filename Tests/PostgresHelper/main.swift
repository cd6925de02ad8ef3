// A helper process for the fleet store's multi-process tests (one process = one host of the
// fleet). Not part of the product. Every command opens the store first (CONNINFO, SCHEMA,
// KEYFILE as host $CREDVAULT_FLEET_HOST, default test-host) and prints "ready"; commands that
// race wait for a line on stdin.
//
//   writes CONNINFO SCHEMA KEYFILE INDEX COUNT
//       COUNT times: saves the shared credential "shared/counter" and its own "writer-INDEX/J";
//       prints "done".
//   take CONNINFO SCHEMA KEYFILE
//       waits for a line on stdin, takes "race/once"; prints "won VALUE" or "none".
//   hold-exclusive CONNINFO SCHEMA KEYFILE
//       inside withExclusiveAccess prints "holding", then holds the lock until its stdin ends
//       (or it is killed).
//
// Exit 3 with one line on stderr on failure.
import CredentialVault
import CredentialVaultPostgres
import Foundation

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(3)
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// The async open: top-level code picks the blocking overload even with `await`, which its
/// `noasync` mark refuses; inside an async function the async one wins.
func openStore(_ configuration: PostgresConfiguration, host: String, keyFile: URL) async throws -> PostgresStore {
    try await PostgresStore.open(configuration, host: host, secret: .keyFile(keyFile))
}

let args = Array(CommandLine.arguments.dropFirst())
guard args.count >= 4 else { fail("usage: credvault-pghelper COMMAND CONNINFO SCHEMA KEYFILE ...") }
var configuration = PostgresConfiguration(connectionString: args[1], schema: args[2])
// The host's memory of the store: its own directory when given (else the user's state directory).
if let directory = ProcessInfo.processInfo.environment["CREDVAULT_FLEET_STATE_DIR"] {
    configuration.stateDirectory = URL(fileURLWithPath: directory)
}
do {
    let host = ProcessInfo.processInfo.environment["CREDVAULT_FLEET_HOST"] ?? "test-host"
    let store = try await openStore(configuration, host: host, keyFile: URL(fileURLWithPath: args[3]))
    say("ready")
    switch (args[0], args.count) {
    case ("writes", 6):
        guard let index = Int(args[4]), let count = Int(args[5]) else { fail("writes: INDEX and COUNT are numbers") }
        for j in 0..<count {
            try store.synchronous.save(Data("\(index)-\(j)".utf8), for: CredentialKey(service: "shared", account: "counter"), options: .portable)
            try store.synchronous.save(Data("\(index)-\(j)".utf8), for: CredentialKey(service: "writer-\(index)", account: "\(j)"), options: .portable)
        }
        say("done")
    case ("take", 4):
        _ = readLine()
        if let value = try store.synchronous.take(CredentialKey(service: "race", account: "once")) {
            say("won \(String(decoding: value, as: UTF8.self))")
        } else {
            say("none")
        }
    case ("hold-exclusive", 4):
        try await store.withExclusiveAccess {
            say("holding")
            while readLine() != nil {}
        }
    default: fail("unknown helper command or wrong arguments: \(args[0])")
    }
} catch {
    fail("\(args[0]): \(error)")
}
