import Foundation
import Testing

/// A database a server test runs on. Every server test runs on SQLite and, when `CHORUS_TEST_POSTGRES_URL` names an
/// admin connection (the test script starts a throwaway cluster), on PostgreSQL too. On CI the PostgreSQL URL is
/// required: a run without it fails instead of silently testing less.
enum TestDatabase: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    var testDescription: String { rawValue }

    static var all: [TestDatabase] { postgresAdminURL == nil ? [.sqlite] : [.sqlite, .postgres] }

    static var postgresAdminURL: String? {
        guard let url = ProcessInfo.processInfo.environment["CHORUS_TEST_POSTGRES_URL"], !url.isEmpty else { return nil }
        return url
    }

    /// A fresh, empty database: a temporary SQLite file, or a new PostgreSQL database dropped by ``drop()``.
    func make() throws -> ProvisionedDatabase {
        if ProcessInfo.processInfo.environment["CI"] == "true", Self.postgresAdminURL == nil {
            Issue.record("CI=true but CHORUS_TEST_POSTGRES_URL is not set: run the suite through ./scripts/test")
        }
        let name = "chorus_test_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased())"
        switch self {
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return ProvisionedDatabase(url: directory.appendingPathComponent("chorus.sqlite").path, directory: directory, postgresName: nil)
        case .postgres:
            guard let admin = Self.postgresAdminURL else { throw TestSetupError(message: "CHORUS_TEST_POSTGRES_URL is not set") }
            try Self.psql(admin, "CREATE DATABASE \(name)")
            var components = URLComponents(string: admin)!
            components.path = "/\(name)"
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return ProvisionedDatabase(url: components.string!, directory: directory, postgresName: name)
        }
    }

    static func psql(_ url: String, _ command: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["psql", url, "-v", "ON_ERROR_STOP=1", "-q", "-c", command]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw TestSetupError(message: "psql failed: \(message)")
        }
    }
}

struct TestSetupError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// A database created for one test.
struct ProvisionedDatabase: Sendable {
    /// A value for `CHORUS_DATABASE_URL`.
    var url: String
    /// A scratch directory (SQLite file, data directory).
    var directory: URL
    var postgresName: String?

    func drop() {
        if let postgresName, let admin = TestDatabase.postgresAdminURL {
            try? TestDatabase.psql(admin, "DROP DATABASE IF EXISTS \(postgresName) WITH (FORCE)")
        }
        try? FileManager.default.removeItem(at: directory)
    }
}
