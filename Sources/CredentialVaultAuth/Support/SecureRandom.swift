import CSodium
import Foundation

/// Random values and the encodings OAuth needs (libsodium's CSPRNG, SHA-256, base64url).
enum SecureRandom {
    private static let ready: Bool = sodium_init() >= 0

    /// `count` random bytes.
    static func bytes(_ count: Int) -> [UInt8] {
        precondition(ready, "libsodium failed to initialise (no random source?)")
        var buffer = [UInt8](repeating: 0, count: count)
        buffer.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, count) }
        return buffer
    }

    /// A base64url string of `byteCount` random bytes (256 bits by default).
    static func token(byteCount: Int = 32) -> String { OAuthBase64.urlEncode(bytes(byteCount)) }

    /// SHA-256 of the UTF-8 bytes of `text`.
    static func sha256(_ text: String) -> [UInt8] {
        precondition(ready, "libsodium failed to initialise")
        var digest = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        let input = Array(text.utf8)
        input.withUnsafeBufferPointer { inputBuffer in
            digest.withUnsafeMutableBufferPointer { out in
                _ = crypto_hash_sha256(out.baseAddress!, inputBuffer.baseAddress ?? UnsafePointer(out.baseAddress!), UInt64(input.count))
            }
        }
        return digest
    }
}

/// base64url without padding (RFC 4648 §5), as PKCE and JOSE use it.
enum OAuthBase64 {
    static func urlEncode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func urlDecode(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64.append("=") }
        return Data(base64Encoded: base64)
    }
}
