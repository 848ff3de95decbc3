import ArgumentParser
import AsyncHTTPClient
import ChorusAPI
import ChorusCore
import ChorusEmbeddedSandbox
import ChorusProviders
import ChorusSandbox
import ChorusServer
import Foundation
import Logging
import NIOCore
import NIOPosix
import Vapor

/// N concurrent sandbox calls through the real media bridge.
///
/// The emulators (Twilio REST + Media Streams, OpenAI Realtime) run in a separate `chorus sandbox` process so the
/// simulated callers never compete with the bridge inside this one; this process runs the Chorus server and places
/// the calls. Every callee talks, interrupts the AI once, and hangs up after `--seconds`.
struct Bridge: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Concurrent calls through the media bridge: relay latency, barge-in reaction, CPU, memory, losses, leaks.")

    @ArgumentParser.Option(help: "Concurrent calls.")
    var calls = 50

    @ArgumentParser.Option(help: "How long each callee stays on the line, in seconds.")
    var seconds = 20.0

    @ArgumentParser.Option(
        help: "Drive another Twilio-compatible bridge at this WebSocket URL instead of Chorus (no signatures, no call tokens).")
    var target: String?

    @ArgumentParser.Option(help: "With --target: the loopback port the OpenAI Realtime emulator listens on for that bridge.")
    var realtimePort: Int?

    @ArgumentParser.Option(
        help: "When each callee says its first line after answering, in ms (a person's \"Hello?\"); a negative value: it waits for the AI.")
    var calleeHelloMs = 300

    @ArgumentParser.Flag(
        inversion: .prefixedNo, help: "Twilio answering-machine detection (CHORUS_CALL_MACHINE_DETECTION): the AI's first words wait for it.")
    var machineDetection = true

    @ArgumentParser.Flag(
        inversion: .prefixedNo, help: "The disclosure every call opens with (CHORUS_CALL_DISCLOSURE; --no-disclosure turns it off to compare).")
    var disclosure = true

    func validate() throws {
        guard calls > 0 else { throw ValidationError("--calls must be positive") }
        guard seconds >= 3 else { throw ValidationError("--seconds must be at least 3") }
        if target != nil && realtimePort == nil { throw ValidationError("--target needs --realtime-port") }
        if let target, URL(string: target)?.scheme.map({ ["ws", "wss"].contains($0) }) != true {
            throw ValidationError("--target must be a ws:// or wss:// URL")
        }
    }

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .error
            return handler
        }
        if let target, let realtimePort {
            try await TargetBench(calls: calls, seconds: seconds, target: target, realtimePort: realtimePort).run()
            return
        }
        try await ChorusBridgeBench(
            calls: calls, seconds: seconds, calleeHelloMs: calleeHelloMs, machineDetection: machineDetection, disclosure: disclosure
        ).run()
    }
}

/// Process figures read from /proc.
enum ProcessProbe {
    /// CPU time (user + system) of this process, in milliseconds.
    static func cpuMilliseconds() -> Double {
        let (user, kernel) = cpuSplitMilliseconds()
        return user + kernel
    }

    /// CPU time of this process in user space and in the kernel (system calls, loopback TCP), in milliseconds.
    static func cpuSplitMilliseconds() -> (user: Double, kernel: Double) {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        func ms(_ time: timeval) -> Double { Double(time.tv_sec) * 1_000 + Double(time.tv_usec) / 1_000 }
        return (ms(usage.ru_utime), ms(usage.ru_stime))
    }

