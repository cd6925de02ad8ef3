import COpenSSL
import CredentialVault

/// Reads a PEM private key into an OpenSSL key without OpenSSL's decoders: PKCS#8
/// (`PRIVATE KEY`: EC P-256, RSA, Ed25519), SEC1 (`EC PRIVATE KEY`) and PKCS#1
/// (`RSA PRIVATE KEY`). The DER and every private value stay in guarded memory until they
/// reach BIGNUMs flagged secure (or Ed25519's raw seed), all cleared when freed; OpenSSL's
/// PEM and ASN.1 decoders free the private OCTET STRINGs and INTEGERs they pass through
/// without clearing them, which left copies of the key in freed heap blocks.
enum PrivateKeyDER {
    // Object identifiers, encoded contents (X.690).
    private static let rsaEncryption: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01]  // 1.2.840.113549.1.1.1
    private static let ecPublicKey: [UInt8] = [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]  // 1.2.840.10045.2.1
    private static let prime256v1: [UInt8] = [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]  // 1.2.840.10045.3.1.7
    private static let ed25519: [UInt8] = [0x2B, 0x65, 0x70]  // 1.3.101.112

    private static let unreadable = JOSEError.invalidKey("not an unencrypted PEM private key or a private JWK")

    /// The key in the first PEM block of `text`; the caller owns (frees) it.
    static func key(fromPEM text: UnsafeRawBufferPointer) throws(JOSEError) -> OpaquePointer {
        guard let block = PEMBlock.first(in: text) else { throw unreadable }
        return try block.der.withUnsafeBytes { der throws(JOSEError) -> OpaquePointer in
            switch block.label {
            case "PRIVATE KEY": return try pkcs8(der)
            case "EC PRIVATE KEY": return try whole(der) { reader throws(JOSEError) in try sec1(&reader, curveKnown: false) }
            case "RSA PRIVATE KEY": return try whole(der) { reader throws(JOSEError) in try pkcs1(&reader) }
            case "ENCRYPTED PRIVATE KEY":
                throw .invalidKey("the PEM private key is encrypted: decrypt it first (openssl pkey -in KEY -out PLAIN)")
            default: throw unreadable
            }
        }
    }

    /// Parses `der` as one element and nothing after it.
    private static func whole(
        _ der: UnsafeRawBufferPointer, _ parse: (inout DERReader) throws(JOSEError) -> OpaquePointer
    ) throws(JOSEError) -> OpaquePointer {
        var outer = DERReader(der)
        guard var reader = outer.enter(.sequence), outer.isAtEnd else { throw unreadable }
        return try parse(&reader)
    }

    /// PKCS#8 (RFC 5208) or its version 2 (RFC 5958, with the public key).
    private static func pkcs8(_ der: UnsafeRawBufferPointer) throws(JOSEError) -> OpaquePointer {
        try whole(der) { (info) throws(JOSEError) -> OpaquePointer in
            // Version 0 (PKCS#8) or 1 (RFC 5958, which may add the public key).
            guard let version = info.read(.integer), version.count == 1, info.slice(version)[0] <= 1 else { throw unreadable }
            guard let algorithm = info.enter(.sequence), let privateRange = info.read(.octetString) else { throw unreadable }
            if info.nextTag == DERReader.Tag.context0.rawValue { _ = info.read(.context0) }  // attributes: unused
            let publicKey = info.nextTag == DERReader.Tag.context1.rawValue ? info.read(.context1) : nil
            guard info.isAtEnd else { throw unreadable }
            var inner = DERReader(info.slice(privateRange))
            // Each attempt reads from a copy: a reader advances past what it read, match or not.
            var asEd25519 = algorithm
            if asEd25519.expectObjectIdentifier(ed25519) {
                guard asEd25519.isAtEnd, let seed = inner.read(.octetString), seed.count == 32, inner.isAtEnd else { throw unreadable }
                guard let key = OpenSSLPrivateKeys.ed25519(seed: inner.slice(seed)) else { throw unreadable }
                if let publicKey {
                    // Version 2 carries the public key: it must be the seed's.
                    var bits = DERReader(info.slice(publicKey))
                    guard let value = bits.read(.bitString), value.count == 33, bits.isAtEnd,
                        OpenSSLPrivateKeys.rawPublicKey(key).map({ Array($0) }) == [UInt8](bits.slice(value).dropFirst()),
                        bits.slice(value)[0] == 0
                    else {
                        EVP_PKEY_free(key)
                        throw .invalidKey("the PKCS#8 key's public key is not its private key's")
                    }
                }
                return key
            }
            var curve = algorithm
            if curve.expectObjectIdentifier(ecPublicKey) {
                guard curve.expectObjectIdentifier(prime256v1), curve.isAtEnd else { throw .invalidKey("unsupported EC curve (P-256 only)") }
                guard var key = inner.enter(.sequence), inner.isAtEnd else { throw unreadable }
                return try sec1(&key, curveKnown: true)
            }
            var rsa = algorithm
            if rsa.expectObjectIdentifier(rsaEncryption) {
                // The parameters are NULL (or absent).
                if !rsa.isAtEnd { guard let null = rsa.read(.null), null.isEmpty, rsa.isAtEnd else { throw unreadable } }
                guard var key = inner.enter(.sequence), inner.isAtEnd else { throw unreadable }
                return try pkcs1(&key)
            }
            throw .invalidKey("unsupported key type (EC P-256, RSA or Ed25519)")
        }
    }

    /// SEC1 ECPrivateKey (RFC 5915): version 1, the private value, the curve (required unless
    /// the PKCS#8 wrapper named it) and, optionally, the public key (then checked against the
    /// private value).
    private static func sec1(_ key: inout DERReader, curveKnown: Bool) throws(JOSEError) -> OpaquePointer {
        guard key.expectInteger(1), let d = key.read(.octetString), (1...32).contains(d.count) else { throw unreadable }
        var named = curveKnown
        if key.nextTag == DERReader.Tag.context0.rawValue {
            guard var parameters = key.enter(.context0), parameters.expectObjectIdentifier(prime256v1), parameters.isAtEnd else {
                throw .invalidKey("unsupported EC curve (P-256 only)")
            }
            named = true
        }
        guard named else { throw .invalidKey("the EC private key does not name its curve") }
        var publicRange: Range<Int>?
        if key.nextTag == DERReader.Tag.context1.rawValue {
            guard var wrapper = key.enter(.context1), let bits = wrapper.read(.bitString), wrapper.isAtEnd, bits.count == 66,
                key.slice(bits)[0] == 0  // no unused bits
            else { throw unreadable }
            publicRange = (bits.lowerBound + 1)..<bits.upperBound
        }
        guard key.isAtEnd, let secret = OpenSSLPrivateKeys.secureBignum(key.slice(d)) else { throw unreadable }
        defer { BN_clear_free(secret) }
        // Without its public key (RFC 5915 makes it optional) the point is computed from the
        // private value: OpenSSL 3.0 does not derive it when building a key from parameters.
        let made: OpaquePointer?
        if let publicRange {
            made = OpenSSLPrivateKeys.ecP256(d: secret, publicPoint: key.slice(publicRange))
        } else if let point = OpenSSLPrivateKeys.p256PublicPoint(of: secret) {
            made = point.withUnsafeBytes { OpenSSLPrivateKeys.ecP256(d: secret, publicPoint: $0) }
        } else {
            made = nil
        }
        guard let made else { throw .invalidKey("the EC private key is not a valid P-256 key pair") }
        return made
    }

    /// PKCS#1 RSAPrivateKey (RFC 8017 appendix A.1.2), two primes only (version 0).
    private static func pkcs1(_ key: inout DERReader) throws(JOSEError) -> OpaquePointer {
        guard key.expectInteger(0) else { throw .invalidKey("unsupported RSA key (multi-prime)") }
        var numbers: [OpaquePointer] = []
        defer { numbers.forEach { BN_clear_free($0) } }
        // n, e, d, p, q, dp, dq, qi: the order of OpenSSLPrivateKeys.rsa.
        for _ in 0..<8 {
            guard let range = key.unsignedInteger(), range.count <= 1024, let number = OpenSSLPrivateKeys.secureBignum(key.slice(range)) else {
                throw unreadable
            }
            numbers.append(number)
        }
        guard key.isAtEnd else { throw unreadable }
        guard let made = OpenSSLPrivateKeys.rsa(numbers) else { throw .invalidKey("the RSA private key is not a valid key pair") }
        return made
    }
}
