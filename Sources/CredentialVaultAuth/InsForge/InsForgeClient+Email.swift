import Logging
import Foundation

extension InsForgeClient {
    /// Verifies the e-mail address with the 6-digit code the backend e-mailed, signs the user
    /// in and stores the session. (A project that verifies by link needs no call: the user
    /// clicks the link, then signs in.)
    /// - Throws: `invalidCode` for a wrong, expired or used code; `invalidInput` when `code`
    ///   is not 6 digits (nothing is sent then).
    @discardableResult
    public func verifyEmail(email: String, code: String) async throws(InsForgeError) -> InsForgeAuthResponse {
        try Self.require(email: email)
        try Self.require(sixDigitCode: code, "the verification code")
        let body = try InsForgeAPI.json(["email": email, "otp": code])
        let response = try await api.call(
            InsForgeAuthResponse.self, "POST", "/email/verify", query: api.clientType, body: body, purpose: .secret)
        logger.info("e-mail address verified", metadata: ["category": "insforge"])
        try await establish(response)
        return response
    }

    /// Sends the verification code or link again (the backend answers the same whether or not
    /// the address is registered). `redirectTo` is where a verification link leads afterwards.
    public func resendVerificationEmail(email: String, redirectTo: String? = nil) async throws(InsForgeError) {
        try await sendEmail("/email/send-verification", email: email, redirectTo: redirectTo)
        logger.info("verification e-mail requested", metadata: ["category": "insforge"])
    }

    /// Sends a password reset code or link (by the project's setting). `redirectTo` is the
    /// app's reset page a reset link leads to, with the reset token in its query.
    public func sendPasswordReset(email: String, redirectTo: String? = nil) async throws(InsForgeError) {
        try await sendEmail("/email/send-reset-password", email: email, redirectTo: redirectTo)
        logger.info("password reset e-mail requested", metadata: ["category": "insforge"])
    }

    /// Exchanges the 6-digit reset code for a reset token (projects that reset by code).
    /// - Throws: `invalidCode` for a wrong, expired or used code.
    public func exchangeResetPasswordToken(email: String, code: String) async throws(InsForgeError) -> ResetPasswordTokenResponse {
        try Self.require(email: email)
        try Self.require(sixDigitCode: code, "the reset code")
        let body = try InsForgeAPI.json(["email": email, "code": code])
        return try await api.call(
            ResetPasswordTokenResponse.self, "POST", "/email/exchange-reset-password-token", body: body, purpose: .secret)
    }

    /// Sets a new password with a reset token (from `exchangeResetPasswordToken` or from a
    /// reset link). The user signs in with the new password afterwards.
    /// - Throws: `invalidCode` for a wrong, expired or used token; `backend` (400) when the
    ///   password does not meet the project's requirements.
    public func resetPassword(otp: String, newPassword: String) async throws(InsForgeError) {
        guard !otp.isEmpty else { throw .invalidInput("the reset token is empty") }
        guard !newPassword.isEmpty else { throw .invalidInput("the new password is empty") }
        let body = try InsForgeAPI.json(["otp": otp, "newPassword": newPassword])
        _ = try await api.send("POST", "/email/reset-password", body: body, purpose: .secret)
        logger.info("password reset", metadata: ["category": "insforge"])
    }

    private func sendEmail(_ path: String, email: String, redirectTo: String?) async throws(InsForgeError) {
        try Self.require(email: email)
        var fields = ["email": email]
        if let redirectTo { fields["redirectTo"] = redirectTo }
        _ = try await api.send("POST", path, body: try InsForgeAPI.json(fields))
    }
}
