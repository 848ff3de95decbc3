import ArgumentParser
import AsyncHTTPClient
import ChorusAPI
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// A long-running Chorus must hold its memory flat under a steady load: calls placed through `POST /test/test-call`
/// and text messages sent, in repeated cycles, with the server's resident memory and open descriptors read after each
/// cycle has settled.
///
/// The server runs as a `chorus serve` child process (the release binary next to this one), so its figures are its
/// own and not the load generator's. `embedded` mode uses the emulators the server mounts under `/sandbox`;
/// `standalone` mode points it at a `chorus sandbox serve` child, whose figures are printed too.
struct Soak: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Repeated cycles of calls and messages: the server's RSS and open descriptors after each (memory that never comes back).")

    @ArgumentParser.Option(help: "embedded (the server's own /sandbox emulators), standalone (a `chorus sandbox serve` child) or both.")
    var mode = "both"

    @ArgumentParser.Option(help: "Cycles per mode.")
    var cycles = 6

    @ArgumentParser.Option(help: "Cycles not counted in the growth figure (caches and pools filling up).")
    var warmUp = 2

    @ArgumentParser.Option(help: "Calls placed per cycle (through POST /test/test-call).")
    var calls = 60

    @ArgumentParser.Option(help: "Calls in progress at once.")
    var concurrency = 20

    @ArgumentParser.Option(help: "Seconds each callee stays on the line.")
    var callSeconds = 4.0

    @ArgumentParser.Option(help: "Text messages sent per cycle.")
    var messages = 60

    @ArgumentParser.Option(help: "Seconds of reads (GET /mobile/usage-stats) at --read-connections per cycle, alongside the calls.")
    var readSeconds = 0.0

    @ArgumentParser.Option(help: "Connections of the reads.")
    var readConnections = 32

    @ArgumentParser.Option(help: "Seconds to wait after a cycle before reading memory.")
    var settle = 10.0

    func validate() throws {
        guard ["embedded", "standalone", "both"].contains(mode) else { throw ValidationError("--mode is embedded, standalone or both") }
        guard cycles > 0, calls > 0, concurrency > 0, messages >= 0, readConnections > 0 else {
            throw ValidationError("--cycles, --calls, --concurrency and --read-connections must be positive, --messages not negative")
        }
        guard (0..<cycles).contains(warmUp) else { throw ValidationError("--warm-up must be below --cycles") }
        guard callSeconds >= 1, callSeconds <= 600, settle >= 0, readSeconds >= 0 else {
            throw ValidationError("--call-seconds is 1…600; --settle and --read-seconds must not be negative")
        }
    }

    func run() async throws {
        let clientGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let client = HTTPClient(
            eventLoopGroupProvider: .shared(clientGroup),
            configuration: .init(connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)))
        var summaries: [String] = []
        do {
            for each in mode == "both" ? ["embedded", "standalone"] : [mode] {
                summaries.append(try await soak(standalone: each == "standalone", http: BenchHTTP(client: client), group: clientGroup))
            }
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
        try await clientGroup.shutdownGracefully()
        print("")
        summaries.forEach { print($0) }
    }

    /// One mode: starts the processes, runs the cycles, prints a line per cycle and returns the summary line.
    private func soak(standalone: Bool, http: BenchHTTP, group: any EventLoopGroup) async throws -> String {
        let name = standalone ? "standalone" : "embedded"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-soak-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let accountSID = "AC" + String(repeating: "0", count: 31) + "3"
        let authToken = ChorusBridgeBench.randomHex(32)
        var environment = [
            "CHORUS_ENVIRONMENT": "development",
            "CHORUS_DATABASE_URL": directory.appendingPathComponent("soak.sqlite").path,
            "CHORUS_DATA_DIR": directory.appendingPathComponent("data").path,
            "CHORUS_RATE_LIMITS": "off", "CHORUS_LOG_LEVEL": "error", "CHORUS_TWILIO_CALLS_PER_SECOND": "1000",
            // Load runs at any hour and calls the same numbers again and again (issue 17's rules would refuse them).
            "CHORUS_CALL_HOURS": "any", "CHORUS_CALLS_PER_NUMBER_PER_DAY": "off", "CHORUS_ACCOUNTS_PER_NUMBER_PER_WEEK": "off",
            "CHORUS_SANDBOX_RING_SECONDS": "0.5", "CHORUS_TRIAL_CALL_SECONDS": String(Int(callSeconds) + 60),
        ]
        var sandbox: ChildProcess?
        if standalone {
            let port = try freeLoopbackPort()
            let child = try ChildProcess(arguments: [
                "sandbox", "serve", "--port", String(port), "--account-sid", accountSID, "--auth-token", authToken, "--ring-seconds", "0.5",
                "--data-dir", directory.appendingPathComponent("data").path,
            ])
            sandbox = child
            environment.merge([
                "CHORUS_TWILIO_ACCOUNT_SID": accountSID, "CHORUS_TWILIO_AUTH_TOKEN": authToken, "CHORUS_TWILIO_FROM_NUMBER": "+15005550006",
                "CHORUS_TWILIO_API_BASE_URL": "http://127.0.0.1:\(port)", "CHORUS_OPENAI_BASE_URL": "http://127.0.0.1:\(port)/openai/v1",
            ]) { $1 }
            try await waitUntilListening(http, "http://127.0.0.1:\(port)/requests")
        }
        defer { sandbox?.stop() }
        let port = try freeLoopbackPort()
        let server = try ChildProcess(arguments: ["serve", "--hostname", "127.0.0.1", "--port", String(port)], environment: environment)
        defer { server.stop() }
        let base = "http://127.0.0.1:\(port)"
        try await waitUntilListening(http, base + "/health")
        let emulators = sandbox.map { _ in environment["CHORUS_TWILIO_API_BASE_URL"]! } ?? base + "/sandbox"

        // One caller per concurrent call, each with its own callee; two people who message each other.
        var callers: [String] = []
        for slot in 0..<concurrency {
            callers.append(try await register(http, base: base, email: "soak-\(slot)@bench.test"))
            let callee = #"""
                {"behavior":"answer","lines":["Hello? Who is this?","Right, that makes sense.","Okay, thank you."],"reply_after_ms":600,"hangup_after_seconds":\#(callSeconds)}
                """#
            _ = try await http.object(.PUT, emulators + "/callees/" + Self.number(slot).replacingOccurrences(of: "+", with: "%2B"), json: callee)
        }
        let alice = try await register(http, base: base, email: "alice@bench.test")
        let bob = try await register(http, base: base, email: "bob@bench.test")
        for (token, displayName) in [(alice, "Alice"), (bob, "Bob")] {
            _ = try await http.object(.PUT, base + "/me/profile", json: #"{"display_name":"\#(displayName)","birth_year":1980}"#, token: token)
        }
        let conversation = try await http.object(
            .POST, base + "/conversations", json: #"{"kind":"direct","member_emails":["bob@bench.test"]}"#, token: alice)
        guard let conversationID = conversation["id"] as? String else { throw ValidationError("no conversation id in \(conversation)") }
        // Bob is invited, not added: he accepts before he writes.
        let pending = try await http.object(.GET, base + "/invitations", token: bob)
        guard let invitations = pending["invitations"] as? [[String: Any]],
            let invitationID = invitations.first(where: { $0["conversation_id"] as? String == conversationID })?["id"] as? String
        else { throw ValidationError("no invitation for bob in \(pending)") }
        _ = try await http.object(.POST, base + "/invitations/\(invitationID)/accept", token: bob)

        print("")
        print("\(name): \(cycles) cycles of \(calls) calls (\(concurrency) at a time, \(Int(callSeconds)) s each) and \(messages) messages"
            + (readSeconds > 0 ? ", \(Int(readSeconds)) s of reads at \(readConnections) connections" : "")
            + "; figures \(Int(settle)) s after each cycle")
        print(sandbox == nil
            ? "cycle  calls  failed  msgs   server RSS MiB   Δ MiB   fds"
            : "cycle  calls  failed  msgs   server RSS MiB   Δ MiB   fds   sandbox RSS MiB   Δ MiB   fds")
        let initial = (server: server.figures(), sandbox: sandbox?.figures())
        print(
            "start" + String(repeating: " ", count: 24) + String(format: "%14.1f          %4d", initial.server.residentMiB, initial.server.descriptors)
                + (initial.sandbox.map { String(format: "   %15.1f          %4d", $0.residentMiB, $0.descriptors) } ?? ""))
        var serverRSS = [initial.server.residentMiB]
        var sandboxRSS = [initial.sandbox?.residentMiB ?? 0]
        var sequence = 0
        for cycle in 1...cycles {
            let outcome = try await runCycle(http, base: base, group: group, port: port, callers: callers, cycle: cycle)
            for index in 0..<messages {
                sequence += 1
                let sender = index.isMultiple(of: 2) ? alice : bob
                _ = try await http.object(
                    .POST, base + "/conversations/\(conversationID)/messages",
                    json: #"{"client_message_id":"soak-\#(sequence)","send_mode":"text","content":"Soak message \#(sequence): see you at the game tonight."}"#,
                    token: sender)
            }
            try await Task.sleep(for: .milliseconds(Int64(settle * 1_000)))
            let figures = (server: server.figures(), sandbox: sandbox?.figures())
            let serverDelta = figures.server.residentMiB - serverRSS.last!
            serverRSS.append(figures.server.residentMiB)
            var line = String(
                format: "%5d  %5d  %6d  %4d   %14.1f   %+5.1f  %4d", cycle, outcome.placed, outcome.failed, messages, figures.server.residentMiB,
                serverDelta, figures.server.descriptors)
            if let figures = figures.sandbox {
                line += String(format: "   %15.1f   %+5.1f  %4d", figures.residentMiB, figures.residentMiB - sandboxRSS.last!, figures.descriptors)
                sandboxRSS.append(figures.residentMiB)
            }
            print(line)
        }
        func growth(_ series: [Double]) -> Double {
            // Least-squares slope over the cycles after the warm-up (MiB per cycle).
            let points = Array(series.enumerated().dropFirst(warmUp + 1))
            guard points.count > 1 else { return 0 }
            let meanX = Double(points.map(\.offset).reduce(0, +)) / Double(points.count)
            let meanY = points.map(\.element).reduce(0, +) / Double(points.count)
            let numerator = points.reduce(0.0) { $0 + (Double($1.offset) - meanX) * ($1.element - meanY) }
            let denominator = points.reduce(0.0) { $0 + pow(Double($1.offset) - meanX, 2) }
            return denominator == 0 ? 0 : numerator / denominator
        }
        let perCalls = 60.0 / Double(calls)
        var summary = String(
            format: "%@: server RSS %.1f → %.1f MiB; after %d warm-up cycles %+.2f MiB per cycle (%+.2f MiB per 60 calls, %+.1f KiB per call)",
            name, serverRSS.first!, serverRSS.last!, warmUp, growth(serverRSS), growth(serverRSS) * perCalls, growth(serverRSS) * 1_024 / Double(calls))
        if sandbox != nil {
            summary += String(
                format: "; sandbox %.1f → %.1f MiB, %+.2f MiB per cycle", sandboxRSS.first!, sandboxRSS.last!, growth(sandboxRSS))
        }
        return summary
    }

    /// Places `calls` calls, `concurrency` at a time, each followed to its end through its event stream (`done`);
    /// reads run alongside when asked.
    private func runCycle(
        _ http: BenchHTTP, base: String, group: any EventLoopGroup, port: Int, callers: [String], cycle: Int
    ) async throws -> (placed: Int, failed: Int) {
        let reads = Task { [readSeconds, readConnections] () -> Int in
            guard readSeconds > 0 else { return 0 }
            let outcome = try? await LoopbackLoad.run(
                host: "127.0.0.1", port: port, clients: readConnections, group: group,
                until: .now() + .milliseconds(Int64(readSeconds * 1_000))
            ) { client, _ in
                var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/mobile/usage-stats")
                head.headers.add(name: "Host", value: "127.0.0.1")
                head.headers.add(name: "Authorization", value: "Bearer \(callers[client % callers.count])")
                return (head, nil)
            }
            return outcome?.errors ?? 0
        }
        let perSlot = (0..<callers.count).map { slot in calls / callers.count + (slot < calls % callers.count ? 1 : 0) }
        let results = try await withThrowingTaskGroup(of: (Int, Int).self) { tasks in
            let callSeconds = callSeconds
            for (slot, count) in perSlot.enumerated() where count > 0 {
                tasks.addTask {
                    var (placed, failed) = (0, 0)
                    for _ in 0..<count {
                        if await Self.call(http, base: base, token: callers[slot], number: Self.number(slot), seconds: callSeconds) {
                            placed += 1
                        } else {
                            failed += 1
                        }
                    }
                    return (placed, failed)
                }
            }
            var total = (0, 0)
            for try await (placed, failed) in tasks { total = (total.0 + placed, total.1 + failed) }
            return total
        }
        _ = await reads.value
        return results
    }

    /// One call through `POST /test/test-call`, followed on `GET /mobile/calls/{sid}/events` until `done`.
    private static func call(_ http: BenchHTTP, base: String, token: String, number: String, seconds: Double) async -> Bool {
        guard
            let placed = try? await http.object(
                .POST, base + "/test/test-call", json: #"{"phone_number":"\#(number)","scenario":"default"}"#, token: token),
            let sid = placed["call_sid"] as? String
        else { return false }
        do {
            var request = HTTPClientRequest(url: base + "/mobile/calls/\(sid)/events")
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            let response = try await http.client.execute(request, timeout: .seconds(Int64(seconds) + 90))
            var text = ""
            for try await chunk in response.body {
                text += String(buffer: chunk)
                if text.contains("event: done") { return true }
                if text.utf8.count > 1 << 20 { return false }
            }
            return false
        } catch {
            return false
        }
    }

    private func register(_ http: BenchHTTP, base: String, email: String) async throws -> String {
        let reply = try await http.object(.POST, base + "/auth/register", json: #"{"email":"\#(email)","password":"benchmark-password"}"#)
        guard let token = reply["access_token"] as? String else { throw ValidationError("no access token for \(email)") }
        return token
    }

    private static func number(_ slot: Int) -> String { "+1415800" + String(format: "%04d", slot) }
}

/// A child process running the `chorus` executable beside this one, with its memory and descriptors read from /proc.
final class ChildProcess: @unchecked Sendable {
    struct Figures {
        var residentMiB: Double
        var descriptors: Int
    }

    private let process = Process()

    init(arguments: [String], environment: [String: String] = [:]) throws {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("chorus")
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw ValidationError("\(executable.path) not found: build it first (swift build -c release --product chorus)")
        }
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.standardError
        try process.run()
    }

    /// Resident memory (VmRSS) and open descriptors now.
    func figures() -> Figures {
        let pid = process.processIdentifier
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
        let kib = line.flatMap { Double($0.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "") } ?? 0
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
        return Figures(residentMiB: kib / 1_024, descriptors: descriptors)
    }

    func stop() {
        guard process.isRunning else { return }
        process.interrupt()
        process.waitUntilExit()
    }
}