    /// Resident memory of this process, in bytes.
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
    }

    /// Open sockets of this process.
    static func openSockets() -> Int {
        let directory = "/proc/self/fd"
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return 0 }
        return entries.filter { ((try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\($0)")) ?? "").hasPrefix("socket:") }
            .count
    }
}

/// A `chorus sandbox` child process.
final class SandboxProcess: @unchecked Sendable {
    let process = Process()
    let port: Int
    var base: String { "http://127.0.0.1:\(port)" }

    /// `keptCalls`: ended calls the emulators keep; the figures are read from every call once all have ended.
    init(port: Int, accountSID: String, authToken: String, keptCalls: Int) throws {
        self.port = port
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("chorus")
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw ValidationError("\(executable.path) not found: build it first (swift build -c release --product chorus)")
        }
        process.executableURL = executable
        process.arguments = [
            "sandbox", "--port", String(port), "--account-sid", accountSID, "--auth-token", authToken, "--ring-seconds", "0.5",
            // Each kept call holds its recording and the audio played (8 kB/s each): 1 MB covers a minute of call.
            "--no-message-log", "--kept-calls", String(max(100, keptCalls)), "--kept-audio-bytes", String(max(100, keptCalls) * 1_000_000),
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    func stop() {
        guard process.isRunning else { return }
        process.interrupt()
        process.waitUntilExit()
    }
}

/// Small JSON HTTP helpers over one client.
struct BenchHTTP {
    let client: HTTPClient

    func send(_ method: HTTPMethod, _ url: String, json: String? = nil, token: String? = nil) async throws -> (Int, Data) {
        var request = HTTPClientRequest(url: url)
        request.method = method
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: json))
        }
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        let response = try await client.execute(request, timeout: .seconds(120))
        let body = try await response.body.collect(upTo: 64 << 20)
        return (Int(response.status.code), Data(buffer: body))
    }

    func object(_ method: HTTPMethod, _ url: String, json: String? = nil, token: String? = nil) async throws -> [String: Any] {
        let (status, body) = try await send(method, url, json: json, token: token)
        guard (200..<300).contains(status) else {
            throw ValidationError("\(method) \(url) answered \(status): \(String(decoding: body, as: UTF8.self).prefix(300))")
        }
        return (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
    }
}

/// A free TCP port on 127.0.0.1 (bound and released).
func freeLoopbackPort() throws -> Int {
    let channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).wait()
    let port = channel.localAddress!.port!
    try channel.close().wait()
    return port
}

func waitUntilListening(_ http: BenchHTTP, _ url: String) async throws {
    for _ in 0..<200 {
        if (try? await http.send(.GET, url)) != nil { return }
        try await Task.sleep(for: .milliseconds(50))
    }
    throw ValidationError("\(url) did not answer")
}

/// The figures both modes print.
struct BridgeReport {
    var calls: Int
    var relayToRealtime: LatencyHistogram?
    var relayToTwilio: LatencyHistogram?
    var bargeIn: LatencyHistogram
    var cpuMsPerCallSecond: Double?
    /// The kernel's share of ``cpuMsPerCallSecond``, 0–1.
    var kernelShare: Double? = nil
    var rssPerCallKiB: Double?
    var callSeconds: Double
    var framesLost: Int
    var leakedSockets: Int

    func print() {
        func ms(_ histogram: LatencyHistogram?, _ percentile: Double) -> String {
            guard let value = histogram?.percentile(percentile) else { return "n/a" }
            return String(format: "%.2f", Double(value) / 1_000)
        }
        Swift.print("calls: \(calls), call-seconds: \(String(format: "%.0f", callSeconds))")
        Swift.print(
            "relay Twilio→OpenAI   p50 \(ms(relayToRealtime, 50)) ms  p99 \(ms(relayToRealtime, 99)) ms  (\(relayToRealtime?.count ?? 0) frames)")
        Swift.print("relay OpenAI→Twilio   p50 \(ms(relayToTwilio, 50)) ms  p99 \(ms(relayToTwilio, 99)) ms  (\(relayToTwilio?.count ?? 0) frames)")
        Swift.print("barge-in reaction     p50 \(ms(bargeIn, 50)) ms  p99 \(ms(bargeIn, 99)) ms  (\(bargeIn.count) barge-ins)")
        Swift.print(
            "CPU per call-second   \(cpuMsPerCallSecond.map { String(format: "%.3f ms", $0) } ?? "n/a")"
                + (kernelShare.map { String(format: " (%.0f %% of it in the kernel)", $0 * 100) } ?? ""))
        Swift.print("RSS per call          \(rssPerCallKiB.map { String(format: "%.0f KiB", $0) } ?? "n/a")")
        Swift.print("frames lost \(framesLost), sockets left open \(leakedSockets)")
        let relayP99 = [relayToRealtime, relayToTwilio].compactMap { $0?.percentile(99) }.max()
        Swift.print(
            "calls=\(calls) relay_p99_ms=\(relayP99.map { String(format: "%.2f", Double($0) / 1_000) } ?? "n/a") "
                + "bargein_p99_ms=\(ms(bargeIn, 99)) cpu_ms_per_call_s=\(cpuMsPerCallSecond.map { String(format: "%.3f", $0) } ?? "n/a") "
                + "frames_lost=\(framesLost) leaked_sockets=\(leakedSockets)")
    }
}

