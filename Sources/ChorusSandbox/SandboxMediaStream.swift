import ChorusCore
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import Vapor

// MARK: - Public configuration and inspection types

extension SandboxTwilio {
    /// What a simulated callee says and when, on calls whose TwiML connects a Media Stream.
    ///
    /// All times are real (wall-clock) time: media always flows in real time. The callee speaks its `lines` in order,
    /// one per turn: it waits until the application's audio ("the AI") has played out and then stays silent for
    /// `replyAfterMs` before it speaks. "The AI is talking" means the emulator's playback queue is not empty.
    public struct CalleeScript: Sendable, Codable, Equatable {
        /// The lines said when a script gives none: the callee listens first and answers briefly when the AI pauses.
        public static let defaultLines = ["Hello, yes, who is this?", "Okay, sounds good. Thank you."]
        /// The pause the callee leaves after the AI stops talking when a script does not set `replyAfterMs`.
        public static let defaultReplyAfterMs = 600

        /// What the callee says, in order (``defaultLines`` when `nil`).
        public var lines: [String]?
        /// When the callee says its first line: this many ms after the AI has finished its first turn, or after the
        /// stream started if the AI has not spoken. When `nil`, the callee waits for the AI to speak first and replies
        /// `replyAfterMs` after it stops.
        public var firstLineAfterMs: Int?
        /// The pause after the AI stops talking before the callee says its next line (``defaultReplyAfterMs``).
        public var replyAfterMs: Int?
        /// The callee hangs up this many seconds after answering (simulated seconds on a call without a stream).
        public var hangupAfterSeconds: Double?
        /// Barge-in: the callee starts its next line while the AI is still talking, this many ms after the AI's audio
        /// (a new AI turn) started playing. Applies to every AI turn while the callee has lines left.
        public var interruptAfterMs: Int?
        /// A `voicemail` callee's greeting ends with a beep (`true` when `nil`); without it, with silence.
        public var beep: Bool?
        /// A key the callee presses (`0`–`9`, `*`, `#`; a Media Streams `dtmf` event), ``pressKeyAfterMs`` after the
        /// AI's audio first started playing.
        public var pressKey: String?
        /// When the callee presses ``pressKey`` (default 1,000 ms).
        public var pressKeyAfterMs: Int?

        /// Creates a script; every value is optional.
        public init(
            lines: [String]? = nil, firstLineAfterMs: Int? = nil, replyAfterMs: Int? = nil, hangupAfterSeconds: Double? = nil,
            interruptAfterMs: Int? = nil, beep: Bool? = nil, pressKey: String? = nil, pressKeyAfterMs: Int? = nil
        ) {
            self.pressKey = pressKey
            self.pressKeyAfterMs = pressKeyAfterMs
            self.beep = beep
            self.lines = lines
            self.firstLineAfterMs = firstLineAfterMs
            self.replyAfterMs = replyAfterMs
            self.hangupAfterSeconds = hangupAfterSeconds
            self.interruptAfterMs = interruptAfterMs
        }

        enum CodingKeys: String, CodingKey {
            case lines
            case firstLineAfterMs = "first_line_after_ms"
            case replyAfterMs = "reply_after_ms"
            case hangupAfterSeconds = "hangup_after_seconds"
            case interruptAfterMs = "interrupt_after_ms"
            case beep
            case pressKey = "press_key"
            case pressKeyAfterMs = "press_key_after_ms"
        }
    }

    /// How the emulator runs Media Streams.
    public struct MediaStreamOptions: Sendable, Equatable {
        /// Record every message received from the application in the sandbox request log (when a recorder is attached).
        /// A load benchmark turns this off.
        public var recordsMessages: Bool
        /// Keep the μ-law bytes the application's audio played, per call (``SandboxTwilio/playedAudio(sid:)``), at most
        /// ``keptAudioSeconds`` of them.
        public var keepsPlayedAudio: Bool
        /// The callee's microphone carries very low noise when it is not speaking (`false`: digital silence, 0xFF).
        public var calleeNoise: Bool
        /// Keep each call's recording — both sides mixed, as the callee's phone would record it, at most
        /// ``keptAudioSeconds`` — for ``SandboxTwilio/recording(sid:)`` and `GET /calls/{call_sid}/recording.wav`.
        public var recordsCalls: Bool
        /// The longest recording, and the most played audio, kept per call (``maximumRecordingSeconds`` by default).
        public var keptAudioSeconds: Int

