#if Configuration
import Configuration
import CredentialVault

/// The typed contents of a credential's bytes, made only when a reader asks, in the type it asks
/// for (swift-configuration leaves the conversion to the provider).
///
/// - `.bytes`: the bytes as stored; `.byteChunkArray`: one chunk, the bytes as stored.
/// - `.string`: the bytes as UTF-8 text, exactly (nothing trimmed: a secret may end with a
///   space); bytes that are not UTF-8 throw `invalidArgument`, never text with replacement
///   characters.
/// - `.int`, `.double`, `.bool`: the text parsed as Swift's `Int(_:)`, `Double(_:)` and
///   `Bool(_:)` (`"true"` / `"false"`) do, whole (no surrounding white space).
/// - Arrays of them: the text split on the separator, each element trimmed of white space, as
///   swift-configuration's `DirectoryFilesProvider` does.
///
/// A refusal is `invalidArgument` whose message names the type only: never the value, nor the
/// credential.
enum SecretValueDecoding {
    static func content(of secret: SecureBytes, as type: ConfigType, arraySeparator: Character) throws(CredentialVaultError) -> ConfigContent {
        switch type {
        case .bytes: return .bytes(bytes(secret))
        case .byteChunkArray: return .byteChunkArray([bytes(secret)])
        case .string: return .string(try text(secret))
        case .int: return .int(try parse(try text(secret), Int.init, "an integer"))
        case .double: return .double(try parse(try text(secret), Double.init, "a number"))
        case .bool: return .bool(try parse(try text(secret), Bool.init, "true or false"))
        case .stringArray: return .stringArray(elements(try text(secret), arraySeparator))
        case .intArray: return .intArray(try elements(try text(secret), arraySeparator).map { e throws(CredentialVaultError) in try parse(e, Int.init, "integers") })
        case .doubleArray:
            return .doubleArray(try elements(try text(secret), arraySeparator).map { e throws(CredentialVaultError) in try parse(e, Double.init, "numbers") })
        case .boolArray:
            return .boolArray(try elements(try text(secret), arraySeparator).map { e throws(CredentialVaultError) in try parse(e, Bool.init, "true or false values") })
        }
    }

    private static func bytes(_ secret: SecureBytes) -> [UInt8] {
        secret.withUnsafeBytes { Array($0) }
    }

    private static func text(_ secret: SecureBytes) throws(CredentialVaultError) -> String {
        let text = secret.withUnsafeBytes { String(validating: $0.bindMemory(to: UInt8.self), as: UTF8.self) }
        guard let text else { throw .invalidArgument("the credential's value is not UTF-8 text: read it as bytes") }
        return text
    }

    private static func parse<T>(_ text: some StringProtocol, _ make: (String) -> T?, _ what: String) throws(CredentialVaultError) -> T {
        guard let value = make(String(text)) else { throw .invalidArgument("the credential's value is not \(what)") }
        return value
    }

    private static func elements(_ text: String, _ separator: Character) -> [String] {
        text.split(separator: separator).map { element in
            String(element.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
        }
    }
}
#endif