/// The default mode: Chorus in this process, the emulators in a `chorus sandbox` child.
struct ChorusBridgeBench {
    let calls: Int
    let seconds: Double
    var calleeHelloMs = 300
    var machineDetection = true
    var disclosure = true

    func run() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-bridge-bench-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let accountSID = "AC" + String(repeating: "0", count: 31) + "1"
        let authToken = ChorusBridgeBench.randomHex(32)
        let sandbox = try SandboxProcess(port: try freeLoopbackPort(), accountSID: accountSID, authToken: authToken, keptCalls: calls)
        defer { sandbox.stop() }
        let clientGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let client = HTTPClient(
            eventLoopGroupProvider: .shared(clientGroup),
            configuration: .init(connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)))
        let http = BenchHTTP(client: client)
        try await waitUntilListening(http, sandbox.base + "/requests")

        let port = try freeLoopbackPort()
        let configuration = try ChorusConfiguration.load(
            from: [
                "CHORUS_DATABASE_URL": directory.appendingPathComponent("bench.sqlite").path,
                "CHORUS_DATA_DIR": directory.appendingPathComponent("data").path,
                "CHORUS_RATE_LIMITS": "off", "CHORUS_LOG_LEVEL": "error", "CHORUS_TWILIO_CALLS_PER_SECOND": "1000",
                // Load runs at any hour and calls the same numbers again and again (issue 17's rules would refuse them).
                "CHORUS_CALL_HOURS": "any", "CHORUS_CALLS_PER_NUMBER_PER_DAY": "off", "CHORUS_ACCOUNTS_PER_NUMBER_PER_WEEK": "off",
                // What the calls cost is measured (issue 18), not limited.
                "CHORUS_CALLS_DAILY_BUDGET_USD": "off", "CHORUS_CALLS_MONTHLY_BUDGET_USD": "off",
                "CHORUS_TRIAL_CALL_SECONDS": String(Int(seconds) + 30),
                "CHORUS_TWILIO_ACCOUNT_SID": accountSID, "CHORUS_TWILIO_AUTH_TOKEN": authToken,
                "CHORUS_TWILIO_FROM_NUMBER": "+15005550006", "CHORUS_TWILIO_API_BASE_URL": sandbox.base,
                "CHORUS_OPENAI_BASE_URL": sandbox.base + "/openai/v1",
                "CHORUS_CALL_MACHINE_DETECTION": machineDetection ? "true" : "false",
                "CHORUS_CALL_DISCLOSURE": disclosure ? "" : "off",
            ], hostname: "127.0.0.1", port: port)
        let app = try await Application.make(.production)
        app.logger.logLevel = .error
        var options = ChorusApp.Options()
        options.bcryptCost = 4
        let metrics = options.bridgeMetrics
        let embedded = try EmbeddedSandbox.forServer(app, configuration: configuration, clock: options.clock)
        let services = try await ChorusServices.live(app, configuration: configuration, embedded: embedded, options: options)
        try await ChorusApp.configure(app, services: services, options: options)
        try await app.asyncBoot()
        try await app.server.start(address: .hostname("127.0.0.1", port: port))
        let base = "http://127.0.0.1:\(port)"

        do {
            Swift.print("Preparing \(calls) callers…")
            var tokens: [String] = []
            for index in 0..<calls {
                let reply = try await http.object(
                    .POST, base + "/auth/register", json: #"{"email":"bridge\#(index)@example.com","password":"benchmark-password"}"#)
                tokens.append(reply["access_token"] as? String ?? "")
                // A person: "Hello?" as they pick up (unless --callee-hello-ms is negative), then a conversation with barge-ins.
                let hello = calleeHelloMs >= 0 ? #""first_line_after_ms":\#(calleeHelloMs),"# : ""
                let callee = #"""
                    {"behavior":"answer","lines":["Hello?","Oh, hold on, hold on, let me say something first.","Right, that makes sense.","Sure, go on.","Okay."],\#(hello)"interrupt_after_ms":1500,"reply_after_ms":600,"hangup_after_seconds":\#(seconds)}
                    """#
                _ = try await http.object(.PUT, sandbox.base + "/callees/%2B1415600\(String(format: "%04d", index))", json: callee)
            }
            try await Task.sleep(for: .seconds(1))
            let socketsBefore = ProcessProbe.openSockets()
            let rssBefore = ProcessProbe.residentBytes()
            let cpuBefore = ProcessProbe.cpuMilliseconds()
            Swift.print("Placing \(calls) calls of \(Int(seconds)) s…")
            let placed = try await withThrowingTaskGroup(of: (String, String).self) { group in
                for (index, token) in tokens.enumerated() {
                    group.addTask {
                        let number = "+1415600" + String(format: "%04d", index)
                        let reply = try await http.object(
                            .POST, base + "/mobile/make-call", json: #"{"phone_number":"\#(number)","scenario":"default"}"#, token: token)
                        return (token, reply["call_sid"] as? String ?? "")
                    }
                }
                return try await group.reduce(into: [(String, String)]()) { $0.append($1) }
            }
            // CPU is measured in the steady state: from when every call is bridged until the first callee hangs up.
            var steady: (cpu: Double, kernel: Double, start: ContinuousClock.Instant)?
            var steadyCPU: Double?
            var kernelShare: Double?
            let steadyEnd = ContinuousClock.now + .seconds(seconds - 1.5)
            // Sample memory while the calls run, until every call has ended.
            var peakRSS = rssBefore
            var records: [[String: Any]] = []
            let deadline = ContinuousClock.now + .seconds(seconds + 90)
            while ContinuousClock.now < deadline {
                peakRSS = max(peakRSS, ProcessProbe.residentBytes())
                let open = metrics.snapshot().openBridges
                if steady == nil, open == calls {
                    let split = ProcessProbe.cpuSplitMilliseconds()
                    steady = (split.user + split.kernel, split.kernel, ContinuousClock.now)
                }
                if let start = steady, steadyCPU == nil, ContinuousClock.now >= steadyEnd || open < calls {
                    let elapsed = ContinuousClock.now - start.start
                    let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                    if open == calls, wall > 1 {
                        let split = ProcessProbe.cpuSplitMilliseconds()
                        let used = split.user + split.kernel - start.cpu
                        steadyCPU = used / (wall * Double(calls))
                        kernelShare = used > 0 ? (split.kernel - start.kernel) / used : nil
                    } else {
                        steadyCPU = -1
                    }
                }
                // The emulator's call list is fetched (and parsed, here) only once the steady-state CPU is measured.
                guard steadyCPU != nil else {
                    try await Task.sleep(for: .milliseconds(250))
                    continue
                }
                records = try await http.object(.GET, sandbox.base + "/calls")["calls"] as? [[String: Any]] ?? []
                let ended = records.filter { ["completed", "busy", "failed", "no-answer", "canceled"].contains($0["status"] as? String ?? "") }
                if ended.count == calls && metrics.snapshot().openBridges == 0 { break }
                try await Task.sleep(for: .milliseconds(250))
            }
            let cpu = ProcessProbe.cpuMilliseconds() - cpuBefore
            try await Task.sleep(for: .seconds(2))
            let snapshot = metrics.snapshot()
            let sessions = try await http.object(.GET, sandbox.base + "/openai/realtime/sessions")["sessions"] as? [[String: Any]] ?? []
            let openSessions = sessions.filter { $0["closed_at"] == nil || $0["closed_at"] is NSNull }.count
            let socketsAfter = ProcessProbe.openSockets()

            let callSeconds = records.reduce(0.0) { $0 + Double($1["duration"] as? Int ?? 0) }
            // Callee audio the emulated Twilio sent vs. what reached the emulated OpenAI; assistant audio the bridge
            // forwarded vs. what reached the emulated Twilio.
            let mediaSent = records.reduce(0) { $0 + ($1["media_frames_sent"] as? Int ?? 0) }
            let appendsReceived = sessions.reduce(0) { $0 + (($1["events_received"] as? [String: Int])?["input_audio_buffer.append"] ?? 0) }
            let mediaReceived = records.reduce(0) { $0 + ($1["media_frames_received"] as? Int ?? 0) }
            // Assistant frames written after the callee had hung up (the socket was closed) cannot arrive: not a loss.
            let deliverable = snapshot.framesToTwilio - snapshot.framesUndeliverable
            let lost = max(0, mediaSent - appendsReceived) + max(0, deliverable - mediaReceived) + snapshot.framesDropped
            // Idle HTTP keep-alive connections are not leaks: count what a call holds (its bridge, its prepared session,
            // its sockets as the emulators see them).
            let openStreams = records.filter { ($0["status"] as? String) == "in-progress" }.count
            let leaked = snapshot.openBridges + snapshot.preparedSessions + openSessions + openStreams

            BridgeReport(
                calls: calls, relayToRealtime: snapshot.relayToRealtime, relayToTwilio: snapshot.relayToTwilio,
                bargeIn: snapshot.bargeInReaction, cpuMsPerCallSecond: steadyCPU.flatMap { $0 >= 0 ? $0 : nil }, kernelShare: kernelShare,
                rssPerCallKiB: Double(max(0, peakRSS - rssBefore)) / 1_024 / Double(calls), callSeconds: callSeconds,
                framesLost: lost, leakedSockets: leaked
            ).print()
            Swift.print(
                String(
                    format: "whole run: %.0f ms CPU for %.0f call-seconds (%.3f ms per call-second, call set-up and teardown included)",
                    cpu, callSeconds, callSeconds > 0 ? cpu / callSeconds : 0))
            Swift.print(
                "frames: callee→model \(mediaSent) sent, \(appendsReceived) received; model→callee \(snapshot.framesToTwilio) relayed, "
                    + "\(mediaReceived) received, \(snapshot.framesUndeliverable) written after the callee hung up; dropped in the bridge \(snapshot.framesDropped)"
            )
            Swift.print("process sockets: \(socketsBefore) before the calls, \(socketsAfter) after (idle HTTP keep-alives included)")
            // Answer (Twilio fetched the TwiML) → the AI's first audio written to Twilio, as each call saved it.
            var firstAudio: [Int] = []
            // What the callee heard (the emulator's timeline, from the stream's start): the first AI audio, and the
            // persona's first words — the AI's second turn when the call opens with the disclosure.
            var heardFirst: [Int] = []
            var personaFirst: [Int] = []
            for (token, sid) in placed where !sid.isEmpty {
                let detail = try await http.object(.GET, base + "/mobile/calls/\(sid)", token: token)
                if let value = (detail["latency"] as? [String: Any])?["first_audio_ms"] as? Int { firstAudio.append(value) }
                guard let stream = try? await http.object(.GET, sandbox.base + "/calls/\(sid)/media-stream") else { continue }
                let starts = (stream["events"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "ai_audio_started" }
                    .compactMap { ($0["at_ms"] as? NSNumber).map { Int($0.doubleValue) } }
                if let first = starts.first { heardFirst.append(first) }
                if let persona = starts.dropFirst(disclosure ? 1 : 0).first { personaFirst.append(persona) }
            }
            Swift.print(
                "stream start → AI audio heard p50 \(LatencyPercentile.of(heardFirst, 50).map(String.init) ?? "n/a") ms  "
                    + "p90 \(LatencyPercentile.of(heardFirst, 90).map(String.init) ?? "n/a") ms; persona's first words p50 "
                    + "\(LatencyPercentile.of(personaFirst, 50).map(String.init) ?? "n/a") ms  p90 "
                    + "\(LatencyPercentile.of(personaFirst, 90).map(String.init) ?? "n/a") ms  (disclosure \(disclosure ? "on" : "off"))")
            let opening = calleeHelloMs >= 0 ? "callee says hello at \(calleeHelloMs) ms" : "callee waits for the AI"
            Swift.print(
                "answer → first AI audio p50 \(LatencyPercentile.of(firstAudio, 50).map(String.init) ?? "n/a") ms  "
                    + "p90 \(LatencyPercentile.of(firstAudio, 90).map(String.init) ?? "n/a") ms  (\(firstAudio.count) calls; "
                    + "machine detection \(machineDetection ? "on" : "off"), \(opening))")
            // What the calls cost (issue 18), from the metered rows: every realtime response and every call's started minutes.
            let costs = try await services.meteredCallCosts(in: app)
            let usd = { (micros: Int64) in String(format: "$%.4f", Double(micros) / 1_000_000) }
            let callMinutes = callSeconds / 60
            Swift.print(
                "cost: realtime \(usd(costs.realtimeUSDMicros)) (\(costs.realtimeResponses) responses) + telephony \(usd(costs.telephonyUSDMicros)) "
                    + "(\(costs.billedMinutes) billed minutes) = \(usd(costs.totalUSDMicros)) for \(costs.calls) calls; "
                    + "per call \(costs.calls > 0 ? usd(costs.totalUSDMicros / Int64(costs.calls)) : "n/a"), per call-minute "
                    + (callMinutes > 0 ? String(format: "$%.4f", Double(costs.totalUSDMicros) / 1_000_000 / callMinutes) : "n/a")
                    + " (realtime " + (callMinutes > 0 ? String(format: "$%.4f", Double(costs.realtimeUSDMicros) / 1_000_000 / callMinutes) : "n/a")
                    + String(format: " per call-minute over %.1f call-minutes)", callMinutes))
            if records.count != calls { Swift.print("warning: \(records.count) of \(calls) calls reached the emulator") }
            if steadyCPU == nil || steadyCPU! < 0 { Swift.print("warning: the calls were never all bridged at once; no steady-state CPU figure") }
        } catch {
            try? await client.shutdown()
            await app.server.shutdown()
            try? await app.asyncShutdown()
            throw error
        }
        try await client.shutdown()
        try await clientGroup.shutdownGracefully()
        await app.server.shutdown()
        try await app.asyncShutdown()
    }

    static func randomHex(_ count: Int) -> String { String((0..<count).map { _ in "0123456789abcdef".randomElement()! }) }
}

/// `--target`: the same simulated callers against another Twilio-compatible bridge. The emulators run in this
/// process (the bridge under test is another process): the Twilio emulator places the calls, fetches TwiML from a
/// local route that connects the stream to the target (no call token; the target may ignore the signature), and the
/// OpenAI Realtime emulator listens on `--realtime-port` (`ws://127.0.0.1:P/openai/v1/realtime`) for the target.
struct TargetBench {
    let calls: Int
    let seconds: Double
    let target: String
    let realtimePort: Int

    func run() async throws {
        let accountSID = "AC" + String(repeating: "0", count: 31) + "2"
        let authToken = ChorusBridgeBench.randomHex(32)
        let httpClient = HTTPClient(eventLoopGroupProvider: .singleton)
        let twilio = SandboxTwilio(
            accountSID: accountSID, authToken: authToken, httpClient: httpClient,
            timing: SandboxTwilio.Timing(ringDelay: .milliseconds(500)),
            mediaStreams: SandboxTwilio.MediaStreamOptions(recordsMessages: false, keepsPlayedAudio: false, recordsCalls: false))
        let realtime = SandboxRealtime(recordsMessages: false)
        let sandbox = SandboxServer(
            services: SandboxServices(
                twilio: twilio, appStore: try SandboxAppStore.ephemeral(bundleID: "bench"), realtime: realtime),
            port: realtimePort)
        try await sandbox.start()

        // The TwiML the emulated Twilio fetches, and a sink for its status callbacks.
        let twimlApp = try await Application.make(.production)
        twimlApp.logger.logLevel = .error
        let twiml =
            #"<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="\#(MediaStreamTwiML.escaped(target))"/></Connect></Response>"#
        twimlApp.post("twiml") { _ in
            Response(status: .ok, headers: ["Content-Type": "text/xml"], body: .init(string: twiml))
        }
        twimlApp.post("status") { _ in Response(status: .noContent) }
        let twimlPort = try freeLoopbackPort()
        try await twimlApp.server.start(address: .hostname("127.0.0.1", port: twimlPort))

        do {
            let script = SandboxTwilio.CalleeScript(
                lines: ["Hello? Who is this?", "Oh, hold on, hold on, let me say something first.", "Right, that makes sense.", "Okay."],
                replyAfterMs: 600, hangupAfterSeconds: seconds, interruptAfterMs: 1_500)
            var sids: [String] = []
            let authorization = "Basic " + Data("\(accountSID):\(authToken)".utf8).base64EncodedString()
            for index in 0..<calls {
                let number = "+1415700" + String(format: "%04d", index)
                twilio.setBehavior(.answer, for: number, script: script)
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(realtimePort)/2010-04-01/Accounts/\(accountSID)/Calls.json")
                request.method = .POST
                request.headers.add(name: "Authorization", value: authorization)
                request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
                let form = TwilioFormEncoding.encode([
                    ("To", number), ("From", "+15005550006"), ("Url", "http://127.0.0.1:\(twimlPort)/twiml"),
                    ("StatusCallback", "http://127.0.0.1:\(twimlPort)/status"), ("TimeLimit", String(Int(seconds) + 30)),
                ])
                request.body = .bytes(ByteBuffer(string: form))
                let response = try await httpClient.execute(request, timeout: .seconds(30))
                let body = try await response.body.collect(upTo: 1 << 20)
                let object = (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any]
                guard let sid = object?["sid"] as? String else { throw ValidationError("CreateCall failed: \(String(buffer: body))") }
                sids.append(sid)
            }
            Swift.print("Placed \(calls) calls of \(Int(seconds)) s to \(target)…")
            var bargeIn = LatencyHistogram()
            var callSeconds = 0.0
            var mediaSent = 0
            for sid in sids {
                let record = await twilio.waitUntilEnded(sid: sid, timeout: .seconds(seconds + 90))
                callSeconds += Double(record?.duration ?? 0)
                if let stats = twilio.mediaStream(sid: sid) {
                    mediaSent += stats.mediaFramesSent
                    for reaction in stats.bargeIns.compactMap(\.reactionMs) { bargeIn.record(microseconds: UInt64(max(0, reaction) * 1_000)) }
                }
            }
            try await Task.sleep(for: .seconds(2))
            let sessions = realtime.sessions()
            let appends = sessions.reduce(0) { $0 + ($1.eventsReceived["input_audio_buffer.append"] ?? 0) }
            BridgeReport(
                calls: calls, relayToRealtime: nil, relayToTwilio: nil, bargeIn: bargeIn, cpuMsPerCallSecond: nil, rssPerCallKiB: nil,
                callSeconds: callSeconds, framesLost: max(0, mediaSent - appends), leakedSockets: realtime.openSessionCount
            ).print()
        } catch {
            await twimlApp.server.shutdown()
            try? await twimlApp.asyncShutdown()
            try? await sandbox.shutdown()
            try? await httpClient.shutdown()
            throw error
        }
        await twimlApp.server.shutdown()
        try await twimlApp.asyncShutdown()
        try await sandbox.shutdown()
        try await httpClient.shutdown()
    }
}

enum MediaStreamTwiML {
    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}
