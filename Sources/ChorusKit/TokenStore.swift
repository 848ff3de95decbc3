import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// The session of a signed-in user: a short-lived access token and the refresh token that renews it.
public struct StoredTokens: Codable, Sendable, Hashable {
    /// Sent as `Authorization: Bearer <accessToken>`.
    public var accessToken: String
    /// Exchanged once, at `POST /auth/refresh`, for a new pair (the server rotates it and detects reuse).
    public var refreshToken: String

    /// - Parameters:
    ///   - accessToken: the bearer token.
    ///   - refreshToken: the token that renews it.
    public init(accessToken: String, refreshToken: String) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
    }

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case refreshToken = "refresh_token"
    }
}

/// Where ``ChorusClient`` keeps the session between requests (and, for persistent stores, between launches).
///
/// The client saves the pair after register, login and every refresh, and clears it on logout or when the server
/// ends the session. Implementations must be safe to call concurrently.
///
/// In an app use ``KeychainTokenStore`` (Apple platforms); ``FileTokenStore`` persists elsewhere (Linux, command-line
/// tools), ``InMemoryTokenStore`` suits tests and previews.
public protocol TokenStore: Sendable {
    /// The stored session, or `nil` when signed out.
    func load() async throws -> StoredTokens?
    /// Replaces the stored session.
    func save(_ tokens: StoredTokens) async throws
    /// Forgets the session.
    func clear() async throws
}

/// Keeps the session in memory only: it ends with the process. Suited to tests and previews.
public actor InMemoryTokenStore: TokenStore {
    private var tokens: StoredTokens?

    /// - Parameter tokens: an initial session, if any.
    public init(_ tokens: StoredTokens? = nil) {
        self.tokens = tokens
    }

    /// The session held, or `nil`.
    public func load() -> StoredTokens? { tokens }

    /// Holds `tokens` instead.
    public func save(_ tokens: StoredTokens) { self.tokens = tokens }

    /// Forgets the session.
    public func clear() { tokens = nil }
}

/// Keeps the session in a JSON file, readable and writable by the owner only (`0600`) where POSIX permissions exist.
///
/// Writes are atomic: a reader sees the old pair or the new one, never a torn file. A missing file means signed out;
/// an unreadable or corrupt one makes ``load()`` throw.
public actor FileTokenStore: TokenStore {
    /// The file the session is kept in.
    public nonisolated let fileURL: URL

    /// - Parameter fileURL: the file; its directory is created on the first save.
    public init(fileURL: URL) {
        self.fileURL = fileURL
    }

    /// The session in the file, or `nil` when there is no file.
    ///
    /// - Throws: when the file exists but cannot be read or decoded.
    public func load() throws -> StoredTokens? {
        let data: Data
        do {
            data = try Data(contentsOf: fileURL)
        } catch  where !FileManager.default.fileExists(atPath: fileURL.path) {
            return nil
        }
        return try JSONDecoder().decode(StoredTokens.self, from: data)
    }

    /// Writes `tokens` to the file atomically, owner-only, creating its directory if needed.
    public func save(_ tokens: StoredTokens) throws {
        let manager = FileManager.default
        let directory = fileURL.deletingLastPathComponent()
        try manager.createDirectory(at: directory, withIntermediateDirectories: true)
        // Written to a temporary file created owner-only (never readable by others, even briefly), then renamed
        // over the file: rename(2) replaces it atomically (FileManager.replaceItemAt is not reliable on Linux).
        let temporary = directory.appendingPathComponent(".\(fileURL.lastPathComponent).\(UUID().uuidString).tmp")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else { throw Self.posixError(path: temporary.path) }
        do {
            let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
            try handle.write(contentsOf: try JSONEncoder().encode(tokens))
            try handle.synchronize()
            try handle.close()
            guard rename(temporary.path, fileURL.path) == 0 else { throw Self.posixError(path: fileURL.path) }
        } catch {
            try? manager.removeItem(at: temporary)
            throw error
        }
    }

    /// Deletes the file; there being none is not an error.
    public func clear() throws {
        guard FileManager.default.fileExists(atPath: fileURL.path) else { return }
        try FileManager.default.removeItem(at: fileURL)
    }

    private static func posixError(path: String) -> CocoaError {
        CocoaError(
            .fileWriteUnknown,
            userInfo: [
                NSFilePathErrorKey: path, NSUnderlyingErrorKey: NSError(domain: NSPOSIXErrorDomain, code: Int(errno)),
            ])
    }
}
