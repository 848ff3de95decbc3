import ArgumentParser
import ChorusServer
import Foundation

/// `chorus admin grant|revoke EMAIL`: the operator console's admin role.
struct AdminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin", abstract: "Give or take away the operator console's admin role.", subcommands: [Grant.self, Revoke.self])

    struct Grant: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make the account with EMAIL an admin of the operator console.")

        @ArgumentParser.Argument(help: "The account's email.")
        var email: String

        func run() async throws { try await AdminCommand.set(email: email, admin: true) }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Take the admin role away from the account with EMAIL; its console sessions end at their next request.")

        @ArgumentParser.Argument(help: "The account's email.")
        var email: String

        func run() async throws { try await AdminCommand.set(email: email, admin: false) }
    }

    /// Exits 0 when the role was set, 1 (with a message) when no account has the email.
    static func set(email: String, admin: Bool) async throws {
        let configuration = try loadConfiguration(hostname: nil, port: nil)
        let app = try await makeApplication(configuration)
        let found: Bool
        do {
            found = try await ChorusApp.setAdmin(app, configuration: configuration, email: email, admin: admin)
        } catch {
            try? await app.asyncShutdown()
            throw error
        }
        try await app.asyncShutdown()
        guard found else {
            FileHandle.standardError.write(Data("chorus: no account has the email \(email)\n".utf8))
            throw ExitCode(1)
        }
        print(admin ? "\(email) is now an admin of the console." : "\(email) is no longer an admin of the console.")
    }
}
