import ArgumentParser
import ChorusProviders
import ChorusSandbox
import ChorusServer
import Foundation
import Logging
import X509

/// `chorus appstore`: App Store support tools.
struct AppStoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "appstore",
        abstract: "App Store support tools.",
        subcommands: [AppStoreVerify.self]
    )
}

/// `chorus appstore verify FILE`: verifies a signed transaction, renewal information or notification the way the server
/// does and prints its payload.
struct AppStoreVerify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify an App Store JWS (transaction, renewal info or notification) and print its payload as JSON.",
        discussion: """
            The signature, the x5c chain and Apple's certificate OIDs are always checked, against Apple Root CA - G3, \
            the CHORUS_APPLE_EXTRA_ROOTS files and, outside production, the sandbox App Store's root in CHORUS_DATA_DIR. \
            The bundle id and environment are checked only when given. A valid document's payload (nested JWS decoded) \
            goes to standard output and its kind to standard error; an invalid one exits 1 with `rejected: <reason>`.
            """
    )

    @ArgumentParser.Argument(help: "The file holding the compact JWS, or - for standard input.")
    var file: String

    @ArgumentParser.Option(name: .customLong("bundle-id"), help: "Require this bundle id.")
    var bundleID: String?

    @ArgumentParser.Option(help: "Require this environment (Sandbox or Production; Production also checks CHORUS_APPLE_APP_ID).")
    var environment: String?

    func validate() throws {
        if let environment, Self.environment(named: environment) == nil {
            throw ValidationError("--environment must be Sandbox, Production or Xcode")
        }
    }

    /// The App Store environment named `name`, case-insensitively.
    static func environment(named name: String) -> AppStoreEnvironment? {
        [AppStoreEnvironment.sandbox, .production, .xcode].first { $0.rawValue.lowercased() == name.lowercased() }
    }

    func run() async throws {
        let configuration = try loadConfiguration(hostname: nil, port: nil)
        bootstrapToolLogging()
        let data: Data?
        if file == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            data = FileManager.default.contents(atPath: file)
        }
        guard let data else {
            printError("chorus: cannot read \(file)")
            throw ExitCode(66)  // EX_NOINPUT
        }
        let jws = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let roots: [Certificate]
        do {
            // The sandbox authority is read when the data directory holds one, never created just to verify.
            let authorityFile = configuration.dataDirectory.appendingPathComponent(AppStoreTestAuthority.authorityFileName)
            let sandboxRoot =
                !configuration.isProduction && FileManager.default.fileExists(atPath: authorityFile.path)
                ? try AppStoreTestAuthority.loadOrCreate(directory: configuration.dataDirectory).rootCertificate : nil
            roots = try AppleRootCertificates.roots(extraFiles: configuration.appStore.extraRootCertificatePaths) + [sandboxRoot].compactMap { $0 }
        } catch {
            printError("chorus: CHORUS_APPLE_EXTRA_ROOTS / CHORUS_DATA_DIR: \((error as? PurchaseVerificationError)?.reason ?? "\(error)")")
            throw ExitCode(78)
        }
        let required = environment.flatMap(Self.environment(named:))
        let verifier = AppStoreSignedDataVerifier(
            rootCertificates: roots, bundleID: bundleID, appAppleID: required == .production ? configuration.appStore.appAppleID : nil,
            acceptedEnvironments: required.map { [$0] })
        do {
            let document = try await verifier.verifyDocument(jws)
            let kind =
                switch document.kind {
                case .notification: "notification"
                case .transaction: "transaction"
                case .renewalInfo: "renewal info"
                }
            printError(
                "verified \(kind): signed by \(document.leafCertificate.subject), chain valid at "
                    + ISO8601DateFormatter().string(from: document.validationTime))
            FileHandle.standardOutput.write(document.json + Data("\n".utf8))
        } catch let error as PurchaseVerificationError {
            printError("rejected: \(error.reason)")
            throw ExitCode(1)
        }
    }
}

/// `chorus sandbox appstore`: sandbox purchases and notifications for a running server's accounts.
struct SandboxAppStoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "appstore",
        abstract: "Sandbox App Store purchases and notifications for the accounts of a server (not in production).",
        discussion: """
            Run with the server's CHORUS_DATA_DIR and CHORUS_DATABASE_URL: everything is signed by the sandbox App Store \
            authority in the data directory, which the server trusts outside production.
            """,
        subcommands: [SandboxAppStorePurchase.self, SandboxAppStoreNotify.self]
    )
}

