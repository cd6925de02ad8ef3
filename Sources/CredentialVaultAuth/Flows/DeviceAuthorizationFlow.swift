import Logging
import CredentialVault
import Foundation

extension OIDCClient {
    /// The RFC 8628 grant type.
    static let deviceCodeGrant = "urn:ietf:params:oauth:grant-type:device_code"

    /// Starts the device authorization grant (for headless machines and SSH sessions).
    public func startDeviceAuthorization(scopes: [String]? = nil) async throws(AuthError) -> DeviceAuthorization {
        let metadata = try await provider.metadata()
        guard let endpoint = metadata.deviceAuthorizationEndpoint else {
            throw .unsupported("the provider has no device authorization endpoint")
        }
        let scopes = scopes ?? configuration.scopes
        var form = [("scope", scopes.joined(separator: " "))]
        // RFC 9449 does not define DPoP here; `dpop_jkt` (glewlwyd binds the device code with
        // it, others ignore an unknown parameter) and the proofs at polling do the binding.
        let dpop = configuration.dpop ? try DPoPProver.newKey() : nil
        if let dpop { form.append(("dpop_jkt", dpop.key.thumbprint)) }
        form += try configuration.resourceParameters()  // RFC 8707
        var headers: [String: String] = [:]
        try configuration.clientAuthentication.apply(
            clientID: configuration.clientID, endpoint: endpoint, metadata: metadata, now: clock.now(), form: &form, headers: &headers)
        let response = try await provider.http.postForm(endpoint, form, headers: headers)
        guard response.status == 200 else {
            throw OAuthEndpointClient.failure(
                response, grant: nil, confidential: configuration.clientAuthentication.isConfidential,
                bare400IsInvalidGrant: false)
        }
        let decoded: DeviceAuthorizationResponse
        do { decoded = try OutsideJSON.decode(DeviceAuthorizationResponse.self, from: response.body) } catch {
            throw (error as? AuthError) ?? .invalidResponse("the device authorization response is not the expected JSON")
        }
        guard let page = (decoded.verificationURI ?? decoded.verificationURL).flatMap(URL.init(string:)) else {
            throw .invalidResponse("the device authorization response has no verification URI")
        }
        logger.info("device authorization started; waiting for the user at \(Redactor.describe(page))", metadata: ["category": "device"])
        return DeviceAuthorization(
            userCode: decoded.userCode, verificationURI: page,
            verificationURIComplete: decoded.verificationURIComplete.flatMap(URL.init(string:)),
            expiresAt: clock.now().addingTimeInterval(decoded.expiresIn), interval: decoded.interval,
            deviceCode: decoded.deviceCode, requestsOpenID: scopes.contains("openid"), dpopKey: dpop?.pem)
    }

    /// Polls the token endpoint until the user approved (the session is stored and returned),
    /// denied (`accessDenied`) or the code expired (`authorizationExpired`). Honours the
    /// interval, adds 5 s on every `slow_down`, and backs off on transient failures.
    @discardableResult
    public func completeDeviceAuthorization(_ authorization: DeviceAuthorization) async throws(AuthError) -> AuthSession {
        try await pollDeviceAuthorization(authorization) { try await Task.sleep(for: $0) }
    }

    /// Starts the device grant, hands the user code to `prompt` (print it, show a QR code),
    /// and waits for the user.
    @discardableResult
    public func signInWithDevice(
        scopes: [String]? = nil, prompt: @Sendable (DeviceAuthorization) async -> Void
    ) async throws(AuthError) -> AuthSession {
        let authorization = try await startDeviceAuthorization(scopes: scopes)
        await prompt(authorization)
        return try await completeDeviceAuthorization(authorization)
    }

    /// The polling loop; `sleep` is injectable for tests.
    func pollDeviceAuthorization(
        _ authorization: DeviceAuthorization, sleep: @Sendable (Duration) async throws -> Void
    ) async throws(AuthError) -> AuthSession {
        var interval = authorization.interval
        var transientFailures = 0
        let dpopKey = try authorization.dpopKey.map { (pem) throws(AuthError) in try DPoPProver.key(stored: pem) }
        while true {
            do { try await sleep(interval) } catch { throw .cancelled }
            guard clock.now() < authorization.expiresAt else { throw .authorizationExpired }
            do {
                let response = try await provider.token(
                    grant: Self.deviceCodeGrant, [("device_code", authorization.deviceCode)] + (try configuration.sessionResourceParameter()),
                    dpopKey: dpopKey)
                let session = try await provider.session(
                    from: response, nonce: nil, requireIDToken: authorization.requestsOpenID, dpopKey: authorization.dpopKey)
                try await sessions.establish(session)
                logger.info("signed in as \(session.user?.subject ?? "unknown user")", metadata: ["category": "device"])
                return session
            } catch .providerError(let code, _) where code == "authorization_pending" {
                transientFailures = 0
                logger.trace("authorization pending", metadata: ["category": "device"])
            } catch .providerError(let code, _) where code == "slow_down" {
                interval = min(interval + .seconds(5), .seconds(ServerNumber.deviceIntervalRange.upperBound))
                logger.debug("slow_down: polling every \(interval)", metadata: ["category": "device"])
            } catch let error where error.isTransient {
                transientFailures += 1
                guard transientFailures <= 5 else { throw error }
                interval = max(interval, min(interval * 2, .seconds(60)))
                logger.warning("polling failed (\(error)); next poll in \(interval)", metadata: ["category": "device"])
            }
        }
    }
}
