import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVaultCLI

/// `serve-credentials --map` names credentials as `exec` does (`CredentialKeyName`): split at
/// the last `/`, a `/` in the account written `%2F`. A git helper's credential (the service
/// `git:https://host`, the account `alice`) is served by the real server.
extension ServeCredentialsTests {
    @Test func aGitHelpersCredentialAndAnEscapedAccountAreServed() throws {
        try store("git:https://git.example.com", "alice", Data("git-token".utf8))
        try store("host.example", "team/bot", Data("bot-token".utf8))
        let server = try serve(["git=git:https://git.example.com/alice", "bot=host.example/team%2Fbot"])
        #expect(AbstractClient.request(socket, from: .systemd(unit: "any.service", credential: "git")) == Data("git-token".utf8))
        #expect(AbstractClient.request(socket, from: .systemd(unit: "any.service", credential: "bot")) == Data("bot-token".utf8))
        let (status, log) = server.stop()
        #expect(status == 0)
        #expect(!log.contains("warning: no credential"), "both mapped keys are found in the store: \(log)")
    }

    @Test func mapAndExecReadTheSameNameAsTheSameKey() throws {
        for name in ["git:https://git.example.com/alice", "host.example/team%2Fbot", "a%25b/c"] {
            let mapped = try CredentialMap(["x=\(name)"]).entries.first?.key
            let referenced = try CredentialReference(parsing: "X=\(name)", option: "env").key
            #expect(mapped == referenced, "\(name)")
        }
        #expect(throws: UsageError.self) { try CredentialMap(["x=a%2/b"]) }
    }
}
