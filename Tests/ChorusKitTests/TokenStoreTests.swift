import ChorusKit
import Foundation
import Testing

@Suite("ChorusKit token stores")
struct TokenStoreTests {
    @Test("FileTokenStore: round trip, owner-only file, overwrite, clear")
    func fileRoundTrip() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-kit-store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("nested/tokens.json")
        let store = FileTokenStore(fileURL: file)
        #expect(try await store.load() == nil)

        let first = StoredTokens(accessToken: "access-1", refreshToken: "refresh/1+=")
        try await store.save(first)
        #expect(try await store.load() == first)
        #expect(try await FileTokenStore(fileURL: file).load() == first, "another instance reads the same file")
        let permissions = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? NSNumber
        #expect(permissions?.intValue == 0o600)

        let second = StoredTokens(accessToken: "access-2", refreshToken: "refresh-2")
        try await store.save(second)
        #expect(try await store.load() == second)
        let permissionsAfterReplace = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? NSNumber
        #expect(permissionsAfterReplace?.intValue == 0o600)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: file.deletingLastPathComponent().path)
        #expect(leftovers == ["tokens.json"], "no temporary files are left behind")

        try await store.clear()
        #expect(try await store.load() == nil)
        try await store.clear()  // clearing twice is fine
    }

    @Test("FileTokenStore: a corrupt file throws instead of passing for signed out")
    func corruptFile() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-kit-corrupt-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data("not json".utf8).write(to: file)
        await #expect(throws: (any Error).self) { try await FileTokenStore(fileURL: file).load() }
    }

    @Test("InMemoryTokenStore: save, load, clear")
    func inMemory() async throws {
        let tokens = StoredTokens(accessToken: "a", refreshToken: "r")
        let store = InMemoryTokenStore()
        #expect(await store.load() == nil)
        await store.save(tokens)
        #expect(await store.load() == tokens)
        await store.clear()
        #expect(await store.load() == nil)
    }

    #if canImport(Security)
    @Test("KeychainTokenStore: round trip, overwrite, clear (Apple platforms only)")
    func keychain() async throws {
        let store = KeychainTokenStore(service: "ChorusKitTests-\(UUID().uuidString)", account: "session")
        defer { Task { try? await store.clear() } }
        #expect(try await store.load() == nil)
        let first = StoredTokens(accessToken: "access-1", refreshToken: "refresh-1")
        try await store.save(first)
        #expect(try await store.load() == first)
        #expect(try await KeychainTokenStore(service: store.service, account: "session").load() == first)
        #expect(try await KeychainTokenStore(service: store.service, account: "other").load() == nil)
        let second = StoredTokens(accessToken: "access-2", refreshToken: "refresh-2")
        try await store.save(second)
        #expect(try await store.load() == second)
        try await store.clear()
        #expect(try await store.load() == nil)
        try await store.clear()
    }
    #endif
}
