import Foundation

/// Paths of the executables built beside the test bundle.
package enum BuiltProducts {
    package static var directory: URL {
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        while url.path != "/" && !FileManager.default.fileExists(atPath: url.appendingPathComponent("credvault").path) {
            url.deleteLastPathComponent()
        }
        return url
    }
    package static var credvault: URL { directory.appendingPathComponent("credvault") }
    package static var full: URL { directory.appendingPathComponent("credvault-full") }
    package static var helper: URL { directory.appendingPathComponent("credvault-testhelper") }
    package static var tpmHelper: URL { directory.appendingPathComponent("credvault-tpm-helper") }
    package static var postgresHelper: URL { directory.appendingPathComponent("credvault-pghelper") }
    package static var secretServiceProbe: URL { directory.appendingPathComponent("secret-service-probe") }
}
