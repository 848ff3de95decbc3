import AsyncHTTPClient
import ChorusAPI
import ChorusSandbox
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import WebSocketKit

/// Transcription while recording (`GET /audio/stream`, issue 21): recordings of 30 s of sandbox speech streamed as
/// 24 kHz PCM16 in 100 ms chunks, `speed` times faster than real time; measured from the last audio chunk (sent with the
/// `end` message right after it) to the `transcript.completed` event: total, and the provider's share the server reports
/// in `timing.provider_ms` (from the commit sent upstream to the completed transcript) apart from the server's own.
struct StreamingTranscriptionBench {
    let server: BenchServer
    let client: HTTPClient
    let clientGroup: any EventLoopGroup
    let recordings: Int
    let speed: Double
    let seconds = 30.0

    /// 30 s of the sandbox voice as PCM16 little-endian bytes at 24 kHz.
    static func recording(seconds: Double) throws -> [UInt8] {
        let text = Array(repeating: "Pick up Emma from soccer at five and bring her water bottle, please.", count: 12).joined(separator: " ")
        guard let pcm = SandboxAudioFiles.pcm16(wav: SandboxAudioFiles.speechWAV(text: text, voice: "bench")), pcm.sampleRate == 24_000 else {
            throw BenchStreamError("the sandbox voice is not 24 kHz PCM")
        }
        var samples = Array(pcm.samples.prefix(Int(seconds * 24_000)))
        // Shorter speech is padded with its own start to the length asked for.
        while samples.count < Int(seconds * 24_000) { samples += pcm.samples.prefix(Int(seconds * 24_000) - samples.count) }
        var bytes = [UInt8]()
        bytes.reserveCapacity(samples.count * 2)
        for sample in samples {
            let value = UInt16(bitPattern: sample)
            bytes.append(UInt8(value & 0xFF))
            bytes.append(UInt8(value >> 8))
        }
        return bytes
    }

    func run() async throws {
        let email = "streamer-\(UUID().uuidString.prefix(6).lowercased())@bench.test"
        let tokens: TokenResponse = try await server.send(client, .POST, "/auth/register", json: RegisterRequest(email: email, password: "benchmark-password"))
        let _: MessagingProfileDTO = try await server.send(
            client, .PUT, "/me/profile", json: MessagingProfileDTO(displayName: "streamer", birthYear: 1980), token: tokens.accessToken)
        let pcm = try Self.recording(seconds: seconds)
        var total: [Double] = []
        var provider: [Double] = []
        var serverShare: [Double] = []
        var fromFile = 0
        for _ in 0..<recordings {
            let (elapsed, event) = try await stream(pcm, token: tokens.accessToken)
            guard let timing = event.timing else { throw BenchStreamError("transcript.completed without timing") }
            if event.source == .file { fromFile += 1 }
            total.append(elapsed)
            provider.append(timing.providerMs)
            serverShare.append(max(0, elapsed - timing.providerMs))
        }
        let (totalP50, totalP99) = medianAndP99(total)
        let (providerP50, providerP99) = medianAndP99(provider)
        let (serverP50, serverP99) = medianAndP99(serverShare)
        print(
            String(
                format:
                    "streamed transcription of %.0f s recordings (%d runs, 100 ms chunks sent at %.0fx real time): last chunk to final transcript p50 %.2f / p99 %.2f ms; provider p50 %.2f / p99 %.2f ms; server p50 %.2f / p99 %.2f ms; %d from the file fallback",
                seconds, recordings, speed, totalP50, totalP99, providerP50, providerP99, serverP50, serverP99, fromFile))
    }

    /// Streams one recording; the milliseconds from the last chunk to `transcript.completed`, and that event.
    private func stream(_ pcm: [UInt8], token: String) async throws -> (Double, AudioStreamEvent) {
        var headers = HTTPHeaders()
        headers.add(name: "Authorization", value: "Bearer \(token)")
        let completed = clientGroup.any().makePromise(of: (ContinuousClock.Instant, AudioStreamEvent).self)
        let ready = clientGroup.any().makePromise(of: Void.self)
        let upgraded = clientGroup.any().makePromise(of: WebSocket.self)
        try await WebSocket.connect(
            to: server.base.replacingOccurrences(of: "http://", with: "ws://") + "/audio/stream", headers: headers, on: clientGroup
        ) { socket in
            socket.onText { _, text in
                let now = ContinuousClock.now
                guard let event = try? ChorusJSON.makeDecoder().decode(AudioStreamEvent.self, from: Data(text.utf8)) else { return }
                switch event.type {
                case "ready": ready.succeed()
                case "transcript.completed": completed.succeed((now, event))
                case "error":
                    let failure = BenchStreamError("stream error \(event.code ?? ""): \(event.detail ?? "")")
                    ready.fail(failure)
                    completed.fail(failure)
                default: break
                }
            }
            socket.onClose.whenComplete { _ in
                ready.fail(BenchStreamError("closed before ready"))
                completed.fail(BenchStreamError("closed before the transcript"))
            }
            upgraded.succeed(socket)
        }.get()
        let socket = try await upgraded.futureResult.get()
        let start = try ChorusJSON.makeEncoder().encode(AudioStreamClientMessage.start(language: "en"))
        try await socket.send(String(decoding: start, as: UTF8.self))
        try await ready.futureResult.get()
        let chunk = 4_800  // 100 ms
        let pause = Duration.milliseconds(100) / speed
        var offset = 0
        var next = ContinuousClock.now
        while offset < pcm.count {
            let end = min(pcm.count, offset + chunk)
            try await socket.send(Array(pcm[offset..<end]))
            offset = end
            next += pause
            if offset < pcm.count { try await Task.sleep(until: next) }
        }
        let last = ContinuousClock.now
        try await socket.send(#"{"type":"end"}"#)
        let (arrived, event) = try await completed.futureResult.get()
        try? await socket.close()
        let elapsed = arrived - last
        return (Double(elapsed.components.seconds) * 1_000 + Double(elapsed.components.attoseconds) / 1e15, event)
    }

}

struct BenchStreamError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