        /// The default ``keptAudioSeconds``.
        public static let maximumRecordingSeconds = 600

        /// Creates options; the defaults record messages and calls, keep played audio and add low noise. The callee
        /// speaks with ``SandboxSpeech/engine``.
        public init(
            recordsMessages: Bool = true, keepsPlayedAudio: Bool = true, calleeNoise: Bool = true,
            recordsCalls: Bool = true, keptAudioSeconds: Int = maximumRecordingSeconds
        ) {
            self.recordsCalls = recordsCalls
            self.keptAudioSeconds = min(max(0, keptAudioSeconds), Self.maximumRecordingSeconds)
            self.recordsMessages = recordsMessages
            self.keepsPlayedAudio = keepsPlayedAudio
            self.calleeNoise = calleeNoise
        }
    }
}

/// Something that happened on a sandbox Media Stream.
public struct SandboxMediaStreamEvent: Sendable, Codable, Equatable {
    /// What happened.
    public enum Kind: String, Sendable, Codable {
        /// The `connected` frame was sent.
        case connected
        /// The `start` frame was sent; `atMs` 0 is this instant.
        case start
        /// The application's audio started playing (the playback queue became non-empty).
        case aiAudioStarted = "ai_audio_started"
        /// The playback queue ran empty (played out or cleared).
        case aiAudioStopped = "ai_audio_stopped"
        /// The callee started saying a line (`detail` is the line; `whileAITalking` says whether it barged in).
        case calleeLineStarted = "callee_line_started"
        /// The callee finished a line.
        case calleeLineEnded = "callee_line_ended"
        /// The callee pressed a key (`detail`: the key).
        case keyPressed = "key_pressed"
        /// A mark was echoed (`detail` is its name).
        case markEchoed = "mark_echoed"
        /// A `clear` arrived (`audioMs` is the queued audio it dropped).
        case clearReceived = "clear_received"
        /// A message that was not valid JSON or not a Media Streams frame (`detail` says why).
        case invalidMessage = "invalid_message"
        /// The `stop` frame was sent.
        case stopSent = "stop_sent"
        /// The WebSocket closed (`detail` is `server` when the application closed it).
        case socketClosed = "socket_closed"
    }

    /// What happened.
    public let kind: Kind
    /// Wall-clock milliseconds since the `start` frame was sent.
    public let atMs: Double
    /// The line said, the mark's name, or why a message was invalid.
    public let detail: String?
    /// For `callee_line_started`: whether the AI's audio was still playing (a barge-in).
    public let whileAITalking: Bool?
    /// For `clear_received`: the milliseconds of queued audio dropped.
    public let audioMs: Int?

    enum CodingKeys: String, CodingKey {
        case kind
        case atMs = "at_ms"
        case detail
        case whileAITalking = "while_ai_talking"
        case audioMs = "audio_ms"
    }
}

/// One barge-in: the callee spoke while the AI's audio was playing, and how fast the application cleared it.
public struct SandboxBargeIn: Sendable, Codable, Equatable {
    /// When the callee's line started (ms since the stream started).
    public let calleeStartedMs: Double
    /// When the next `clear` arrived, if one did before the callee's following line.
    public let clearMs: Double?
    /// `clearMs - calleeStartedMs`: the application's barge-in reaction time.
    public var reactionMs: Double? { clearMs.map { $0 - calleeStartedMs } }

    enum CodingKeys: String, CodingKey {
        case calleeStartedMs = "callee_started_ms"
        case clearMs = "clear_ms"
    }
}

/// Media statistics and the event timeline of one call's Media Stream.
public struct SandboxMediaStreamStats: Sendable, Codable, Equatable {
    /// `MZ` + 32 hex digits.
    public let streamSid: String
    /// The `<Stream url>` connected to.
    public let streamURL: String
    /// The `<Parameter>`s delivered in `start.customParameters`.
    public let customParameters: [String: String]
    /// When the `start` frame was sent.
    public let startedAt: Date?
    /// Every frame sent (`connected`, `start`, `media`, `mark`, `stop`).
    public let framesSent: Int
    /// `media` frames sent (the callee's microphone, one per 20 ms).
    public let mediaFramesSent: Int
    /// `media` frames received from the application.
    public let mediaFramesReceived: Int
    /// μ-law bytes received in those frames.
    public let mediaBytesReceived: Int
    /// `mark` frames received from the application.
    public let marksReceived: Int
    /// Marks echoed back (played out or cleared).
    public let marksEchoed: Int
    /// `clear` frames received.
    public let clearsReceived: Int
    /// Messages that were not valid JSON or lacked required members.
    public let invalidMessages: Int
    /// Valid messages with an event the emulator ignores.
    public let unknownEvents: Int
    /// Milliseconds of the application's audio actually played.
    public let aiAudioPlayedMs: Int
    /// Milliseconds of queued audio dropped by `clear`.
    public let aiAudioClearedMs: Int
    /// Milliseconds of audio still queued.
    public let aiAudioQueuedMs: Int
    /// Lines the callee started.
    public let calleeLinesSpoken: Int
    /// Why the stream ended (`server_closed_stream`, `rest_hangup`, `time_limit`, `callee_hangup`, `shutdown`).
    public let endedBy: String?
    /// The timeline (mark echoes beyond the first 2,000 are only counted).
    public let events: [SandboxMediaStreamEvent]

