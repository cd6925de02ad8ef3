import CTSS2Esys

/// PCRs of the SHA-256 bank a sealed secret is bound to (indices 0...23, sorted, unique).
struct PCRSelection: Sendable, Equatable {
    let indices: [UInt8]

    /// `nil` unless every index is in 0...23; duplicates are merged and the order sorted.
    init?(_ indices: [Int]) {
        guard indices.allSatisfy({ (0...23).contains($0) }) else { return nil }
        self.indices = Array(Set(indices)).sorted().map { UInt8($0) }
    }

    /// The selection as ESYS takes it: one bank, three select bytes (24 PCRs).
    var tpml: TPML_PCR_SELECTION {
        var selection = TPML_PCR_SELECTION()
        selection.count = 1
        selection.pcrSelections.0.hash = TPM2_ALG_SHA256
        selection.pcrSelections.0.sizeofSelect = 3
        withUnsafeMutableBytes(of: &selection.pcrSelections.0.pcrSelect) { bits in
            for index in indices { bits[Int(index) / 8] |= UInt8(1 << (Int(index) % 8)) }
        }
        return selection
    }

    /// `sha256:7,16`, for messages.
    var description: String { "sha256:" + indices.map { String($0) }.joined(separator: ",") }
}
