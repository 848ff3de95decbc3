import ChorusAPI
import ChorusCore
import ChorusProviders
import ChorusSandbox
import ChorusServer
import Foundation
import Vapor

/// `chorus sandbox appstore`: sandbox App Store purchases and notifications for the accounts of a running server,
/// signed by the sandbox authority in the server's data directory (which the server trusts outside production).
///
/// It reads the server's database (the same `CHORUS_DATABASE_URL`, through ``PurchaseRecords``) to find accounts,
/// subscriptions and add-on purchases, and never writes to it: a purchase is applied when the app (or `curl`) posts it to
/// `POST /mobile/purchase-subscription`, a notification when it reaches the server's webhook.
public struct SandboxAppStoreTool: Sendable {
    /// The server's configuration (data directory, database, App Store settings, catalog, URLs).
    public let configuration: ChorusConfiguration

    /// Creates the tool for the server `configuration` describes.
    ///
    /// - Throws: ``SandboxAppStoreToolError`` (exit code 78) in production, where the sandbox authority is not trusted.
    public init(configuration: ChorusConfiguration) throws {
        guard !configuration.isProduction else {
            throw SandboxAppStoreToolError(
                "the sandbox App Store is not available in production (CHORUS_ENVIRONMENT=production): the server does not trust it",
                exitCode: 78)
        }
        self.configuration = configuration
    }

    /// The App Store environment sandbox purchases are signed for: Sandbox, unless the server accepts only another.
    var storeEnvironment: AppStoreEnvironment {
        configuration.appStore.acceptedEnvironments.contains(.sandbox) ? .sandbox : configuration.appStore.environment
    }

    /// Where notifications are delivered: `CHORUS_PUBLIC_URL`, or the server's loopback address, plus
    /// `/mobile/app-store/webhook`.
    public var webhookURL: URL {
        let base = configuration.publicURLWasConfigured ? configuration.publicURL : configuration.loopbackURL
        return base.appendingPathComponent("mobile/app-store/webhook")
    }

    // MARK: Purchase

    /// Issues a signed transaction for the account registered with `email`: an auto-renewable subscription for a
    /// plan's product (its period is the plan's cycle unless `periodSeconds` is given), a consumable for the add-on.
    /// Its `appAccountToken` is the account's id, so the server accepts it for that account only.
    ///
    /// - Throws: ``SandboxAppStoreToolError`` for an unknown product or account, or a missing database.
    public func purchase(email: String, productID: String, periodSeconds: Double? = nil) async throws -> SandboxTransaction {
        guard let product = configuration.plans.product(id: productID) else {
            let known = [configuration.plans.basic.productID, configuration.plans.premium.productID, configuration.plans.addon.productID]
            throw SandboxAppStoreToolError("unknown product \(productID) (the catalog sells \(known.joined(separator: ", ")))")
        }
        let kind: SandboxAppStore.PurchaseKind
        switch product {
        case .plan(let terms):
            // The emulator's HTTP route refuses what no date can hold; the tool calls it directly, so it checks the same.
            if let periodSeconds, !SandboxAppStore.isValidPeriod(periodSeconds) {
                throw SandboxAppStoreToolError("--period-seconds must be positive and at most \(Int(SandboxAppStore.longestPeriodSeconds))")
            }
            kind = .autoRenewable(period: periodSeconds ?? terms.cycleLength)
        case .addon:
            if periodSeconds != nil {
                throw SandboxAppStoreToolError("\(productID) is a consumable add-on: --period-seconds applies to subscriptions only")
            }
            kind = .consumable
        }
        let normalized = email.trimmingCharacters(in: .whitespaces).lowercased()
        let userID = try await withRecords { records in try await records.accountID(email: normalized) }
        guard let userID else { throw SandboxAppStoreToolError("no account is registered with the email \(normalized)") }
        guard let token = UUID(uuidString: userID) else {
            throw SandboxAppStoreToolError("the account id \(userID) is not a UUID and cannot be an appAccountToken")
        }
        return try makeStore().issueTransaction(productID: productID, kind: kind, appAccountToken: token)
    }

    // MARK: Notify

