import Crypto
import Foundation

/// Stores phone numbers as keyed hashes (HMAC-SHA256), never in plain text: the per-number call counters, and any
/// other table that must recognise a number again (a do-not-call list) without being able to list the numbers.
///
/// The key is derived from the server secret with a purpose label, so the hash of a number is the same on every
/// instance and across restarts, but cannot be computed (or reversed by trying the ~10^10 numbers of a country)
/// without the secret.
public struct PhoneNumberHasher: Sendable {
    private let key: SymmetricKey

    /// - Parameter secret: `CHORUS_NUMBER_HASH_SECRET` (required in production), or in development the server's secret
    ///   (`CHORUS_JWT_SECRET` or the one kept in the data directory).
    public init(secret: String) {
        let derived = HMAC<SHA256>.authenticationCode(for: Data("chorus phone-number hash v1".utf8), using: SymmetricKey(data: Data(secret.utf8)))
        key = SymmetricKey(data: Data(derived))
    }

    /// The hash of an E.164 number: 64 lowercase hex characters.
    public func hash(_ e164: String) -> String {
        HMAC<SHA256>.authenticationCode(for: Data(e164.utf8), using: key).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
