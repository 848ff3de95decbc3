import Fluent
import FluentPostgresDriver
import FluentSQLiteDriver
import Foundation
import SQLKit
import Vapor

extension ChorusApp {
    /// Runs the migrations alone (`chorus migrate`).
    public static func migrate(_ app: Application, configuration: ChorusConfiguration) async throws {
        try configureDatabase(app, configuration)
        app.migrations.add(ChorusMigrations.all)
        try await app.autoMigrate()
    }

    /// Gives (`admin: true`) or takes away the operator console's admin role of the account with `email`, after
    /// running the migrations (`chorus admin grant|revoke`). Taking it away ends the account's console sessions at
    /// their next request. Returns `false` when no account has that email.
    public static func setAdmin(_ app: Application, configuration: ChorusConfiguration, email: String, admin: Bool) async throws -> Bool {
        try await migrate(app, configuration: configuration)
        let sql = app.db as! any SQLDatabase
        let store = ChorusStore(sql: sql, reader: nil, writeGate: WriteGate())
        return try await store.console.setRole(email: email.trimmingCharacters(in: .whitespaces).lowercased(), role: admin ? "admin" : "user")
    }

    /// The configured database, migrated; SQLite in write-ahead-log mode.
    static func prepareDatabase(_ app: Application, _ configuration: ChorusConfiguration) async throws {
        try await migrate(app, configuration: configuration)
        if case .sqlite = configuration.database {
            _ = try await (app.db as! any SQLDatabase).raw("PRAGMA journal_mode=WAL").all()
        }
    }

    static func configureDatabase(_ app: Application, _ configuration: ChorusConfiguration) throws {
        switch configuration.database {
        case .sqlite(let path):
            try FileManager.default.createDirectory(
                at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true
            )
            app.databases.use(.sqlite(.file(path)), as: .sqlite)
        case .postgres(let url):
            app.databases.use(.postgres(configuration: try SQLPostgresConfiguration(url: url), maxConnectionsPerEventLoop: 4), as: .psql)
        }
    }
}