    /// Every barge-in with the application's reaction time (the first `clear` after the callee started speaking).
    public var bargeIns: [SandboxBargeIn] {
        var result: [SandboxBargeIn] = []
        for (index, event) in events.enumerated() where event.kind == .calleeLineStarted && event.whileAITalking == true {
            let clear = events[(index + 1)...].prefix { $0.kind != .calleeLineStarted }.first { $0.kind == .clearReceived }
            result.append(SandboxBargeIn(calleeStartedMs: event.atMs, clearMs: clear?.atMs))
        }
        return result
    }

    enum CodingKeys: String, CodingKey {
        case streamSid = "stream_sid"
        case streamURL = "stream_url"
        case customParameters = "custom_parameters"
        case startedAt = "started_at"
        case framesSent = "frames_sent"
        case mediaFramesSent = "media_frames_sent"
        case mediaFramesReceived = "media_frames_received"
        case mediaBytesReceived = "media_bytes_received"
        case marksReceived = "marks_received"
        case marksEchoed = "marks_echoed"
        case clearsReceived = "clears_received"
        case invalidMessages = "invalid_messages"
        case unknownEvents = "unknown_events"
        case aiAudioPlayedMs = "ai_audio_played_ms"
        case aiAudioClearedMs = "ai_audio_cleared_ms"
        case aiAudioQueuedMs = "ai_audio_queued_ms"
        case calleeLinesSpoken = "callee_lines_spoken"
        case endedBy = "ended_by"
        case events
    }
}

// MARK: - Callee audio

/// The callee's audio as ready-to-send base64 frames of 160 μ-law bytes (20 ms), cached per line.
enum CalleeAudio {
    static let frameBytes = 160
    /// 20 ms of digital silence, base64.
    static let silenceFrame = Data(repeating: MuLaw.silence, count: frameBytes).base64EncodedString()
    /// Sixteen frames of very low noise (a few LSBs, RMS well under any speech detector's threshold), base64.
    static let noiseFrames: [String] = {
        var seed: UInt32 = 0x2545_F491
        return (0..<16).map { _ in
            let samples = (0..<frameBytes).map { _ -> Int16 in
                seed = seed &* 1_664_525 &+ 1_013_904_223
                return Int16(Int(seed >> 24) % 13 - 6)
            }
            return Data(MuLaw.encode(samples)).base64EncodedString()
        }
    }()

    private static let cache = NIOLockedValueBox<[String: [String]]>([:])

    /// `text` spoken by `engine`, as base64 frames (the last one padded with silence).
    static func frames(_ text: String, voice: Int, engine: SandboxSpeech.Engine = SandboxSpeech.engine) -> [String] {
        let key = "\(voice)|\(engine)|\(text)"
        if let cached = cache.withLockedValue({ $0[key] }) { return cached }
        var audio = SandboxSpeech.speak(text, voice: voice, engine: engine)
        if audio.isEmpty || audio.count % frameBytes != 0 {
            audio += [UInt8](repeating: MuLaw.silence, count: frameBytes - audio.count % frameBytes)
        }
        let frames = stride(from: 0, to: audio.count, by: frameBytes).map {
            Data(audio[$0..<$0 + frameBytes]).base64EncodedString()
        }
        cache.withLockedValue { cache in
            if cache.count < 1_024 { cache[key] = frames }
        }
        return frames
    }
}

// MARK: - Session

