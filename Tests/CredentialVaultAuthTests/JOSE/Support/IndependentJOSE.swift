import CredentialVaultTestSupport
import Foundation

/// An independent counterpart to this library's signing: keys made by the `openssl` command,
/// signatures checked by Python's `cryptography` package (a different implementation of the
/// JOSE encodings: base64url, r || s, PKCS#1 v1.5, Ed25519).
enum IndependentJOSE {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs a tool to its end; its stdout, or a failure with its stderr.
    @discardableResult
    static func run(_ path: String, _ arguments: [String], stdin: Data = Data()) throws -> String {
        let outcome = try CLIChild.run(path, arguments, stdin: stdin, timeout: 60)
        guard outcome.status == 0 else { throw Failure(description: "\(path) \(arguments.first ?? ""): \(outcome.stderr)") }
        return outcome.stdoutText
    }

    /// A new private key in PEM made by `openssl genpkey`: `algorithm` is EC (P-256), EC-P384,
    /// RSA (2048 bits), RSA-1024 or ED25519. Written to `file` (0600).
    static func openSSLKey(_ algorithm: String, in directory: TempDirectory, _ name: String, extra: [String] = []) throws -> URL {
        let file = directory.path(name)
        let options: [String] = switch algorithm {
        case "EC": ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"]
        case "EC-P384": ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"]
        case "RSA": ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"]
        case "RSA-1024": ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024"]
        default: ["-algorithm", algorithm]
        }
        try run("/usr/bin/openssl", ["genpkey"] + options + extra + ["-out", file.path])
        chmod(file.path, 0o600)
        return file
    }

    /// Verifies a compact JWS with the public half of the PEM private key `keyFile` (or, for
    /// HS256, the shared `secret`) and returns its header and claims as JSON objects.
    static func verify(_ token: String, keyFile: URL? = nil, secret: String? = nil) throws -> (header: [String: Any], claims: [String: Any]) {
        let script = #"""
            import sys, json, base64, hmac, hashlib
            from cryptography.hazmat.primitives import serialization, hashes
            from cryptography.hazmat.primitives.asymmetric import ec, padding
            from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
            def b64(s):
                assert '=' not in s and '+' not in s and '/' not in s
                return base64.urlsafe_b64decode(s + '=' * (-len(s) % 4))
            token, key, secret = sys.stdin.read().split('\n')[:3]
            h, p, s = token.split('.')
            header, sig, msg = json.loads(b64(h)), b64(s), (h + '.' + p).encode()
            alg = header['alg']
            if alg == 'HS256':
                assert hmac.compare_digest(sig, hmac.new(secret.encode(), msg, hashlib.sha256).digest()), 'bad HMAC'
            else:
                public = serialization.load_pem_private_key(open(key, 'rb').read(), None).public_key()
                if alg == 'ES256':
                    assert len(sig) == 64, 'ES256 signature is not 64 bytes'
                    public.verify(encode_dss_signature(int.from_bytes(sig[:32], 'big'), int.from_bytes(sig[32:], 'big')), msg, ec.ECDSA(hashes.SHA256()))
                elif alg == 'RS256':
                    public.verify(sig, msg, padding.PKCS1v15(), hashes.SHA256())
                elif alg == 'EdDSA':
                    public.verify(sig, msg)
                else:
                    raise SystemExit('unexpected alg ' + alg)
            print(json.dumps({'header': header, 'claims': json.loads(b64(p))}))
            """#
        let input = Data("\(token)\n\(keyFile?.path ?? "")\n\(secret ?? "")\n".utf8)
        let output = try run("/usr/bin/python3", ["-c", script], stdin: input)
        guard let object = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any],
            let header = object["header"] as? [String: Any], let claims = object["claims"] as? [String: Any]
        else { throw Failure(description: "unexpected verifier output") }
        return (header, claims)
    }

    /// The private JWK of the PEM key `keyFile`, written by Python's `cryptography`.
    static func privateJWK(of keyFile: URL) throws -> String {
        let script = #"""
            import sys, json, base64
            from cryptography.hazmat.primitives import serialization
            from cryptography.hazmat.primitives.asymmetric import ec, rsa, ed25519
            def b64(b): return base64.urlsafe_b64encode(b).rstrip(b'=').decode()
            def n(i, size=None): return b64(i.to_bytes(size or (i.bit_length() + 7) // 8, 'big'))
            key = serialization.load_pem_private_key(open(sys.argv[1], 'rb').read(), None)
            if isinstance(key, ec.EllipticCurvePrivateKey):
                pn = key.private_numbers()
                jwk = {'kty': 'EC', 'crv': 'P-256', 'x': n(pn.public_numbers.x, 32), 'y': n(pn.public_numbers.y, 32), 'd': n(pn.private_value, 32)}
            elif isinstance(key, rsa.RSAPrivateKey):
                pn = key.private_numbers()
                jwk = {'kty': 'RSA', 'n': n(pn.public_numbers.n), 'e': n(pn.public_numbers.e), 'd': n(pn.d), 'p': n(pn.p), 'q': n(pn.q), 'dp': n(pn.dmp1), 'dq': n(pn.dmq1), 'qi': n(pn.iqmp)}
            else:
                raw = lambda k, f: k.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()) if f else k.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
                jwk = {'kty': 'OKP', 'crv': 'Ed25519', 'x': b64(raw(key.public_key(), False)), 'd': b64(raw(key, True))}
            print(json.dumps(jwk))
            """#
        return try run("/usr/bin/python3", ["-c", script, keyFile.path])
    }
}
