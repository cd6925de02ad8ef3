import Foundation

/// What the session has learned about its refresh token chain, stored in the session record
/// so that every process sharing the session decides alike (see `ResourceChainRules`).
struct RefreshChain: Sendable, Hashable, Codable {
    /// Whether the provider answers a refresh with a new refresh token (`nil`: no refresh yet).
    var rotates: Bool?
    /// The resource indicator of the refresh whose answer rotated the refresh token now held:
    /// that token may be valid for this resource only (glewlwyd 2.7.5 narrows it so).
    var narrowedTo: String?

    init(rotates: Bool? = nil, narrowedTo: String? = nil) {
        self.rotates = rotates
        self.narrowedTo = narrowedTo
    }

    private enum CodingKeys: String, CodingKey { case rotates, narrowedTo }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        rotates = try container.decodeIfPresent(Bool.self, forKey: .rotates)
        narrowedTo = try container.decodeIfPresent(String.self, forKey: .narrowedTo)
        // Written only as an indicator; anything else did not come from this library.
        if let narrowedTo, !ResourceURI.isIndicator(narrowedTo) {
            throw DecodingError.dataCorruptedError(forKey: .narrowedTo, in: container, debugDescription: "not a resource indicator")
        }
    }
}
