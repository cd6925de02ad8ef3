import Foundation
import Synchronization
import CredentialVaultTestSupport
import Testing

@testable import CredentialVaultAuth

@Suite("browser openers", .ownThread)
struct BrowserOpenerTests {
    struct AppError: Error {}

    @Test("a closure opener takes an ordinary throwing closure; its errors never carry the URL's query")
    func closureOpener() async throws {
        let opened = Mutex<URL?>(nil)
        // No `throws(AuthError)` annotation: the closure throws the application's own errors.
        let working = ClosureBrowserOpener { url in
            if url.host == "fail.example" { throw AppError() }
            opened.withLock { $0 = url }
        }
        await #expect(throws: Never.self) { try await working.open(URL(string: "https://ok.example/a")!) }
        #expect(opened.withLock { $0 }?.host == "ok.example")
        // The application's error is reported by its type, never by its text or the URL (its query has the state).
        await #expect(throws: AuthError.unsupported("the application's browser opener failed (AppError): open the URL by hand")) {
            try await working.open(URL(string: "https://fail.example/a?state=s3cr3t")!)
        }
        let passing = ClosureBrowserOpener { _ in throw AuthError.accessDenied }
        await #expect(throws: AuthError.accessDenied) { try await passing.open(URL(string: "https://x.example")!) }
    }
}
