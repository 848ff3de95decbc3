import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOPosix
import Testing

@testable import ChorusSandbox

/// The `chorus` executable, run as a user runs it.
@Suite("chorus command line")
struct CLITests {
    /// A finished run: its exit status and its standard output and error together.
    struct Run {
        var status: Int32
        var output: String
    }

    /// A finished run with standard output and standard error apart.
    struct SplitRun {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The `chorus` binary built next to this test bundle.
    static var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("chorus")
    }

    /// Runs `chorus arguments` with only `environment` (and the test's PATH unless it has one) set, output and error
    /// together.
    static func run(_ arguments: [String], environment: [String: String], in directory: URL) throws -> Run {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment.merging(["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"]) { given, _ in given }
        process.currentDirectoryURL = directory
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }

    /// Runs `chorus arguments` with only `environment` (and PATH) set, feeding `input` to its standard input, and keeps
    /// its standard output and error apart (through files, so neither pipe can fill up).
    static func runSplit(_ arguments: [String], environment: [String: String], in directory: URL, input: Data? = nil) throws -> SplitRun {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment.merging(["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"]) { $1 }
        process.currentDirectoryURL = directory
        let name = UUID().uuidString.prefix(8)
        let outURL = directory.appendingPathComponent(".stdout-\(name)")
        let errURL = directory.appendingPathComponent(".stderr-\(name)")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: outURL)
            try? FileManager.default.removeItem(at: errURL)
        }
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        process.standardOutput = out
        process.standardError = err
        let stdin = Pipe()
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(input) }
        try stdin.fileHandleForWriting.close()
        process.waitUntilExit()
        try out.close()
        try err.close()
        return SplitRun(
            status: process.terminationStatus, stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }

    /// A fresh directory under the temporary directory.
    static func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-cli-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test("chorus sandbox with the server's data directory signs purchases that server accepts")
    func standaloneSandboxAppStore() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await ServeProcess.start(in: directory)
        defer { server.stop() }
        let http = HTTPClient.shared
        let registered = try await server.request(
            http, .POST, "/auth/register", json: #"{"email":"standalone@example.com","password":"Correct-Horse-42"}"#)
        let token = try #require(registered.json["access_token"] as? String)

        let sandbox = Process()
        sandbox.executableURL = Self.executable
        sandbox.arguments = ["sandbox", "--port", "0", "--data-dir", server.environment["CHORUS_DATA_DIR"]!]
        sandbox.environment = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"]
        let output = Pipe()
        sandbox.standardOutput = output
        sandbox.standardError = FileHandle.nullDevice
        try sandbox.run()
        defer {
            sandbox.terminate()
            sandbox.waitUntilExit()
        }
        var banner = ""
        while !banner.contains("Requests and messages received") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            banner += String(decoding: chunk, as: UTF8.self)
        }
        let base = try #require(banner.split(separator: "\n").first?.split(separator: " ").last.map(String.init), "\(banner)")

        var purchase = HTTPClientRequest(url: base + "/app-store/purchases")
        purchase.method = .POST
        purchase.headers.add(name: "Content-Type", value: "application/json")
        purchase.body = .bytes(ByteBuffer(string: #"{"product_id":"speech_assistant_addon_calls","kind":"consumable"}"#))
        let issued = try await http.execute(purchase, timeout: .seconds(30))
        #expect(issued.status == .created)
        let body = try await issued.body.collect(upTo: 1 << 20)
        let jws = try #require((try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])?["signed_transaction"] as? String)
        let bought = try await server.request(
            http, .POST, "/mobile/purchase-subscription", token: token,
            json: #"{"product_id":"speech_assistant_addon_calls","signed_transaction":"\#(jws)"}"#)
        #expect(bought.status == 200, "\(bought.text)")
    }

    /// Runs `chorus arguments` like ``run(_:environment:in:)`` but stops it (SIGKILL) if it has not exited within
    /// `timeout`: a server that started after all does not hang the test.
    static func runBriefly(_ arguments: [String], environment: [String: String], in directory: URL, timeout: Duration = .seconds(120)) async throws -> Run {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment.merging(["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"]) { given, _ in given }
        process.currentDirectoryURL = directory
        let log = directory.appendingPathComponent(".output-\(UUID().uuidString.prefix(8))")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: log) }
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        try handle.close()
        return Run(status: process.terminationStatus, output: String(decoding: try Data(contentsOf: log), as: UTF8.self))
    }

    /// `chorus sandbox --port 0` with `environment`, once it printed its banner; its base URL.
    static func startSandbox(environment: [String: String], in directory: URL) throws -> (process: Process, base: String) {
        let sandbox = Process()
        sandbox.executableURL = executable
        sandbox.arguments = ["sandbox", "--port", "0", "--data-dir", directory.appendingPathComponent("data").path]
        sandbox.environment = environment
        let output = Pipe()
        sandbox.standardOutput = output
        sandbox.standardError = FileHandle.nullDevice
        try sandbox.run()
        var banner = ""
        while !banner.contains("Requests and messages received") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            banner += String(decoding: chunk, as: UTF8.self)
        }
        guard let base = banner.split(separator: "\n").first?.split(separator: " ").last.map(String.init), base.hasPrefix("http") else {
            sandbox.terminate()
            sandbox.waitUntilExit()
            throw ServeProcessError(log: banner)
        }
        return (sandbox, base)
    }

    /// The sandbox OpenAI emulator's WAV speech for `text` in `voice`.
    static func sandboxSpeech(_ base: String, _ text: String, voice: String) async throws -> Data {
        var request = HTTPClientRequest(url: base + "/openai/v1/audio/speech")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: #"{"model":"tts-1","input":"\#(text)","voice":"\#(voice)","response_format":"wav"}"#))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 16 << 20)
        #expect(response.status == .ok)
        return Data(buffer: body)
    }

    @Test("sandbox speech is the synthetic voice with espeak-ng on the PATH; espeak-ng only when CHORUS_SANDBOX_SPEECH asks, at the voice's pitch")
    func sandboxSpeechEngine() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A fake espeak-ng: notes its arguments and prints three seconds of a tone, nothing like the synthetic voice.
        let bin = directory.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let arguments = directory.appendingPathComponent("espeak-arguments")
        let tone = (0..<48_000).map { Int16(8_000 * sin(2 * Double.pi * 300 * Double($0) / 16_000)) }
        let toneFile = directory.appendingPathComponent("tone.wav")
        try SandboxAudioFiles.wav(pcm16: tone, sampleRate: 16_000, text: "tone").write(to: toneFile)
        let script = bin.appendingPathComponent("espeak-ng")
        try Data("#!/bin/sh\nprintf '%s\\n' \"$@\" > '\(arguments.path)'\n/bin/cat '\(toneFile.path)'\n".utf8).write(to: script)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        let path = bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin")
        let text = "Hello from the sandbox"
        let synthetic = Double(SandboxSpeech.synthetic(text, voice: SandboxAudioFiles.pitchIndex("alloy")).count) / 8_000

        let plain = try Self.startSandbox(environment: ["PATH": path], in: directory)
        let plainAudio = try await Self.sandboxSpeech(plain.base, text, voice: "alloy")
        plain.process.terminate()
        plain.process.waitUntilExit()
        #expect(!FileManager.default.fileExists(atPath: arguments.path), "espeak-ng ran without being asked for")
        let plainSeconds = try #require(SandboxAudioFiles.durationSeconds(of: plainAudio))
        #expect(abs(plainSeconds - synthetic) < 0.01, "\(plainSeconds) s against the synthetic \(synthetic) s")

        let asked = try Self.startSandbox(environment: ["PATH": path, "CHORUS_SANDBOX_SPEECH": "espeak-ng"], in: directory)
        let askedAudio = try await Self.sandboxSpeech(asked.base, text, voice: "alloy")
        asked.process.terminate()
        asked.process.waitUntilExit()
        let passed = try String(contentsOf: arguments, encoding: .utf8).split(separator: "\n").map(String.init)
        let pitch = String(SandboxSpeech.espeakPitch(voice: SandboxAudioFiles.pitchIndex("alloy")))
        #expect(passed == ["--stdout", "-s", "165", "-p", pitch, "--", text])
        let askedSeconds = try #require(SandboxAudioFiles.durationSeconds(of: askedAudio))
        #expect(abs(askedSeconds - 3) < 0.01, "\(askedSeconds) s, not the fake espeak-ng's 3 s")

        // Asked for but not installed: one line naming the setting, exit 78, from both commands.
        let empty = directory.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let missing = ["PATH": empty.path, "CHORUS_SANDBOX_SPEECH": "espeak-ng", "CHORUS_DATA_DIR": directory.appendingPathComponent("data").path]
        for command in [["sandbox", "--port", "0"], ["serve", "--port", "0"]] {
            let refused = try await Self.runBriefly(command, environment: missing, in: directory)
            #expect(refused.status == 78, "\(command): \(refused.output)")
            #expect(refused.output.contains("chorus: CHORUS_SANDBOX_SPEECH=espeak-ng, but espeak-ng is not installed"), "\(refused.output)")
            #expect(!refused.output.contains("listening"))
        }
        let unknown = try await Self.runBriefly(["serve"], environment: ["CHORUS_SANDBOX_SPEECH": "festival"], in: directory)
        #expect(unknown.status == 78)
        #expect(unknown.output.contains(#"CHORUS_SANDBOX_SPEECH="festival" is not valid: expected synthetic or espeak-ng"#), "\(unknown.output)")
    }

    @Test("a port in use: one line naming it and how to choose another, exit 69, never \"listening\" (serve and sandbox)")
    func portInUse() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let holder = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(holder.localAddress?.port)
        let environment = [
            "CHORUS_PORT": "\(port)", "CHORUS_DATA_DIR": directory.appendingPathComponent("data").path,
            "CHORUS_DATABASE_URL": directory.appendingPathComponent("chorus.sqlite").path,
        ]
        let serve = try await Self.runBriefly(["serve"], environment: environment, in: directory)
        let sandbox = try await Self.runBriefly(
            ["sandbox", "--port", "\(port)", "--data-dir", directory.appendingPathComponent("data").path], environment: [:], in: directory)
        try await holder.close()

        #expect(serve.status == 69, "\(serve.output)")
        #expect(
            serve.output.contains(
                "chorus: port \(port) on 127.0.0.1 is already in use: stop what listens there, or choose another port with --port N or CHORUS_PORT=N"),
            "\(serve.output)")
        #expect(!serve.output.lowercased().contains("listening"), "\(serve.output)")
        #expect(!serve.output.contains("errno"), "\(serve.output)")
        #expect(serve.output.split(separator: "\n").last?.hasPrefix("chorus: port") == true, "\(serve.output)")

        #expect(sandbox.status == 69, "\(sandbox.output)")
        #expect(sandbox.output.contains("chorus: port \(port) on 127.0.0.1 is already in use"), "\(sandbox.output)")
        #expect(sandbox.output.contains("--port N"))
        #expect(!sandbox.output.lowercased().contains("listening"), "\(sandbox.output)")
        #expect(!sandbox.output.contains("errno"), "\(sandbox.output)")

        // Once the port is free the log says "Chorus listening" with the port really bound.
        let server = try await ServeProcess.start(in: directory, environment: ["CHORUS_LOG_LEVEL": "notice"])
        server.stop()
        let logged = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("serve-") }
            .compactMap { try? String(contentsOf: directory.appendingPathComponent($0), encoding: .utf8) }.joined()
        #expect(logged.contains("Chorus listening"), "\(logged)")
        #expect(logged.contains("address=http://127.0.0.1:\(server.baseURL.split(separator: ":").last ?? "")"), "\(logged)")
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
        #expect(
            result.output.contains(#"chorus: CHORUS_PORT="eighty" is not valid: expected a whole number from 0 to 65535 (see docs/configuration.md)."#),
            "\(result.output)")
        #expect(result.output.contains(#"chorus: CHORUS_RATE_LIMITS="fast" is not valid: expected off, default, or limits such as"#))
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

    // MARK: App Store tools

    /// An Apple-signed sample transaction (bundle `com.audaos.audarecorder`, Sandbox, signed 2022-03-04).
    static let appleSample = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("ChorusProvidersTests/Fixtures/AppStore/samples/gopay-sbx-txn-20220304t094328.jws")

    @Test("appstore verify: an Apple sample verifies without requirements, fails a bundle id naming the reason; unreadable file 66")
    func verifyAppleSample() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = ["CHORUS_DATA_DIR": directory.appendingPathComponent("data").path]

        let valid = try Self.runSplit(["appstore", "verify", Self.appleSample.path], environment: environment, in: directory)
        #expect(valid.status == 0, "\(valid.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(valid.stdout.utf8)) as? [String: Any]
        #expect(json?["transactionId"] as? String == "2000000004047119")
        #expect(json?["bundleId"] as? String == "com.audaos.audarecorder")
        #expect(valid.stderr.hasPrefix("verified transaction"))
        // Verifying never creates the sandbox authority.
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("data").path))

        let fromStdin = try Self.runSplit(
            ["appstore", "verify", "-"], environment: environment, in: directory, input: try Data(contentsOf: Self.appleSample) + Data("\n\n".utf8))
        #expect(fromStdin.status == 0, "\(fromStdin.stderr)")
        #expect(fromStdin.stdout == valid.stdout)

        let wrongBundle = try Self.runSplit(
            ["appstore", "verify", Self.appleSample.path, "--bundle-id", "com.chorus.speechassistant"], environment: environment, in: directory)
        #expect(wrongBundle.status == 1)
        #expect(wrongBundle.stdout.isEmpty)
        #expect(wrongBundle.stderr.contains("rejected: bundleId com.audaos.audarecorder is not com.chorus.speechassistant"), "\(wrongBundle.stderr)")

        let wrongEnvironment = try Self.runSplit(
            ["appstore", "verify", Self.appleSample.path, "--environment", "Production"], environment: environment, in: directory)
        #expect(wrongEnvironment.status == 1)
        #expect(
            wrongEnvironment.stderr.contains("rejected: environment Sandbox is not accepted (accepted: Production)"), "\(wrongEnvironment.stderr)")

        let missing = try Self.runSplit(
            ["appstore", "verify", directory.appendingPathComponent("none.jws").path], environment: environment, in: directory)
        #expect(missing.status == 66)
        #expect(missing.stderr.contains("cannot read"))

        // `chorus sandbox` still runs the emulators by default and parses their options.
        let badPort = try Self.run(["sandbox", "--port", "99999"], environment: [:], in: directory)
        #expect(badPort.status != 0)
        #expect(badPort.output.contains("--port must be between 0 and 65535"))
        // The talk time of answered calls (the cluster bench's calls end by it) is bounded like the server's setting.
        for talk in ["-1", "86401", "nan"] {
            let badTalk = try Self.run(["sandbox", "--port", "0", "--talk-seconds=\(talk)"], environment: [:], in: directory)
            #expect(badTalk.status != 0, "--talk-seconds \(talk)")
            #expect(badTalk.output.contains("--talk-seconds must be between 0 and 86400"), "\(badTalk.output)")
        }
    }

    @Test("sandbox appstore purchase and notify against a running server; appstore verify on the purchase")
    func sandboxAppStoreAgainstServer() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await ServeProcess.start(in: directory)
        defer { server.stop() }
        let environment = server.environment
        let http = HTTPClient.shared

        let email = "cli-buyer@example.com"
        let registered = try await server.request(
            http, .POST, "/auth/register", json: #"{"email":"\#(email)","password":"Correct-Horse-42"}"#)
        #expect(registered.status == 200, "\(registered.text)")
        let token = try #require(registered.json["access_token"] as? String)

        // Refusals: an unknown account or product exits 1; production exits 78.
        let unknownUser = try Self.runSplit(
            ["sandbox", "appstore", "purchase", "--user", "nobody@example.com", "--product", "speech_assistant_basic_weekly"],
            environment: environment, in: directory)
        #expect(unknownUser.status == 1)
        #expect(unknownUser.stdout.isEmpty)
        #expect(unknownUser.stderr.contains("no account is registered with the email nobody@example.com"), "\(unknownUser.stderr)")
        let unknownProduct = try Self.runSplit(
            ["sandbox", "appstore", "purchase", "--user", email, "--product", "gold_bars"], environment: environment, in: directory)
        #expect(unknownProduct.status == 1)
        #expect(unknownProduct.stderr.contains("unknown product gold_bars"))
        let production = try Self.runSplit(
            ["sandbox", "appstore", "purchase", "--user", email, "--product", "speech_assistant_basic_weekly"],
            environment: environment.merging(["CHORUS_ENVIRONMENT": "production"]) { $1 }, in: directory)
        #expect(production.status == 78)

        // A purchase: one line on stdout, which the server accepts for that account.
        let purchase = try Self.runSplit(
            ["sandbox", "appstore", "purchase", "--user", email.uppercased(), "--product", "speech_assistant_basic_weekly"],
            environment: environment, in: directory)
        #expect(purchase.status == 0, "\(purchase.stderr)")
        let jws = purchase.stdout.trimmingCharacters(in: .newlines)
        #expect(!jws.contains("\n") && jws.split(separator: ".").count == 3, "\(purchase.stdout)")
        let bought = try await server.request(
            http, .POST, "/mobile/purchase-subscription", token: token,
            json: #"{"product_id":"speech_assistant_basic_weekly","signed_transaction":"\#(jws)"}"#)
        #expect(bought.status == 200, "\(bought.text)")
        let status = try await server.request(http, .GET, "/mobile/subscription-status", token: token)
        #expect(status.json["is_subscribed"] as? Bool == true, "\(status.text)")
        #expect(status.json["subscription_status"] as? String == "active")
        let originalTransactionID = try #require(status.json["app_store_transaction_id"] as? String)

        // appstore verify trusts the sandbox authority in the data directory.
        let jwsFile = directory.appendingPathComponent("purchase.jws")
        try Data(purchase.stdout.utf8).write(to: jwsFile)
        let verified = try Self.runSplit(
            ["appstore", "verify", jwsFile.path, "--bundle-id", "com.chorus.speechassistant", "--environment", "Sandbox"],
            environment: environment, in: directory)
        #expect(verified.status == 0, "\(verified.stderr)")
        let payload = try JSONSerialization.jsonObject(with: Data(verified.stdout.utf8)) as? [String: Any]
        #expect(payload?["transactionId"] as? String == originalTransactionID)
        #expect(payload?["productId"] as? String == "speech_assistant_basic_weekly")
        #expect(payload?["type"] as? String == "Auto-Renewable Subscription")

        // A tampered payload (another product, same signature) is rejected.
        var parts = jws.split(separator: ".").map(String.init)
        let decoded = try #require(CompactJWS.decode(parts[1]))
        let forged = String(decoding: decoded, as: UTF8.self).replacingOccurrences(of: "basic_weekly", with: "premium_monthly")
        parts[1] = CompactJWS.base64URL(Data(forged.utf8))
        let tamperedFile = directory.appendingPathComponent("tampered.jws")
        try Data(parts.joined(separator: ".").utf8).write(to: tamperedFile)
        let tampered = try Self.runSplit(["appstore", "verify", tamperedFile.path], environment: environment, in: directory)
        #expect(tampered.status == 1)
        #expect(tampered.stdout.isEmpty)
        #expect(tampered.stderr.contains("rejected: the ES256 signature does not verify"), "\(tampered.stderr)")

        // A notification about the stored subscription reaches the webhook and is applied from the job queue.
        let unknownSubscription = try Self.runSplit(
            ["sandbox", "appstore", "notify", "--type", "EXPIRED", "--original-transaction-id", "42"], environment: environment, in: directory)
        #expect(unknownSubscription.status == 1)
        #expect(unknownSubscription.stderr.contains("42"))
        let notify = try Self.runSplit(
            [
                "sandbox", "appstore", "notify", "--type", "DID_CHANGE_RENEWAL_STATUS", "--subtype", "AUTO_RENEW_DISABLED",
                "--original-transaction-id", originalTransactionID,
            ],
            environment: environment, in: directory)
        #expect(notify.status == 0, "\(notify.stderr)")
        #expect(notify.stdout.contains("Notification received"), "\(notify.stdout)")
        #expect(notify.stderr.contains("HTTP 200"))
        var subscriptionStatus: String?
        for _ in 0..<50 {
            let reply = try await server.request(http, .GET, "/mobile/subscription-status", token: token)
            subscriptionStatus = reply.json["subscription_status"] as? String
            if subscriptionStatus == "cancelled" { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(subscriptionStatus == "cancelled")

        // A notification the server rejects (signed by an authority it does not trust) exits 1 with its answer.
        let strangerData = directory.appendingPathComponent("other-data")
        let rejected = try Self.runSplit(
            ["sandbox", "appstore", "notify", "--type", "DID_RENEW", "--original-transaction-id", originalTransactionID],
            environment: environment.merging(["CHORUS_DATA_DIR": strangerData.path]) { $1 }, in: directory)
        #expect(rejected.status == 1)
        #expect(rejected.stdout.contains("Invalid signedPayload"), "\(rejected.stdout)")
        #expect(rejected.stderr.contains("HTTP 400"))
    }
}

/// `chorus serve` as a child process on a free loopback port, with a SQLite database and data directory in a
/// scratch directory.
final class ServeProcess {
    /// The environment the server runs with; the CLI tools use the same one.
    let environment: [String: String]
    /// `http://127.0.0.1:<port>`.
    let baseURL: String
    private let process: Process

    private init(process: Process, environment: [String: String], baseURL: String) {
        self.process = process
        self.environment = environment
        self.baseURL = baseURL
    }

    /// Starts the server (with `extra` over the usual environment) and waits until `GET /health` answers; a port taken
    /// in between is retried with another.
    static func start(in directory: URL, environment extra: [String: String] = [:]) async throws -> ServeProcess {
        var lastLog = ""
        for _ in 1...5 {
            let port = try freePort()
            let environment = [
                "CHORUS_DATA_DIR": directory.appendingPathComponent("data").path,
                "CHORUS_DATABASE_URL": directory.appendingPathComponent("chorus.sqlite").path,
                "CHORUS_PORT": "\(port)", "CHORUS_JOB_POLL_SECONDS": "0.1", "CHORUS_LOG_LEVEL": "warning", "CHORUS_RATE_LIMITS": "off",
                "CHORUS_JWT_SECRET": "cli-test-secret-cli-test-secret-0123456789",
                "CHORUS_NUMBER_HASH_SECRET": "cli-number-hash-secret-cli-number-hash-0123",
            ].merging(extra) { $1 }
            let log = directory.appendingPathComponent("serve-\(port).log")
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            let process = Process()
            process.executableURL = CLITests.executable
            process.arguments = ["serve"]
            process.environment = environment.merging(["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"]) { $1 }
            process.currentDirectoryURL = directory
            let handle = try FileHandle(forWritingTo: log)
            process.standardOutput = handle
            process.standardError = handle
            try process.run()
            let server = ServeProcess(process: process, environment: environment, baseURL: "http://127.0.0.1:\(port)")
            let http = HTTPClient.shared
            for _ in 0..<600 where process.isRunning {
                if let reply = try? await server.request(http, .GET, "/health"), reply.status == 200 { return server }
                try await Task.sleep(for: .milliseconds(100))
            }
            server.stop()
            lastLog = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        }
        throw ServeProcessError(log: lastLog)
    }

    /// The server's process id (to signal it).
    var processIdentifier: Int32 { process.processIdentifier }

    /// Its exit status once it exits within `timeout`; `nil` if it still runs.
    func exitStatus(within timeout: Duration) async throws -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        return process.isRunning ? nil : process.terminationStatus
    }

    /// Stops the server (SIGTERM) and waits for it.
    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    /// An answer: status and body.
    struct Reply {
        var status: Int
        var text: String
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:] }
    }

    /// Sends a request with an optional bearer token and JSON body.
    func request(_ http: HTTPClient, _ method: HTTPMethod, _ path: String, token: String? = nil, json: String? = nil) async throws -> Reply {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: json))
        }
        let response = try await http.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        return Reply(status: Int(response.status.code), text: String(buffer: body))
    }

    /// A port nothing listens on right now.
    private static func freePort() throws -> Int {
        let channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).wait()
        defer { try? channel.close().wait() }
        guard let port = channel.localAddress?.port else { throw ServeProcessError(log: "no free port") }
        return port
    }
}

/// `chorus serve` did not come up; `log` is what it printed.
struct ServeProcessError: Error, CustomStringConvertible {
    let log: String
    var description: String { "chorus serve did not start:\n\(log)" }
}
