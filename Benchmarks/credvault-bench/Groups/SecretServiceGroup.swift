/// Group 4b: the Secret Service backend next to bare libsecret calls (filled in once the
/// Secret Service backend is in main).
enum SecretServiceGroup {
    static let title = "Secret Service backend vs bare libsecret (held connection)"

    static func run(_ options: Options, _ reporter: Reporter) throws {
        reporter.begin(title)
        reporter.note("skipped: the Secret Service backend (SecretServiceStore) is not in this build yet")
        reporter.end()
    }
}
