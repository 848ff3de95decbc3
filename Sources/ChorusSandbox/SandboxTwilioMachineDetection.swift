import AsyncHTTPClient
import ChorusCore
import ChorusProviders
import Foundation
import NIOCore

// Answering-machine detection as Twilio runs it with `AsyncAmd=true`: the call connects at once, and `AnsweredBy` is
// posted (signed) to `AsyncAmdStatusCallback` when detection decides. The emulator decides from what its own callee
// does, with Twilio's documented thresholds (`MachineDetectionSpeechThreshold` 2,400 ms, `…SpeechEndThreshold`
// 1,200 ms, `…SilenceTimeout` 5,000 ms, `MachineDetectionTimeout` 30 s, each overridable on the call):
// - a person who speaks first: `human` once their first line is over and the end threshold of silence followed
//   (`machine_end_other` when that line is longer than the speech threshold, as Twilio would misjudge it);
// - a person who waits silently for the caller: `unknown` after the silence timeout;
// - `voicemail`: its greeting, then a beep (`machine_end_beep` just after the beep) or silence
//   (`machine_end_silence` after the end threshold of silence), then it records silence;
// - `fax`: CNG tones (1,100 Hz for 0.5 s every 3.5 s): `fax` two seconds after the first tone.
extension SandboxTwilio {
    /// The answering-machine detection a call asked for (`MachineDetection=Enable|DetectMessageEnd`, `AsyncAmd=true`).
    struct MachineDetection: Sendable {
        var detectsMessageEnd: Bool
        var callback: String?
        var callbackMethod: String
        var timeoutMs: Int
        var speechThresholdMs: Int
        var speechEndThresholdMs: Int
        var silenceTimeoutMs: Int

        /// Reads the parameters of `CreateCall`; `nil` without `MachineDetection`, a message for an invalid one.
        static func parse(_ value: (String) -> String?) -> Result<MachineDetection?, DetectionParameterError> {
            guard let mode = value("MachineDetection") else { return .success(nil) }
            guard mode == "Enable" || mode == "DetectMessageEnd" else {
                return .failure(.init(message: "MachineDetection must be Enable or DetectMessageEnd"))
            }
            guard value("AsyncAmd")?.lowercased() == "true" else {
                return .failure(.init(message: "The sandbox emulates asynchronous answering-machine detection only (AsyncAmd=true)"))
            }
            let callback = value("AsyncAmdStatusCallback")
            let method = value("AsyncAmdStatusCallbackMethod")?.uppercased() ?? "POST"
            guard method == "POST" || method == "GET" else {
                return .failure(.init(message: "AsyncAmdStatusCallbackMethod must be GET or POST"))
            }
            func number(_ name: String, _ range: ClosedRange<Int>, _ fallback: Int) -> Int? {
                guard let text = value(name) else { return fallback }
                guard let number = Int(text), range.contains(number) else { return nil }
                return number
            }
            guard let timeout = number("MachineDetectionTimeout", 3...59, 30),
                let speech = number("MachineDetectionSpeechThreshold", 1_000...6_000, 2_400),
                let speechEnd = number("MachineDetectionSpeechEndThreshold", 500...5_000, 1_200),
                let silence = number("MachineDetectionSilenceTimeout", 2_000...10_000, 5_000)
            else {
                return .failure(.init(message: "A MachineDetection threshold is out of its range"))
            }
            return .success(
                MachineDetection(
                    detectsMessageEnd: mode == "DetectMessageEnd", callback: callback, callbackMethod: method, timeoutMs: timeout * 1_000,
                    speechThresholdMs: speech, speechEndThresholdMs: speechEnd, silenceTimeoutMs: silence))
        }

        /// What detection reports for a callee, and when (ms after the stream started).
        func outcome(callee: DetectedCallee, firstLineAfterMs: Int?, firstLineMs: Int?, greetingMs: Int) -> (String, Int) {
            let (answeredBy, at): (String, Int)
            switch callee {
            case .voicemail(beep: true):
                let beepEnd = (firstLineAfterMs ?? 0) + greetingMs + CalleeSounds.beepGapMs + CalleeSounds.beepMs
                (answeredBy, at) = detectsMessageEnd ? ("machine_end_beep", beepEnd + 250) : ("machine_start", (firstLineAfterMs ?? 0) + speechThresholdMs)
            case .voicemail(beep: false):
                let end = (firstLineAfterMs ?? 0) + greetingMs
                (answeredBy, at) =
                    detectsMessageEnd ? ("machine_end_silence", end + speechEndThresholdMs) : ("machine_start", (firstLineAfterMs ?? 0) + speechThresholdMs)
            case .fax:
                (answeredBy, at) = ("fax", (firstLineAfterMs ?? 0) + CalleeSounds.faxToneMs + 2_000)
            case .person:
                if let start = firstLineAfterMs, let length = firstLineMs, start < silenceTimeoutMs {
                    if length > speechThresholdMs {
                        (answeredBy, at) = detectsMessageEnd
                            ? ("machine_end_other", start + length + speechEndThresholdMs) : ("machine_start", start + speechThresholdMs)
                    } else {
                        (answeredBy, at) = ("human", start + length + speechEndThresholdMs)
                    }
                } else {
                    (answeredBy, at) = ("unknown", silenceTimeoutMs)
                }
            }
            // Detection gives up with `unknown` at its timeout.
            return at > timeoutMs ? ("unknown", timeoutMs) : (answeredBy, at)
        }
    }