/// `chorus sandbox appstore purchase`: prints a signed transaction for an account.
struct SandboxAppStorePurchase: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "purchase",
        abstract: "Print a signed transaction (compact JWS, one line) buying a product for an account.",
        discussion: """
            A plan's product is an auto-renewable subscription (its period is the plan's cycle unless \
            --period-seconds), the add-on a consumable; the appAccountToken is the account's id. Post it as \
            signed_transaction to POST /mobile/purchase-subscription.
            """
    )

    @ArgumentParser.Option(help: "The email the account is registered with.")
    var user: String

    @ArgumentParser.Option(help: "The product id (a plan's or the add-on's).")
    var product: String

    @ArgumentParser.Option(help: "The subscription period in seconds (default: the plan's cycle).")
    var periodSeconds: Double?

    func run() async throws {
        let tool = try makeSandboxTool()
        let transaction = try await runTool { try await tool.purchase(email: user, productID: product, periodSeconds: periodSeconds) }
        printError(
            "purchased \(transaction.productID) for \(user): transaction \(transaction.transactionID), "
                + "original transaction \(transaction.originalTransactionID)"
                + (transaction.expiresDate.map { ", expires " + ISO8601DateFormatter().string(from: $0) } ?? ""))
        FileHandle.standardOutput.write(Data((transaction.signedTransaction + "\n").utf8))
    }
}

/// `chorus sandbox appstore notify`: signs a notification for a stored subscription and posts it to the server.
struct SandboxAppStoreNotify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notify",
        abstract: "Send an App Store Server Notification V2 about a stored subscription or add-on to the server's webhook.",
        discussion: """
            Posts {"signedPayload": ...} to CHORUS_PUBLIC_URL (or http://CHORUS_HOSTNAME:CHORUS_PORT) + \
            /mobile/app-store/webhook and prints the server's answer; exits 0 when it answers 2xx, otherwise 1.
            """
    )

    @ArgumentParser.Option(help: "The notificationType, e.g. DID_RENEW, DID_CHANGE_RENEWAL_STATUS, DID_FAIL_TO_RENEW, EXPIRED, REFUND.")
    var type: String

    @ArgumentParser.Option(help: "The subtype, e.g. AUTO_RENEW_DISABLED, GRACE_PERIOD, UPGRADE, VOLUNTARY.")
    var subtype: String?

    @ArgumentParser.Option(help: "The subscription's original transaction id (or the add-on purchase's transaction id).")
    var originalTransactionId: String

    @ArgumentParser.Option(help: "The product of an UPGRADE or a renewal preference change.")
    var product: String?

    @ArgumentParser.Option(help: "The period of a transaction the notification issues, or the RENEWAL_EXTENDED extension, in seconds.")
    var periodSeconds: Double?

    @ArgumentParser.Option(help: "The billing grace period of DID_FAIL_TO_RENEW/GRACE_PERIOD, in seconds.")
    var gracePeriodSeconds: Double?

    func run() async throws {
        let tool = try makeSandboxTool()
        let order = SandboxNotificationOrder(
            notificationType: type.uppercased(), subtype: subtype?.uppercased(), originalTransactionID: originalTransactionId,
            productID: product, periodSeconds: periodSeconds, gracePeriodSeconds: gracePeriodSeconds)
        let delivery = try await runTool { try await tool.notify(order) }
        let carried = delivery.transaction.map { " carrying transaction \($0.transactionID)" } ?? ""
        printError(
            "\(order.notificationType)\(order.subtype.map { "/\($0)" } ?? "")\(carried) → \(delivery.webhookURL.absoluteString): HTTP \(delivery.status)"
        )
        FileHandle.standardOutput.write(Data((delivery.body + "\n").utf8))
        if !delivery.accepted { throw ExitCode(1) }
    }
}

/// The sandbox tool for this process's configuration; exits 78 on a configuration error or in production.
private func makeSandboxTool() throws -> SandboxAppStoreTool {
    let configuration = try loadConfiguration(hostname: nil, port: nil)
    bootstrapToolLogging()
    return try runToolSync { try SandboxAppStoreTool(configuration: configuration) }
}

/// Runs `body`, reporting a ``SandboxAppStoreToolError`` as `chorus: <message>` with its exit code.
private func runTool<R>(_ body: () async throws -> R) async throws -> R {
    do {
        return try await body()
    } catch let error as SandboxAppStoreToolError {
        printError("chorus: \(error.description)")
        throw ExitCode(error.exitCode)
    }
}

/// Runs `body`, reporting a ``SandboxAppStoreToolError`` as `chorus: <message>` with its exit code.
private func runToolSync<R>(_ body: () throws -> R) throws -> R {
    do {
        return try body()
    } catch let error as SandboxAppStoreToolError {
        printError("chorus: \(error.description)")
        throw ExitCode(error.exitCode)
    }
}

/// Logs go to standard error (warnings and worse), so standard output carries only the command's result.
private func bootstrapToolLogging() {
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = .warning
        return handler
    }
}

/// Writes `message` and a newline to standard error.
func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
