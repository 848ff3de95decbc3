import Crypto
import Foundation
import Vapor

/// bcrypt over a SHA-256 pre-hash: bcrypt reads only 72 bytes, so every password is first reduced to a
/// 44-character base64 digest and no character of a long password is ignored. Hashing runs on the thread pool.
struct PasswordHasher: Sendable {
    let cost: Int
    /// A hash of a random password, verified against for unknown emails so both paths take the same time.
    let decoyHash: String

    init(cost: Int) throws {
        self.cost = cost
        self.decoyHash = try Bcrypt.hash(Self.prehash(UUID().uuidString), cost: cost)
    }

    static func prehash(_ password: String) -> String {
        Data(SHA256.hash(data: Data(password.utf8))).base64EncodedString()
    }

    func hash(_ password: String, on pool: NIOThreadPool) async throws -> String {
        let cost = self.cost
        return try await pool.runIfActive { try Bcrypt.hash(Self.prehash(password), cost: cost) }
    }

    func verify(_ password: String, against hash: String?, on pool: NIOThreadPool) async throws -> Bool {
        let target = hash ?? decoyHash
        let matches = try await pool.runIfActive { try Bcrypt.verify(Self.prehash(password), created: target) }
        return matches && hash != nil
    }
}
