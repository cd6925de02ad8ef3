import Foundation

/// Opens a URL in the user's browser. The default is `SystemBrowserOpener` (`xdg-open`);
/// tests and applications with their own UI inject another.
public protocol BrowserOpener: Sendable {
    /// Opens `url` and returns once the browser was asked to show it (not when the user is done).
    func open(_ url: URL) async throws(AuthError)
}

/// Opens URLs with a desktop command, `xdg-open` by default. The URL is passed as one
/// argument (no shell), so other local users can read it in `/proc/PID/cmdline`: the loopback
/// sign-ins hand it a one-time start URL (`LoopbackListener.startURL(redirectingTo:)`), never
/// the authorization URL with its `state` and PKCE challenge.
public struct SystemBrowserOpener: BrowserOpener {
    /// The command, looked up in `PATH`.
    public var command: String
    /// How long to wait for the command to exit.
    public var timeout: Duration

    /// Creates an opener for `command` (default `xdg-open`).
    public init(command: String = "xdg-open", timeout: Duration = .seconds(15)) {
        self.command = command
        self.timeout = timeout
    }

    /// Runs `command URL`; throws `unsupported` when it cannot run or fails.
    public func open(_ url: URL) async throws(AuthError) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [command, url.absoluteString]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let command = self.command
        do {
            let status: Int32 = try await Deadline.run(timeout) {
                try await withCheckedThrowingContinuation { continuation in
                    process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
                    do { try process.run() } catch {
                        process.terminationHandler = nil
                        continuation.resume(throwing: AuthError.unsupported("cannot run \(command)"))
                    }
                }
            }
            guard status == 0 else { throw AuthError.unsupported("\(command) exited with status \(status): open the URL by hand") }
        } catch let error as AuthError {
            if case .timedOut = error, process.isRunning { process.terminate() }
            throw error
        } catch {
            throw .unsupported("cannot run \(command)")
        }
    }
}

/// A `BrowserOpener` backed by a closure (an application's own browser UI, or a test).
///
/// The closure is an ordinary throwing one: it may throw any error, no annotation needed.
/// An `AuthError` it throws passes through; a `CancellationError` becomes `.cancelled`; any
/// other error becomes `.unsupported` naming only its type (its description could repeat
/// the URL, whose query a log must not show).
public struct ClosureBrowserOpener: BrowserOpener {
    private let handler: @Sendable (URL) async throws -> Void

    /// Wraps `handler`.
    public init(_ handler: @escaping @Sendable (URL) async throws -> Void) { self.handler = handler }

    /// Calls the closure.
    public func open(_ url: URL) async throws(AuthError) {
        do {
            try await handler(url)
        } catch let error as AuthError {
            throw error
        } catch is CancellationError {
            throw .cancelled
        } catch {
            throw .unsupported("the application's browser opener failed (\(type(of: error))): open the URL by hand")
        }
    }
}
