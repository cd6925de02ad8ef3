// libFuzzer target for what git and docker send the credential helpers, linked by
// scripts/fuzz/build.sh against the command-line module built with -enable-testing. Each input
// is read as:
//   1. docker's `store` JSON (`DockerCredentials(decodingAsGoDoes:)`, which bounds the nesting
//      before its JSON decode);
//   2. a git credential request (`key=value` lines), and a stored git credential record.
// Errors and rejections are fine; a crash, a trap, a leak or a hang is a finding.
@testable import CredentialVaultCLI
import Foundation

private let seeds = [
    #"{"ServerURL":"https://r.example.com/v1/","Username":"u","Secret":"s"}"#,
    #"{"ServerURL":"a","serverurl":"b","ſecret":"x","Other":{"Secret":[1,{"a":null}]},"Username":null}"#,
    "protocol=https\nhost=example.com\nusername=alice\npassword=secret\npassword_expiry_utc=1700000000\n\n",
    "protocol=https\r\nhost=example.com:8443\r\npath=repo.git\r\ncapability[]=authtype\r\noauth_refresh_token=rt\r\n",
    "\u{0}git-credential\npassword=p\npassword_expiry_utc=1\n",
]

@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> CInt {
    writeSeedsIfAsked(seeds.enumerated().map { ("input-\($0)", $1) })
    // The statics the decoders make lazily, made before the first input, so that no input's
    // leak check counts them.
    _ = GitCredentialRecord(decoding: Data())
    _ = try? GitCredentialRequest(parsing: Data("protocol=https\n\n".utf8))
    _ = DockerCredentials(decodingAsGoDoes: Data(seeds[0].utf8))
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(UnsafeBufferPointer(start: data, count: size))
    _ = DockerCredentials(decodingAsGoDoes: bytes)
    _ = try? GitCredentialRequest(parsing: bytes)
    _ = GitCredentialRecord(decoding: bytes)
    return 0
}
