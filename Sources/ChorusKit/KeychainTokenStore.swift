#if canImport(Security)
import Foundation
import Security

/// Keeps the session in the Keychain: the store to use in an app (iOS, iPadOS, macOS, watchOS, tvOS, visionOS).
///
/// The pair is one generic-password item (`kSecClassGenericPassword`) identified by ``service`` and ``account``,
/// its data the JSON of ``StoredTokens``. It is readable after the device's first unlock following a restart
/// (`kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`), so background refreshes and scheduled work can use it
/// while the device is locked, and it never leaves the device: it is not synced to iCloud Keychain and not restored
/// from a backup onto another device (a session is bound to this installation; the user signs in again there).
/// The session survives app relaunches and, as Keychain items do, an app reinstall.
///
/// ```swift
/// let chorus = ChorusClient(environment: .development, tokenStore: KeychainTokenStore())
/// ```
///
/// Only available where the Security framework is (Apple platforms); use ``FileTokenStore`` elsewhere.
/// On macOS the item goes to the default (login) keychain unless the app uses the data-protection keychain through
/// its entitlements.
public actor KeychainTokenStore: TokenStore {
    /// The item's `kSecAttrService`.
    public nonisolated let service: String
    /// The item's `kSecAttrAccount`.
    public nonisolated let account: String
    /// The item's `kSecAttrAccessGroup`, to share the session with an app extension; `nil`: the app's default group.
    public nonisolated let accessGroup: String?

    /// A Keychain operation failed with `status` (an `OSStatus` such as `errSecInteractionNotAllowed`, -25308, when
    /// the item is read before the device's first unlock).
    public struct KeychainError: Error, Hashable, CustomStringConvertible {
        /// The Security framework's result code.
        public var status: OSStatus
        /// What failed, e.g. `SecItemAdd`.
        public var operation: String

        /// The operation, the code and the Security framework's explanation of it.
        public var description: String {
            let message = SecCopyErrorMessageString(status, nil).map { $0 as String } ?? "unknown error"
            return "\(operation) failed: \(message) (OSStatus \(status))"
        }
    }

    /// - Parameters:
    ///   - service: the item's service; by default `<bundle identifier>.chorus` (`ChorusKit` without a bundle id).
    ///   - account: the item's account; change it to keep several sessions (e.g. one per environment).
    ///   - accessGroup: a Keychain access group shared with app extensions, or `nil`.
    public init(service: String? = nil, account: String = "session", accessGroup: String? = nil) {
        self.service = service ?? Bundle.main.bundleIdentifier.map { "\($0).chorus" } ?? "ChorusKit"
        self.account = account
        self.accessGroup = accessGroup
    }

    /// The stored session, or `nil` when there is none.
    ///
    /// - Throws: ``KeychainError`` when the Keychain cannot be read (e.g. before the first unlock), or a decoding
    ///   error when the item holds something else.
    public func load() throws -> StoredTokens? {
        var query = itemQuery
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        switch status {
        case errSecSuccess:
            guard let data = result as? Data else { throw KeychainError(status: errSecDecode, operation: "SecItemCopyMatching") }
            return try JSONDecoder().decode(StoredTokens.self, from: data)
        case errSecItemNotFound:
            return nil
        default:
            throw KeychainError(status: status, operation: "SecItemCopyMatching")
        }
    }

    /// Replaces the stored session (updating the item, or adding it the first time).
    ///
    /// - Throws: ``KeychainError`` when the Keychain cannot be written.
    public func save(_ tokens: StoredTokens) throws {
        let data = try JSONEncoder().encode(tokens)
        let attributes: [String: Any] = [
            kSecValueData as String: data,
            kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
        ]
        let updated = SecItemUpdate(itemQuery as CFDictionary, attributes as CFDictionary)
        switch updated {
        case errSecSuccess:
            return
        case errSecItemNotFound:
            let item = itemQuery.merging(attributes) { $1 }
            let added = SecItemAdd(item as CFDictionary, nil)
            guard added == errSecSuccess else { throw KeychainError(status: added, operation: "SecItemAdd") }
        default:
            throw KeychainError(status: updated, operation: "SecItemUpdate")
        }
    }

    /// Deletes the item; there being none is not an error.
    ///
    /// - Throws: ``KeychainError`` when the Keychain cannot be written.
    public func clear() throws {
        let status = SecItemDelete(itemQuery as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else {
            throw KeychainError(status: status, operation: "SecItemDelete")
        }
    }

    /// Identifies the item: class, service, account and, when set, access group.
    private var itemQuery: [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
        ]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }
}
#endif