/// One call's bidirectional Media Stream, played as Twilio plays it (see ``SandboxTwilio``).
///
/// One task per call (``run(timeLimitAt:hangupAt:)``) paces the callee's `media` frames every 20 ms from the start
/// instant (drift-free: it sleeps until `start + n × 20 ms` and sends every frame that is due), plays the application's
/// audio out of the playback queue at 8 bytes per ms, echoes marks as playback reaches them and drives the callee's
/// turns. Frames from the application arrive on the socket's event loop (``receive(_:)``). All state sits behind one
/// lock, and every frame is handed to the event loop while that lock is held, so sequence numbers go out in order.
///
/// `clear` drops all queued audio and echoes every pending mark at once, as Twilio-compatible implementations do
/// (Fonoster documents it; Twilio's text says cleared marks are returned).
final class MediaStreamSession: Sendable {
    enum EndReason: String, Sendable {
        case serverClosedStream = "server_closed_stream"
        case restHangup = "rest_hangup"
        case timeLimit = "time_limit"
        case calleeHangup = "callee_hangup"
        case shutdown
    }

    struct Line: Sendable {
        let text: String
        let frames: [String]
    }

    /// The callee's script with defaults applied and its audio prepared.
    struct Script: Sendable {
        let lines: [Line]
        let firstLineAfterMs: Int?
        let replyAfterMs: Int
        let interruptAfterMs: Int?
        /// The key pressed, and when (ms after the AI's audio first played).
        var pressKey: (digit: String, afterMs: Int)? = nil
    }

    /// A gap in the AI's audio at least this long starts a new AI turn.
    static let turnGapMs = 300
    static let frameMs = 20
    private static let maxMarkEvents = 2_000

    let callSID: String
    let accountSID: String
    let streamSID: String
    let url: String
    let path: String
    let parameters: [(String, String)]
    let script: Script
    let options: SandboxTwilio.MediaStreamOptions
    let recorder: SandboxRecorder?
    private let state = NIOLockedValueBox(State())

    init(
        callSID: String, accountSID: String, streamSID: String, url: String, parameters: [(String, String)], script: Script,
        options: SandboxTwilio.MediaStreamOptions, recorder: SandboxRecorder?
    ) {
        self.callSID = callSID
        self.accountSID = accountSID
        self.streamSID = streamSID
        self.url = url
        let path = URLComponents(string: url)?.path ?? ""
        self.path = path.isEmpty ? "/" : path
        self.parameters = parameters
        self.script = script
        self.options = options
        self.recorder = options.recordsMessages ? recorder : nil
    }

    enum PlaybackItem: Sendable {
        case audio([UInt8])
        case mark(String)
    }

    struct State: Sendable {
        var socket: WebSocket?
        var sequence = 0
        var streamStart: ContinuousClock.Instant?
        var startDate: Date?
        var endRequest: EndReason?
        var endedBy: EndReason?
        var stopSent = false
        var socketClosed = false
        var abandoned = false

        // Playback of the application's audio.
        var queue = CircularBuffer<PlaybackItem>()
        var headOffset = 0
        var queuedBytes = 0
        /// The first tick allowed to play audio that arrived on an empty queue.
        var playbackFrom = 0
        var lastTick = 0
        var played: [UInt8] = []
        /// Both sides mixed, one μ-law byte per sample (when recording calls).
        var recording: [UInt8] = []
        /// `false` once the call's audio is sealed (``MediaStreamSession/sealKeptAudio(limit:)``): nothing more is kept.
        var keepsAudio = true
        /// What the application's audio played in the current tick (when recording calls).
        var tickPlayed: [UInt8] = []
        var playedBytes = 0
        var clearedBytes = 0
        var talking = false
        /// When audio arrived on an empty queue, or a `clear` emptied it (the next tick reports the change).
        var audioStartedAt: ContinuousClock.Instant?
        var audioClearedAt: ContinuousClock.Instant?

        // The callee's turns, in ms of stream time.
        var nextLine = 0
        var speaking: (line: Int, frame: Int)?
        var aiSpokeSinceLine = false
        var aiSilentSinceMs = 0
        var aiTurnStartMs: Int?
        var aiTurnInterrupted = false
        var calleeSpokeSinceAI = true
        var noise = 0
        /// When the AI's audio first played (ms of stream time), and whether the scripted key was pressed.
        var firstAIAudioMs: Int?
        var keyPressed = false

