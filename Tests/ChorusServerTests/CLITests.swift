import Foundation
import Testing

/// The `chorus` executable, run as a user runs it.
@Suite("chorus command line")
struct CLITests {
    struct Run {
        var status: Int32
        var output: String
    }

    /// The `chorus` binary built next to this test bundle.
    static var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("chorus")
    }

    static func run(_ arguments: [String], environment: [String: String], in directory: URL) throws -> Run {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment.merging(["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"]) { $1 }
        process.currentDirectoryURL = directory
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }

    static func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-cli-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test("production refuses to start, one message per problem, exit 78")
    func productionRefusal() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try Self.run(["serve"], environment: ["CHORUS_ENVIRONMENT": "production"], in: directory)
        #expect(result.status == 78)
        #expect(result.output.contains("chorus: CHORUS_JWT_SECRET is required in production"))
        #expect(result.output.contains("chorus: CHORUS_PUBLIC_URL is required in production"))
        #expect(result.output.contains("chorus: Telephony would use the sandbox"))
        #expect(result.output.contains("chorus: The calls' AI voice would use the sandbox"))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("chorus.sqlite").path))
    }

    @Test("malformed configuration is reported per key, exit 78")
    func malformed() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try Self.run(["serve"], environment: ["CHORUS_PORT": "eighty", "CHORUS_RATE_LIMITS": "fast"], in: directory)
        #expect(result.status == 78)
        #expect(result.output.contains("CHORUS_PORT has an invalid value"))
        #expect(result.output.contains("CHORUS_RATE_LIMITS has an invalid value"))
        let badPort = try Self.run(["serve", "--port", "99999"], environment: [:], in: directory)
        #expect(badPort.status != 0)
        #expect(badPort.output.contains("--port must be between 0 and 65535"))
    }

    @Test("migrate creates the default SQLite database in the working directory")
    func migrate() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try Self.run(["migrate"], environment: ["CHORUS_LOG_LEVEL": "notice"], in: directory)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("migrations complete"))
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("chorus.sqlite").path))
        let again = try Self.run(["migrate"], environment: [:], in: directory)
        #expect(again.status == 0)
    }
}
