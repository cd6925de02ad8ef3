/// Random tokens for `state` and `nonce` (libsodium's CSPRNG, base64url).
enum SecureRandom {
    /// A base64url string of `byteCount` random bytes (256 bits by default).
    static func token(byteCount: Int = 32) -> String { Base64URL.encode(SodiumRuntime.randomBytes(byteCount)) }
}