        // Counters and the timeline.
        var framesSent = 0
        var mediaFramesSent = 0
        var mediaFramesReceived = 0
        var mediaBytesReceived = 0
        var marksReceived = 0
        var marksEchoed = 0
        var clearsReceived = 0
        var invalidMessages = 0
        var unknownEvents = 0
        var markEvents = 0
        var events: [SandboxMediaStreamEvent] = []

        mutating func nextSequence() -> Int {
            sequence += 1
            return sequence
        }

        func milliseconds(at instant: ContinuousClock.Instant) -> Double {
            guard let streamStart else { return 0 }
            let parts = (instant - streamStart).components
            return Double(parts.seconds) * 1_000 + Double(parts.attoseconds) / 1e15
        }

        mutating func log(
            _ kind: SandboxMediaStreamEvent.Kind, at instant: ContinuousClock.Instant, detail: String? = nil,
            whileAITalking: Bool? = nil, audioMs: Int? = nil
        ) {
            if kind == .markEchoed {
                markEvents += 1
                guard markEvents <= MediaStreamSession.maxMarkEvents else { return }
            }
            events.append(
                SandboxMediaStreamEvent(
                    kind: kind, atMs: milliseconds(at: instant), detail: detail, whileAITalking: whileAITalking, audioMs: audioMs
                )
            )
        }

        /// Hands `frames` to the socket's event loop, in order (call with the lock held).
        mutating func send(_ frames: [String]) {
            guard !frames.isEmpty, let socket, !socketClosed else { return }
            framesSent += frames.count
            socket.eventLoop.execute {
                for frame in frames { socket.send(frame) }
            }
        }
    }

    // MARK: Socket

    /// Adopts the connected socket (called on its event loop during the upgrade, before any frame is read).
    func attach(_ socket: WebSocket) {
        let ended = state.withLockedValue { state -> Bool in
            guard state.endedBy == nil, !state.abandoned else { return true }
            state.socket = socket
            return false
        }
        guard !ended else {
            // The call ended while the socket was being opened.
            socket.close(code: .normalClosure, promise: nil)
            return
        }
        socket.onText { [self] _, text in receive(text) }
        socket.onClose.whenComplete { [self] _ in socketDidClose() }
    }

    /// Gives up on a socket that is still opening: if it opens after all, it is closed at once.
    func abandon() {
        let socket = state.withLockedValue { state -> WebSocket? in
            state.abandoned = true
            defer { state.socket = nil }
            return state.socket
        }
        socket?.close(code: .normalClosure, promise: nil)
    }

    /// Asks the stream to end at its next tick (sending `stop` first).
    func requestEnd(_ reason: EndReason) {
        state.withLockedValue { state in
            if state.endRequest == nil { state.endRequest = reason }
        }
    }

    private func socketDidClose() {
        let now = ContinuousClock.now
        state.withLockedValue { state in
            guard !state.socketClosed else { return }
            state.socketClosed = true
            state.socket = nil
            state.log(.socketClosed, at: now, detail: state.stopSent ? "emulator" : "server")
        }
    }

    // MARK: Frames from the application

    /// Handles one text frame from the application.
    func receive(_ text: String) {
        recorder?.recordMessage(path: path, connection: callSID, text: text)
        let message = MediaStreamWire.parse(text)
        let now = ContinuousClock.now
        state.withLockedValue { state in
            switch message {
            case .media(let bytes):
                state.mediaFramesReceived += 1
                state.mediaBytesReceived += bytes.count
                guard !bytes.isEmpty else { return }
                if state.queue.isEmpty {
                    // Playback starts on the first frame boundary after the audio arrived (by the clock, not by the
                    // ticks, which may run late), so a mark is never echoed before its audio could have played.
                    let arrivedFrame = Int(state.milliseconds(at: now)) / Self.frameMs
                    state.playbackFrom = max(state.lastTick, arrivedFrame) + 2
                    state.audioStartedAt = now
                }
                state.queue.append(.audio(bytes))
                state.queuedBytes += bytes.count
            case .mark(let name):
                state.marksReceived += 1
                if state.queue.isEmpty {
                    let frame = echo(name, state: &state, at: now)
                    state.send([frame])
                } else {
                    state.queue.append(.mark(name))
                }
            case .clear:
                state.clearsReceived += 1
                let dropped = state.queuedBytes
                state.clearedBytes += dropped
                var echoes: [String] = []
                let pending = state.queue
                for case .mark(let name) in pending { echoes.append(echo(name, state: &state, at: now)) }
                state.queue.removeAll(keepingCapacity: true)
                state.headOffset = 0
                state.queuedBytes = 0
                if dropped > 0 { state.audioClearedAt = now }
                state.log(.clearReceived, at: now, audioMs: MuLaw.milliseconds(bytes: dropped))
                state.send(echoes)
            case .other:
                state.unknownEvents += 1
            case .invalid(let reason):
                state.invalidMessages += 1
                state.log(.invalidMessage, at: now, detail: reason)
            }
        }
    }

