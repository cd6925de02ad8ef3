// libFuzzer target for libsecret's keyring file parser (CredentialVaultSecretService's
// KeyringFile/Format), linked by scripts/fuzz/build.sh. Each input is tried three ways:
//   1. as a whole keyring file: header, version, the GVariant through GLib in untrusted mode,
//      every length check; when it parses, opened with a fixed key (the key check over the
//      items' MACs) and every item verified and decrypted;
//   2. as an item's plaintext GVariant `(a{ss}sttay)`, read directly;
//   3. as an item's plaintext encrypted and authenticated with the fixed key, so that the
//      decryption, the padding check, the item parser and the attribute check are reached
//      past the MAC.
// Any error is fine; a crash, a trap, a GLib assertion, a leak or a hang is a finding. The key
// is fixed rather than derived (a PBKDF2 of 100,000 iterations per input would be a slow input,
// not a finding; the iteration bounds are checked by every input that parses).
@testable import CredentialVault
@testable import CredentialVaultSecretService
import Foundation

#if canImport(Glibc)
import Glibc
#endif

private let key = KeyringKey(
    bytes: SecureBytes(copying: [UInt8](repeating: 0x5A, count: KeyringFileLayout.keySize)), salt: [UInt8](repeating: 1, count: 32),
    iterations: KeyringFileLayout.iterations)

private func asKeyringFile(_ bytes: [UInt8]) {
    guard let contents = try? KeyringFileContents.parse(bytes), let keyring = try? OpenedKeyring(contents, key: key) else { return }
    for index in contents.items.indices {
        guard var item = try? keyring.decrypt(index) else { continue }
        item.wipeSecret()
    }
    _ = try? keyring.indices(matching: ["service": "fuzz"])
}

private func asItemPlaintext(_ bytes: [UInt8]) {
    _ = bytes.withUnsafeBytes { try? KeyringItem.decode($0) }
}

private func asSealedItemPlaintext(_ bytes: [UInt8]) {
    let iv = [UInt8](repeating: 3, count: KeyringFileLayout.blockSize)
    guard var blob = try? bytes.withRawBytes({ (plaintext) throws(CredentialVaultError) in try ItemCipher.encrypt(plaintext, key: key, iv: iv) })
    else { return }
    blob += iv
    guard let mac = try? blob.withRawBytes({ (authenticated) throws(CredentialVaultError) in try KeyringMAC.compute(authenticated, key: key) })
    else { return }
    _ = try? ItemSealing.open(EncryptedItem(hashedAttributes: [], blob: blob + mac), key: key)
}

/// Seeds: a file the library writes with the fixed key (two items, one with oo7's content
/// type), an item's plaintext, and a file cut after its header.
private func writeSeeds(to directory: String) {
    var contents = KeyringFileContents(salt: key.salt, iterations: key.iterations, modified: 1_700_000_000, usage: 2, items: [])
    let items = [
        KeyringItem(
            attributes: ["service": "api.example.com", "username": "alice", "xdg:schema": "org.credentialvault.Credential"],
            label: "alice on api.example.com", created: 1_700_000_000, modified: 1_700_000_001, secret: Data("s3cret".utf8)),
        KeyringItem(
            attributes: ["service": "other", "username": "bob", "xdg:content-type": "text/plain"], label: "bob", created: 1, modified: 2,
            secret: Data([0, 0xFF, 0x10])),
    ]
    for item in items { contents.items.append(try! ItemSealing.seal(item, key: key)) }
    let file = contents.serialized()
    let (plaintext, count) = items[0].encoded()
    let seeds: [(String, [UInt8])] = [
        ("two-items.keyring", file), ("item-plaintext", plaintext.withUnsafeBytes { Array($0[..<count]) }),
        ("header-only.keyring", Array(file.prefix(KeyringFileLayout.prefixCount))),
    ]
    for (name, bytes) in seeds { _ = FileManager.default.createFile(atPath: "\(directory)/\(name)", contents: Data(bytes)) }
    _exit(0)  // not exit(): LeakSanitizer would count what is still in scope
}

@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    if let directory = ProcessInfo.processInfo.environment["CREDVAULT_FUZZ_SEEDS"] { writeSeeds(to: directory) }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    asKeyringFile(bytes)
    asItemPlaintext(bytes)
    asSealedItemPlaintext(bytes)
    return 0
}