    struct DetectionParameterError: Error {
        let message: String
    }

    /// Who the emulated callee is, for detection.
    enum DetectedCallee {
        case person
        case voicemail(beep: Bool)
        case fax
    }

    /// Posts the detection result to the call's `AsyncAmdStatusCallback`, signed like every callback, and notes it on
    /// the call (`answered_by`). Nothing is sent once the call has ended.
    func reportMachineDetection(sid: String, answeredBy: String, afterMs: Int) async {
        let target = state.withLockedValue { state -> (String, String)? in
            guard var call = state.calls[sid], !call.isEnded, call.answeredBy == nil, let detection = call.machineDetection else { return nil }
            call.answeredBy = answeredBy
            state.calls[sid] = call
            return detection.callback.map { ($0, detection.callbackMethod) }
        }
        guard let (url, method) = target else { return }
        let parameters: [(String, String)] = [
            ("AccountSid", accountSID),
            ("AnsweredBy", answeredBy),
            ("CallSid", sid),
            ("MachineDetectionDuration", String(afterMs)),
        ]
        var request: HTTPClientRequest
        let signature: String
        if method == "GET" {
            let full = url + (url.contains("?") ? "&" : "?") + TwilioFormEncoding.encode(parameters)
            request = HTTPClientRequest(url: full)
            request.method = .GET
            signature = validator.signature(url: full, parameters: [])
        } else {
            request = HTTPClientRequest(url: url)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.body = .bytes(ByteBuffer(string: TwilioFormEncoding.encode(parameters)))
            signature = validator.signature(url: url, parameters: parameters)
        }
        request.headers.add(name: "X-Twilio-Signature", value: signature)
        request.headers.add(name: "User-Agent", value: "TwilioProxy/1.1")
        request.headers.add(name: "I-Twilio-Idempotency-Token", value: UUID().uuidString.lowercased())
        // Delivered in a task of its own, as Twilio delivers it: the server may hang up on a machine while it handles
        // the callback, which ends the call's task here, and must not cancel the callback's own request.
        let (client, logger) = (httpClient, logger)
        let delivery = Task { () -> Int? in
            do {
                let response = try await client.execute(request, timeout: .seconds(10))
                _ = try? await response.body.collect(upTo: 1 << 20)
                return Int(response.status.code)
            } catch {
                logger.warning("sandbox.twilio.amd callback failed", metadata: ["call_sid": "\(sid)", "error": "\(error)"])
                return nil
            }
        }
        let status = await delivery.value
        state.withLockedValue { $0.calls[sid]?.machineDetectionStatus = status }
    }
}

/// The sounds of machines: a voicemail beep and a fax machine's calling tone, as 20 ms base64 μ-law frames.
enum CalleeSounds {
    static let beepGapMs = 300
    static let beepMs = 500
    static let faxToneMs = 500
    static let faxCycleMs = 3_500
    /// The default voicemail greeting.
    static let greeting = "Hi, you have reached Alex. I can't take your call right now. Please leave a message after the tone."

    /// `milliseconds` of a sine tone at `frequency`, or silence when `frequency` is 0.
    static func tone(_ frequency: Double, milliseconds: Int) -> [UInt8] {
        let count = MuLaw.sampleRate * milliseconds / 1_000
        guard frequency > 0 else { return [UInt8](repeating: MuLaw.silence, count: count) }
        let samples = (0..<count).map { n in
            Int16(8_000 * sin(2 * Double.pi * frequency * Double(n) / Double(MuLaw.sampleRate)))
        }
        return MuLaw.encode(samples)
    }

    static func frames(_ audio: [UInt8]) -> [String] {
        var audio = audio
        if audio.count % CalleeAudio.frameBytes != 0 {
            audio += [UInt8](repeating: MuLaw.silence, count: CalleeAudio.frameBytes - audio.count % CalleeAudio.frameBytes)
        }
        return stride(from: 0, to: audio.count, by: CalleeAudio.frameBytes).map {
            Data(audio[$0..<$0 + CalleeAudio.frameBytes]).base64EncodedString()
        }
    }

    /// A beep after a greeting: a pause, then 1 kHz.
    static let beepFrames = frames(tone(0, milliseconds: beepGapMs) + tone(1_000, milliseconds: beepMs))

    /// CNG: 0.5 s of 1,100 Hz every 3.5 s, for `seconds`.
    static func faxFrames(seconds: Double) -> [String] {
        let cycle = tone(1_100, milliseconds: faxToneMs) + tone(0, milliseconds: faxCycleMs - faxToneMs)
        let cycles = max(1, Int((seconds * 1_000 / Double(faxCycleMs)).rounded(.up)))
        return frames(Array((0..<cycles).map { _ in cycle }.joined()))
    }
}