    private func echo(_ name: String, state: inout State, at now: ContinuousClock.Instant) -> String {
        state.marksEchoed += 1
        state.log(.markEchoed, at: now, detail: name)
        return MediaStreamWire.mark(sequenceNumber: state.nextSequence(), streamSID: streamSID, name: name)
    }

    // MARK: The call

    /// Plays the stream until it ends; returns why and when (the instant the end was decided).
    func run(timeLimitAt: ContinuousClock.Instant, hangupAt: ContinuousClock.Instant?) async -> (EndReason, ContinuousClock.Instant) {
        let start = ContinuousClock.now
        let begun = state.withLockedValue { state -> Bool in
            guard state.endRequest == nil, !state.socketClosed, state.socket != nil else { return false }
            state.streamStart = start
            state.startDate = Date()
            state.aiSilentSinceMs = 0
            let startFrame = MediaStreamWire.start(
                sequenceNumber: state.nextSequence(), streamSID: streamSID, accountSID: accountSID, callSID: callSID,
                customParameters: parameters
            )
            state.log(.connected, at: start)
            state.log(.start, at: start)
            state.send([MediaStreamWire.connected, startFrame])
            return true
        }
        var reason: EndReason
        var endedAt = ContinuousClock.now
        if begun {
            var frame = 1
            let frameDuration = Duration.milliseconds(Self.frameMs)
            while true {
                let now = ContinuousClock.now
                if let found = endReason(now: now, timeLimitAt: timeLimitAt, hangupAt: hangupAt) {
                    reason = found
                    // A scheduled end happened at its scheduled instant; the tick that noticed it may be a little late.
                    switch found {
                    case .timeLimit: endedAt = timeLimitAt
                    case .calleeHangup: endedAt = hangupAt ?? now
                    default: endedAt = now
                    }
                    break
                }
                var wake = min(start + frameDuration * frame, timeLimitAt)
                if let hangupAt { wake = min(wake, hangupAt) }
                do {
                    try await Task.sleep(until: wake, clock: .continuous)
                } catch {
                    reason = .shutdown
                    endedAt = ContinuousClock.now
                    break
                }
                let woke = ContinuousClock.now
                let due = Int((woke - start) / frameDuration)
                if due >= frame {
                    let first = frame
                    state.withLockedValue { state in
                        var frames: [String] = []
                        frames.reserveCapacity(due - first + 2)
                        for index in first...due { tick(index, state: &state, now: woke, frames: &frames) }
                        state.send(frames)
                    }
                    frame = due + 1
                }
            }
        } else {
            reason = state.withLockedValue { $0.endRequest } ?? .serverClosedStream
        }
        await teardown(reason)
        return (reason, endedAt)
    }

    private func endReason(now: ContinuousClock.Instant, timeLimitAt: ContinuousClock.Instant, hangupAt: ContinuousClock.Instant?) -> EndReason? {
        let (requested, closed) = state.withLockedValue { ($0.endRequest, $0.socketClosed) }
        if let requested { return requested }
        if closed { return .serverClosedStream }
        if now >= timeLimitAt { return .timeLimit }
        if let hangupAt, now >= hangupAt { return .calleeHangup }
        return nil
    }

    /// Sends `stop` and closes the socket (unless the application already closed it), then waits up to 2 s for the
    /// close handshake. A cancelled task (shutdown) does not wait.
    private func teardown(_ reason: EndReason) async {
        let now = ContinuousClock.now
        state.withLockedValue { state in
            state.endedBy = reason
            if let socket = state.socket, !state.socketClosed, !state.stopSent {
                if state.streamStart != nil {
                    let stop = MediaStreamWire.stop(
                        sequenceNumber: state.nextSequence(), streamSID: streamSID, accountSID: accountSID, callSID: callSID
                    )
                    state.send([stop])
                    state.log(.stopSent, at: now)
                }
                state.stopSent = true
                socket.eventLoop.execute { socket.close(code: .normalClosure, promise: nil) }
            }
        }
        let deadline = ContinuousClock.now + .seconds(2)
        while !state.withLockedValue({ $0.socketClosed }), ContinuousClock.now < deadline {
            do { try await Task.sleep(for: .milliseconds(10)) } catch { return }
        }
    }

