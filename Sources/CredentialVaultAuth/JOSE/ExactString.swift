/// Byte-exact string comparison.
///
/// Swift's `==` on `String` compares by Unicode canonical equivalence, so for example
/// "ES256K" spelled with U+212A KELVIN SIGN equals the ASCII spelling. Identifiers in JOSE
/// (`iss`, `aud`, `azp`, `kid`, `alg`) are compared as exact code-point sequences
/// (RFC 7519 section 2, "StringOrURI" comparison), so this compares the UTF-8 bytes.
@inline(__always)
func exactlyEqual(_ a: String, _ b: String) -> Bool {
    a.utf8.elementsEqual(b.utf8)
}
