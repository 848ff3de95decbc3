import Fluent
import FluentPostgresDriver
import FluentSQLiteDriver
import Foundation
import SQLKit
import Vapor

/// Read-only look-ups of accounts and App Store purchases in a server's database, for tools that run beside the server
/// (`chorus app-store`'s sandbox purchases and notifications). Each look-up opens the database in a short-lived
/// application and closes it again; nothing is written.
public struct PurchaseRecords: Sendable {
    /// The server's configuration (its database and environment).
    public let configuration: ChorusConfiguration

    /// Look-ups in the database `configuration` names.
    public init(configuration: ChorusConfiguration) {
        self.configuration = configuration
    }

    /// The id of the account registered with `email` (already normalised), or `nil`.
    public func accountID(email: String) async throws -> String? {
        try await withStore { store in try await store.accounts.user(email: email)?.id }
    }

    /// The subscription whose original transaction id is `transactionID`, or the subscription or add-on purchase one of
    /// whose transactions it is; `nil` when none is stored.
    public func purchase(transactionID: String) async throws -> StoredPurchase? {
        try await withStore { store in try await store.purchases.storedPurchase(id: transactionID) }
    }

    /// Runs `body` with the server's database, opened in a short-lived application.
    private func withStore<R: Sendable>(_ body: @escaping @Sendable (ChorusStore) async throws -> R) async throws -> R {
        let app = try await Application.make(Vapor.Environment(name: configuration.environment.rawValue, arguments: ["chorus"]))
        do {
            switch configuration.database {
            case .sqlite(let path):
                app.databases.use(.sqlite(.file(path)), as: .sqlite)
            case .postgres(let url):
                app.databases.use(.postgres(configuration: try SQLPostgresConfiguration(url: url), maxConnectionsPerEventLoop: 1), as: .psql)
            }
            guard let sql = app.db as? any SQLDatabase else { throw PurchaseRecordsError(description: "the database does not speak SQL") }
            let result = try await body(ChorusStore(sql: sql, writeGate: WriteGate()))
            try await app.asyncShutdown()
            return result
        } catch {
            try? await app.asyncShutdown()
            throw error
        }
    }
}

/// Why ``PurchaseRecords`` could not read the database.
public struct PurchaseRecordsError: Error, CustomStringConvertible, Sendable {
    /// The message for the user.
    public let description: String
}

/// A stored purchase: a subscription's latest transaction, or an add-on's.
public struct StoredPurchase: Sendable {
    /// The account that bought it.
    public var userID: String
    /// The latest transaction (the add-on's own).
    public var transactionID: String
    /// The subscription's original transaction (the add-on's own).
    public var originalTransactionID: String
    public var productID: String
    public var purchaseDate: Date
    /// When the original transaction was bought, if it is stored.
    public var originalPurchaseDate: Date?
    public var expiresDate: Date?
    public var willRenew: Bool
    public var autoRenewProductID: String?
}