    /// One 20 ms frame: the callee's microphone, playback of the application's audio, the callee's turn-taking.
    private func tick(_ index: Int, state: inout State, now: ContinuousClock.Instant, frames: inout [String]) {
        let t = index * Self.frameMs
        state.lastTick = index
        updateTalking(&state, t: t, now: now)

        // The callee's microphone.
        let payload: String
        if let speaking = state.speaking {
            payload = script.lines[speaking.line].frames[speaking.frame]
            advanceSpeech(&state, line: speaking.line, frame: speaking.frame, now: now)
        } else if let line = nextLine(state, t: t) {
            let interrupting = state.talking
            state.nextLine += 1
            state.aiSpokeSinceLine = false
            state.calleeSpokeSinceAI = true
            if interrupting { state.aiTurnInterrupted = true }
            state.log(.calleeLineStarted, at: now, detail: script.lines[line].text, whileAITalking: interrupting)
            payload = script.lines[line].frames[0]
            advanceSpeech(&state, line: line, frame: 0, now: now)
        } else if options.calleeNoise {
            state.noise = (state.noise + 1) & 15
            payload = CalleeAudio.noiseFrames[state.noise]
        } else {
            payload = CalleeAudio.silenceFrame
        }
        frames.append(
            MediaStreamWire.media(
                sequenceNumber: state.nextSequence(), chunk: index, timestamp: (index - 1) * Self.frameMs, payload: payload,
                streamSID: streamSID
            )
        )
        state.mediaFramesSent += 1

        // 20 ms of the application's audio plays; marks it reaches are echoed.
        if index >= state.playbackFrom { play(&state, now: now, frames: &frames) }
        updateTalking(&state, t: t, now: now)
        if state.talking, state.firstAIAudioMs == nil { state.firstAIAudioMs = t }
        // The scripted key press: Twilio sends a `dtmf` event for it.
        if let press = script.pressKey, !state.keyPressed, let first = state.firstAIAudioMs, t - first >= press.afterMs {
            state.keyPressed = true
            state.log(.keyPressed, at: now, detail: press.digit, whileAITalking: state.talking)
            frames.append(MediaStreamWire.dtmf(sequenceNumber: state.nextSequence(), streamSID: streamSID, digit: press.digit))
        }
        if options.recordsCalls { record(payload, state: &state) }
    }

    /// Mixes the tick's 20 ms of both sides into the call's recording.
    private func record(_ calleePayload: String, state: inout State) {
        defer { state.tickPlayed.removeAll(keepingCapacity: true) }
        guard state.keepsAudio, state.recording.count < options.keptAudioSeconds * MuLaw.sampleRate else { return }
        let callee = [UInt8](Data(base64Encoded: calleePayload) ?? Data())
        for index in 0..<CalleeAudio.frameBytes {
            let near = index < callee.count ? Int32(MuLaw.decode(callee[index])) : 0
            let far = index < state.tickPlayed.count ? Int32(MuLaw.decode(state.tickPlayed[index])) : 0
            state.recording.append(MuLaw.encode(Int16(clamping: near + far)))
        }
    }

    private func advanceSpeech(_ state: inout State, line: Int, frame: Int, now: ContinuousClock.Instant) {
        if frame + 1 < script.lines[line].frames.count {
            state.speaking = (line, frame + 1)
        } else {
            state.speaking = nil
            state.log(.calleeLineEnded, at: now, detail: script.lines[line].text)
        }
    }

    /// The line the callee starts now, if any.
    private func nextLine(_ state: State, t: Int) -> Int? {
        guard state.nextLine < script.lines.count else { return nil }
        if state.talking {
            guard let interrupt = script.interruptAfterMs, let turnStart = state.aiTurnStartMs, !state.aiTurnInterrupted,
                t - turnStart >= interrupt
            else { return nil }
            return state.nextLine
        }
        let silence = t - state.aiSilentSinceMs
        if state.nextLine == 0, let first = script.firstLineAfterMs {
            return silence >= first ? 0 : nil
        }
        return state.aiSpokeSinceLine && silence >= script.replyAfterMs ? state.nextLine : nil
    }

