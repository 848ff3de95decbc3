import Foundation

extension ChorusConfiguration {
    /// Problems that forbid starting in this configuration (production safety). Empty when all is well.
    public func startupProblems() -> [String] {
        guard isProduction else {
            guard listensOnLoopbackOnly || developmentOnNetwork else {
                return [
                    "CHORUS_HOSTNAME \(hostname) is reachable from the network, and in development the sandbox (/sandbox/*) serves "
                        + "phone numbers, call recordings and message text without authentication. Listen on 127.0.0.1, set "
                        + "CHORUS_ENVIRONMENT=production, or set CHORUS_DEVELOPMENT_ON_NETWORK=true to expose the sandbox anyway."
                ]
            }
            return []
        }
        var problems: [String] = []
        if jwtSecret == nil {
            problems.append("CHORUS_JWT_SECRET is required in production (at least 32 random bytes, e.g. `openssl rand -base64 48`).")
        } else if let jwtSecret, jwtSecret.utf8.count < 32 {
            problems.append("CHORUS_JWT_SECRET must be at least 32 bytes long.")
        }
        if numberHashSecret == nil {
            problems.append(
                "CHORUS_NUMBER_HASH_SECRET is required in production (at least 32 random bytes, e.g. `openssl rand -base64 48`; "
                    + "never rotate it: the do-not-call list is keyed by it).")
        } else if let numberHashSecret, numberHashSecret.utf8.count < 32 {
            problems.append("CHORUS_NUMBER_HASH_SECRET must be at least 32 bytes long.")
        }
        if !publicURLWasConfigured {
            problems.append("CHORUS_PUBLIC_URL is required in production (the https URL Twilio and Apple reach this server at).")
        } else if publicURL.scheme != "https" {
            problems.append("CHORUS_PUBLIC_URL must be an https URL in production.")
        }
        if usesSandboxTelephony {
            problems.append(
                "Telephony would use the sandbox: set CHORUS_TWILIO_ACCOUNT_SID, CHORUS_TWILIO_AUTH_TOKEN and "
                    + "CHORUS_TWILIO_FROM_NUMBER for production."
            )
        }
        if openAI?.apiKey.isEmpty ?? true {
            problems.append("The calls' AI voice would use the sandbox: set CHORUS_OPENAI_API_KEY for production.")
        }
        if elevenLabs?.apiKey.isEmpty ?? true {
            problems.append("Cloned voices would use the sandbox: set CHORUS_ELEVENLABS_API_KEY for production.")
        }
        if callsModerationModel == nil {
            problems.append(
                "CHORUS_CALLS_MODERATION_MODEL=off is for development only: production checks every custom persona with the moderation model.")
        }
        if appStore.appAppleID == nil {
            problems.append("CHORUS_APPLE_APP_ID is required in production (the app's numeric App Store id; notifications must name it).")
        }
        if appStore.sharedSecret == nil {
            problems.append("CHORUS_APPLE_SHARED_SECRET is required in production (App Store Connect → the app's shared secret).")
        }
        if !appStore.extraRootCertificatePaths.isEmpty {
            problems.append("CHORUS_APPLE_EXTRA_ROOTS is for testing only: production trusts Apple Root CA - G3 alone.")
        }
        return problems
    }
}
