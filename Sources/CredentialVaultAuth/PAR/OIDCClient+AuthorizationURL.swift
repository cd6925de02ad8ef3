import Foundation

extension OIDCClient {
    /// The URL the browser is sent to for an authorization request with `parameters`: with PAR
    /// (as `configuration.pushedAuthorization` and the provider decide) the parameters are
    /// pushed and the URL carries only `client_id` and `request_uri` (RFC 9126 section 4);
    /// otherwise it carries them all.
    func authorizationURL(
        _ endpoint: URL, _ parameters: [(String, String)], metadata: ProviderMetadata
    ) async throws(AuthError) -> (url: URL, pushed: PushedRequest?) {
        var pushed: PushedRequest?
        var query = parameters
        if let parEndpoint = try configuration.pushedAuthorization.endpoint(in: metadata) {
            // RFC 9126 section 2.1: a pushed request must not itself carry a request_uri.
            guard !parameters.contains(where: { $0.0 == "request_uri" }) else {
                throw .invalidConfiguration("a pushed authorization request cannot carry a request_uri parameter")
            }
            let request = try await provider.pushAuthorizationRequest(parameters, to: parEndpoint, metadata: metadata)
            query = [("client_id", configuration.clientID), ("request_uri", request.requestURI)]
            pushed = request
        }
        guard let url = FormEncoding.url(endpoint, adding: query) else {
            throw .invalidConfiguration("cannot build the authorization URL")
        }
        return (url, pushed)
    }
}