    private func updateTalking(_ state: inout State, t: Int, now: ContinuousClock.Instant) {
        // A late (catch-up) tick does not see audio that arrived after its own frame time.
        let talking = state.queuedBytes > 0 && t >= (state.playbackFrom - 1) * Self.frameMs
        guard talking != state.talking else { return }
        state.talking = talking
        if talking {
            // Playback starts on the frame boundary after the audio arrived.
            let playing = min(t, (state.playbackFrom - 1) * Self.frameMs)
            if state.calleeSpokeSinceAI || playing - state.aiSilentSinceMs >= Self.turnGapMs {
                state.aiTurnStartMs = playing
                state.aiTurnInterrupted = false
            }
            state.calleeSpokeSinceAI = false
            state.aiSpokeSinceLine = true
            state.log(.aiAudioStarted, at: state.audioStartedAt ?? now)
        } else if let cleared = state.audioClearedAt {
            state.aiSilentSinceMs = min(t, Int(state.milliseconds(at: cleared)))
            state.log(.aiAudioStopped, at: cleared)
        } else {
            state.aiSilentSinceMs = t
            state.log(.aiAudioStopped, at: now)
        }
        state.audioStartedAt = nil
        state.audioClearedAt = nil
    }

    private func play(_ state: inout State, now: ContinuousClock.Instant, frames: inout [String]) {
        var remaining = CalleeAudio.frameBytes
        while let head = state.queue.first {
            switch head {
            case .mark(let name):
                _ = state.queue.removeFirst()
                frames.append(echo(name, state: &state, at: now))
            case .audio(let bytes):
                guard remaining > 0 else { return }
                let take = min(remaining, bytes.count - state.headOffset)
                if options.keepsPlayedAudio, state.keepsAudio {
                    let room = options.keptAudioSeconds * MuLaw.sampleRate - state.played.count
                    state.played.append(contentsOf: bytes[state.headOffset..<state.headOffset + min(take, max(0, room))])
                }
                if options.recordsCalls { state.tickPlayed.append(contentsOf: bytes[state.headOffset..<state.headOffset + take]) }
                state.headOffset += take
                state.queuedBytes -= take
                state.playedBytes += take
                remaining -= take
                if state.headOffset == bytes.count {
                    _ = state.queue.removeFirst()
                    state.headOffset = 0
                }
            }
        }
    }

    // MARK: Inspection

    /// The stream's statistics and timeline so far.
    func statistics() -> SandboxMediaStreamStats {
        state.withLockedValue { state in
            SandboxMediaStreamStats(
                streamSid: streamSID, streamURL: url,
                customParameters: Dictionary(parameters, uniquingKeysWith: { _, last in last }),
                startedAt: state.startDate, framesSent: state.framesSent, mediaFramesSent: state.mediaFramesSent,
                mediaFramesReceived: state.mediaFramesReceived, mediaBytesReceived: state.mediaBytesReceived,
                marksReceived: state.marksReceived, marksEchoed: state.marksEchoed, clearsReceived: state.clearsReceived,
                invalidMessages: state.invalidMessages, unknownEvents: state.unknownEvents,
                aiAudioPlayedMs: MuLaw.milliseconds(bytes: state.playedBytes),
                aiAudioClearedMs: MuLaw.milliseconds(bytes: state.clearedBytes),
                aiAudioQueuedMs: MuLaw.milliseconds(bytes: state.queuedBytes), calleeLinesSpoken: state.nextLine,
                endedBy: state.endedBy?.rawValue, events: state.events
            )
        }
    }

    /// The application's audio that played, in order (empty unless `keepsPlayedAudio`).
    func playedAudio() -> [UInt8] {
        state.withLockedValue { $0.played }
    }

    /// The call's recording so far: both sides mixed, 8 kHz μ-law (empty unless `recordsCalls`).
    func recording() -> [UInt8] {
        state.withLockedValue { $0.recording }
    }

    /// Stops keeping audio (none is added afterwards, even by a late frame) and cuts what is kept to at most `limit`
    /// bytes — the end of the played audio first, then the end of the recording; returns the bytes kept.
    func sealKeptAudio(limit: Int) -> Int {
        state.withLockedValue { state in
            state.keepsAudio = false
            var excess = state.recording.count + state.played.count - max(0, limit)
            if excess > 0 {
                let cut = min(excess, state.played.count)
                state.played = Array(state.played.dropLast(cut))
                excess -= cut
            }
            if excess > 0 { state.recording = Array(state.recording.dropLast(excess)) }
            return state.recording.count + state.played.count
        }
    }
}
