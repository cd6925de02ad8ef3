import Logging

/// The auth client's boundary to the application's log handler: every message and every
/// metadata value the auth client logs passes through `Redactor` before the application's
/// handler sees it, at every level (trace included), so that no token, code, verifier, secret or
/// password reaches a log line whatever handler the application bootstrapped.
struct RedactingLogHandler: LogHandler {
    /// The application's handler.
    var wrapped: any LogHandler

    var logLevel: Logger.Level {
        get { wrapped.logLevel }
        set { wrapped.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { wrapped.metadata }
        set { wrapped.metadata = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { wrapped.metadataProvider }
        set { wrapped.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { wrapped[metadataKey: key] }
        set { wrapped[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        var redacted = event
        redacted.message = "\(Redactor.redact(event.message.description))"
        redacted.metadata = event.metadata?.mapValues(Self.redact)
        wrapped.log(event: redacted)
    }

    private static func redact(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        switch value {
        case .string(let text): .string(Redactor.redact(text))
        case .stringConvertible(let item): .string(Redactor.redact(item.description))
        case .array(let items): .array(items.map(redact))
        case .dictionary(let items): .dictionary(items.mapValues(redact))
        }
    }
}

extension Logger {
    /// This logger with the auth client's redaction in front of its handler; what every auth
    /// type does with the logger it is given, once, where it is given.
    var redacting: Logger {
        if handler is RedactingLogHandler { return self }
        var copy = self
        copy.handler = RedactingLogHandler(wrapped: handler)
        return copy
    }

}