    /// Signs the App Store Server Notification `order` describes for a stored subscription or add-on purchase and
    /// posts it to the server's webhook (``webhookURL``). Its `originalTransactionID` may name any transaction of the
    /// subscription, or an add-on purchase.
    ///
    /// The subscription's latest transaction (or the add-on's transaction) is rebuilt from the database in a fresh
    /// ``SandboxAppStore`` first, so the notification carries it — or its successor, for types that issue one
    /// (`DID_RENEW`, `SUBSCRIBED`, an `UPGRADE`) — with the subscription's renewal information.
    ///
    /// - Throws: ``SandboxAppStoreToolError`` for an unknown transaction, a missing database, or an unreachable server.
    public func notify(_ order: SandboxNotificationOrder) async throws -> SandboxNotificationDelivery {
        guard let id = order.originalTransactionID else {
            throw SandboxAppStoreToolError("a notification needs the transaction id of the purchase it is about")
        }
        let found = try await withRecords { records in try await records.purchase(transactionID: id) }
        guard let found else {
            throw SandboxAppStoreToolError("no subscription or add-on purchase with the transaction id \(id) is stored")
        }
        let appStore = try makeStore()
        // A subscription's period is what its latest transaction paid for (a sandbox purchase may have a short one).
        let paidPeriod = found.expiresDate.map { $0.timeIntervalSince(found.purchaseDate) }.flatMap { $0 > 0 ? $0 : nil }
        let kind: SandboxAppStore.PurchaseKind
        switch configuration.plans.product(id: found.productID) {
        case .addon: kind = .consumable
        case .plan(let terms): kind = .autoRenewable(period: paidPeriod ?? terms.cycleLength)
        case .none: kind = paidPeriod.map { .autoRenewable(period: $0) } ?? .consumable
        }
        _ = try appStore.adoptTransaction(
            transactionID: found.transactionID, originalTransactionID: found.originalTransactionID, productID: found.productID, kind: kind,
            purchaseDate: found.purchaseDate, originalPurchaseDate: found.originalPurchaseDate, expiresDate: found.expiresDate,
            appAccountToken: UUID(uuidString: found.userID), autoRenew: found.willRenew, autoRenewProductID: found.autoRenewProductID)
        var order = order
        order.originalTransactionID = found.originalTransactionID
        let signedPayload: String
        do {
            signedPayload = try appStore.signNotification(for: order)
        } catch let error as Abort {
            throw SandboxAppStoreToolError(error.reason)
        }
        let transaction = appStore.latestTransaction(originalTransactionID: found.originalTransactionID)
        let url = webhookURL
        let (status, answer) = try await post(AppStoreNotificationRequest(signedPayload: signedPayload), to: url)
        return SandboxNotificationDelivery(
            webhookURL: url, status: status, body: answer, signedPayload: signedPayload, transaction: transaction)
    }

    // MARK: Helpers

    /// A sandbox App Store signing with the authority in the data directory, for the server's bundle and environment.
    private func makeStore() throws -> SandboxAppStore {
        let settings = configuration.appStore
        return SandboxAppStore(
            authority: try AppStoreTestAuthority.loadOrCreate(directory: configuration.dataDirectory),
            receipts: SandboxReceiptValidator(sharedSecret: settings.sharedSecret, bundleID: settings.bundleID),
            bundleID: settings.bundleID, environment: storeEnvironment, appAppleID: settings.appAppleID)
    }

    /// Runs `body` with the server's database (a SQLite file must exist: the tool never creates one).
    private func withRecords<R: Sendable>(_ body: (PurchaseRecords) async throws -> R) async throws -> R {
        if case .sqlite(let path) = configuration.database, !FileManager.default.fileExists(atPath: path) {
            throw SandboxAppStoreToolError(
                "there is no database at \(path): run the server (or `chorus migrate`) with the same CHORUS_DATABASE_URL first")
        }
        do {
            return try await body(PurchaseRecords(configuration: configuration))
        } catch let error as PurchaseRecordsError {
            throw SandboxAppStoreToolError(error.description)
        }
    }

    /// Posts `payload` as JSON to `url` and returns the answer's status code and body.
    private func post(_ payload: AppStoreNotificationRequest, to url: URL) async throws -> (Int, String) {
        let app = try await makeApplication()
        app.http.client.configuration.timeout = .init(connect: .seconds(10), read: .seconds(60))
        do {
            let response = try await app.client.post(URI(string: url.absoluteString)) { request in
                try request.content.encode(payload, as: .json)
            }
            try await app.asyncShutdown()
            return (Int(response.status.code), response.body.map { String(buffer: $0) } ?? "")
        } catch let error as SandboxAppStoreToolError {
            try? await app.asyncShutdown()
            throw error
        } catch {
            try? await app.asyncShutdown()
            throw SandboxAppStoreToolError("cannot deliver the notification to \(url.absoluteString): \(error)")
        }
    }

    /// A bare application (no routes, no server) for its database and HTTP client.
    private func makeApplication() async throws -> Application {
        try await Application.make(Vapor.Environment(name: configuration.environment.rawValue, arguments: ["chorus"]))
    }
}

/// A notification `chorus sandbox appstore notify` delivered, and the server's answer.
public struct SandboxNotificationDelivery: Sendable {
    /// Where it was posted.
    public let webhookURL: URL
    /// The HTTP status the server answered.
    public let status: Int
    /// The server's answer body.
    public let body: String
    /// The notification's `signedPayload`.
    public let signedPayload: String
    /// The transaction the notification carries, if any.
    public let transaction: SandboxTransaction?

    /// Whether the server accepted it (2xx).
    public var accepted: Bool { (200..<300).contains(status) }
}

/// Why `chorus sandbox appstore` could not do what was asked, with the process exit code to report it with.
public struct SandboxAppStoreToolError: Error, CustomStringConvertible, Sendable {
    /// The message for the user.
    public let description: String
    /// 78 (EX_CONFIG) when the configuration forbids it, otherwise 1.
    public let exitCode: Int32

    /// Creates an error.
    public init(_ description: String, exitCode: Int32 = 1) {
        self.description = description
        self.exitCode = exitCode
    }
}
