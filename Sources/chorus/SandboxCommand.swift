import ArgumentParser
import AsyncHTTPClient
import ChorusSandbox
import ChorusServer
import Foundation
import Vapor

/// `chorus sandbox`: the provider emulators (``SandboxCommand``, the default, so `chorus sandbox --port 5060` runs
/// them), the sandbox App Store tools for a server's accounts (`chorus sandbox appstore`) and a recording in the
/// sandbox voice (`chorus sandbox say`).
struct SandboxGroup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sandbox",
        abstract: "The provider emulators (default: `chorus sandbox serve`), sandbox App Store purchases and notifications, and recordings in the sandbox voice.",
        subcommands: [SandboxCommand.self, SandboxAppStoreCommand.self, SandboxSayCommand.self],
        defaultSubcommand: SandboxCommand.self
    )
}

/// `chorus sandbox [serve]`: the Twilio, OpenAI Realtime and App Store emulators on their own, so a developer (or
/// another bridge) can be pointed at them.
struct SandboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the provider emulators standalone (Twilio REST + Media Streams, OpenAI Realtime, App Store).",
        discussion: """
            Prints the CHORUS_* settings that point `chorus serve` at them. Every request and WebSocket message \
            they receive is listed at GET /requests. They speak with a built-in synthetic voice; \
            CHORUS_SANDBOX_SPEECH=espeak-ng makes espeak-ng (which must be installed) speak instead.
            """
    )

    @ArgumentParser.Option(help: "The address to listen on.")
    var hostname = "127.0.0.1"

    @ArgumentParser.Flag(
        help: "Listen on an address other than loopback: the emulators answer anyone who reaches it, without authentication.")
    var allowNetwork = false

    @ArgumentParser.Option(help: "The port to listen on (0 picks a free one).")
    var port = 5060

    @ArgumentParser.Option(help: "The Twilio account SID the emulator accepts (default: generated).")
    var accountSid: String?

    @ArgumentParser.Option(help: "The Twilio auth token the emulator accepts and signs with (default: generated).")
    var authToken: String?

    @ArgumentParser.Option(help: "The key the OpenAI Realtime emulator requires (default: any key is accepted).")
    var openaiKey: String?

    @ArgumentParser.Option(help: "Seconds the emulated phone rings before the callee reacts.")
    var ringSeconds = 1.0

    @ArgumentParser.Option(
        help: """
            Seconds an answered call lasts unless the callee has its own talk time (the server's CHORUS_SANDBOX_TALK_SECONDS, \
            default 25: the callee first speaks about 18 s after the answer).
            """)
    var talkSeconds = ProcessInfo.processInfo.environment["CHORUS_SANDBOX_TALK_SECONDS"].flatMap(Double.init) ?? 25

    @ArgumentParser.Flag(help: "Do not record WebSocket messages (for load tests).")
    var noMessageLog = false

    @ArgumentParser.Option(help: "Requests and WebSocket messages kept in the request log (the oldest are dropped first).")
    var requestLogEntries = SandboxRecorder.defaultCapacity

    @ArgumentParser.Option(help: "Bytes of recorded text kept in the request log (the oldest requests are dropped first).")
    var requestLogBytes = SandboxRecorder.defaultMaximumBytes

    @ArgumentParser.Option(help: "Ended calls and closed Realtime sessions kept for inspection (the oldest are forgotten first).")
    var keptCalls = SandboxTwilio.Retention.defaultEndedCalls

    @ArgumentParser.Option(help: "Bytes of audio (recordings, played audio) of ended calls kept (the oldest calls are forgotten first).")
    var keptAudioBytes = SandboxTwilio.Retention.defaultAudioBytes

    @ArgumentParser.Option(
        help: """
            The data directory whose sandbox App Store certificate authority signs purchases (created if missing):             use the server's CHORUS_DATA_DIR so it trusts them.
            """)
    var dataDir = ProcessInfo.processInfo.environment["CHORUS_DATA_DIR"] ?? "data"

    @ArgumentParser.Option(help: "The bundle id of the App Store purchases (the server's CHORUS_APPLE_BUNDLE_ID).")
    var bundleId = ProcessInfo.processInfo.environment["CHORUS_APPLE_BUNDLE_ID"] ?? "com.chorus.speechassistant"

    func validate() throws {
        if !(0...65_535).contains(port) { throw ValidationError("--port must be between 0 and 65535") }
        if !allowNetwork, !ChorusConfiguration.isLoopback(hostname) {
            throw ValidationError(
                "--hostname \(hostname) is reachable from the network, and the emulators list phone numbers, recordings and "
                    + "message text without authentication: listen on 127.0.0.1, or pass --allow-network to expose them anyway")
        }
        if !(0...3_600).contains(ringSeconds) { throw ValidationError("--ring-seconds must be between 0 and 3600") }
        if !(0...86_400).contains(talkSeconds) { throw ValidationError("--talk-seconds must be between 0 and 86400") }
        if requestLogEntries < 1 || requestLogBytes < 1 || keptCalls < 1 || keptAudioBytes < 1 {
            throw ValidationError("--request-log-entries, --request-log-bytes, --kept-calls and --kept-audio-bytes must be positive")
        }
    }

    func run() async throws {
        try useSandboxSpeech(ProcessInfo.processInfo.environment[SandboxSpeech.Engine.settingKey])
        func random(_ count: Int) -> String { String((0..<count).map { _ in "0123456789abcdef".randomElement()! }) }
        let sid = accountSid ?? "AC" + random(32)
        let token = authToken ?? random(32)
        // The status callbacks and TwiML fetches of every call go to one host (the server, or the balancer in front of
        // several): AsyncHTTPClient's default of 8 connections per host made them time out in the pool beyond a few
        // dozen concurrent calls (Twilio error 11200 and lost callbacks).
        var clientConfiguration = HTTPClient.Configuration()
        clientConfiguration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 1_024)
        let httpClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        let twilio = SandboxTwilio(
            accountSID: sid, authToken: token, httpClient: httpClient,
            timing: SandboxTwilio.Timing(ringDelay: .milliseconds(Int(ringSeconds * 1000)), talkDuration: .milliseconds(Int(talkSeconds * 1000))),
            mediaStreams: SandboxTwilio.MediaStreamOptions(recordsMessages: !noMessageLog),
            retention: SandboxTwilio.Retention(endedCalls: keptCalls, audioBytes: keptAudioBytes))
        let directory = URL(fileURLWithPath: dataDir, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
        let appStore = SandboxAppStore(
            authority: try AppStoreTestAuthority.loadOrCreate(directory: directory),
            receipts: SandboxReceiptValidator(sharedSecret: nil, bundleID: bundleId), bundleID: bundleId)
        let services = SandboxServices(
            twilio: twilio, appStore: appStore,
            realtime: SandboxRealtime(apiKey: openaiKey, recordsMessages: !noMessageLog, keptSessions: keptCalls),
            requestLogEntries: requestLogEntries, requestLogBytes: requestLogBytes)
        let server = SandboxServer(services: services, host: hostname, port: port)
        do {
            try await server.start()
        } catch where isAddressInUse(error) {
            FileHandle.standardError.write(
                Data("chorus: port \(port) on \(hostname) is already in use: stop what listens there, or choose another port with --port N (0 picks a free one)\n".utf8))
            try await httpClient.shutdown()
            throw ExitCode(69)  // EX_UNAVAILABLE
        }
        let base = server.baseURL!.absoluteString
        let banner = """
            Chorus sandbox listening on \(base)
            Point `chorus serve` at it with:
              CHORUS_TWILIO_ACCOUNT_SID=\(sid)
              CHORUS_TWILIO_AUTH_TOKEN=\(token)
              CHORUS_TWILIO_FROM_NUMBER=+15005550006
              CHORUS_TWILIO_API_BASE_URL=\(base)
              CHORUS_OPENAI_BASE_URL=\(base)/openai/v1\(openaiKey == nil ? "" : "\n  CHORUS_OPENAI_API_KEY=<the --openai-key>")
            App Store purchases (POST \(base)/app-store/purchases) are signed by the authority in \(directory.standardizedFileURL.path),
            which a server with that CHORUS_DATA_DIR trusts outside production.
            Requests and messages received: GET \(base)/requests

            """
        FileHandle.standardOutput.write(Data(banner.utf8))
        await Self.waitForTermination()
        try await server.shutdown()
        try await httpClient.shutdown()
    }

    /// Returns on SIGINT or SIGTERM.
    static func waitForTermination() async {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
        let sources = [SIGINT, SIGTERM].map { signalNumber -> any DispatchSourceSignal in
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber)
            source.setEventHandler { continuation.yield() }
            source.resume()
            return source
        }
        for await _ in stream { break }
        sources.forEach { $0.cancel() }
    }
}
