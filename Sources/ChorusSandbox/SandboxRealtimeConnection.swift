import ChorusCore
import Foundation
import Logging
import NIOCore
import NIOWebSocket
import Vapor

/// One Realtime session on one WebSocket.
///
/// Confined to the socket's event loop: WebSocket callbacks, the pacing timer and the failure timer all run there, and
/// everything else hops there (``SandboxRealtime/shutdown()``, finished renderings), so the mutable state needs no
/// lock. Only ``log`` is read from other threads, and it has its own.
final class RealtimeConnection: @unchecked Sendable {
    let id: String
    let eventLoop: any EventLoop
    let log: RealtimeSessionLog
    private let socket: WebSocket
    private let behavior: SandboxRealtime.Behavior
    private let recorder: SandboxRecorder?
    private let calleeLines: SandboxCalleeLines?
    /// The simulated callee's line the current turn's audio belongs to, once recognized.
    private var recognizedLine: String?
    private let cache: RealtimeSpeechCache
    private let deviations: RealtimeDeviations?
    private let logger: Logger
    private let onClose: @Sendable (String) -> Void
    private let eventPrefix: String
    private let conversationID: String

    // Everything below is touched on `eventLoop` only.
    private var session: RealtimeSessionConfiguration
    private var closed = false
    private var eventCounter = 0

    // Input audio and turn detection.
    private var windowBytes = 960
    private var window: [UInt8] = []
    private var processedMs = 0
    private var inputBufferBytes = 0
    private var speechLevel = SandboxRealtime.vadLevel(threshold: 0.5)
    private var voicedRun = 0
    private var voicedRunStartMs = 0
    private var silentMs = 0
    private var speech: (itemID: String, startMs: Int)?
    private var userAudioMs = 0
    private var transcriptsUsed = 0
    /// The input audio of the current turn of a transcription session (what its transcription listens to), at most
    /// ``transcriptionAudioLimit`` bytes.
    private var transcriptionAudio: [UInt8] = []
    /// 30 minutes of 24 kHz PCM16.
    static let transcriptionAudioLimit = 30 * 60 * 48_000
    /// The text and audio input of the last response, cached for the next (``usage(_:_:_:)``).
    private var lastInput: (text: Int, audio: Int) = (0, 0)

    // Conversation and responses.
    private var items: [String: ConversationItem] = [:]
    private var itemOrder: [String] = []
    private var response: ActiveResponse?
    private var responsesStarted = 0
    private var producedAudio = false
    private var pacing: Scheduled<Void>?
    private var failureTimer: Scheduled<Void>?
    private var rendering: Task<Void, Never>?

    struct ConversationItem {
        var json: RealtimeObject
        /// Milliseconds of audio the item holds (assistant audio items).
        var audioMs: Int?
        /// The transcript of an assistant audio item, or of a user audio item (what the emulated model heard).
        var transcript: String?
    }

    struct ActiveResponse {
        let id: String
        let itemID: String
        let text: String
        let words: [String]
        let textOnly: Bool
        let format: RealtimeAudioFormat
        let voice: String
        let metadata: RealtimeJSON
        var speech: RenderedSpeech?
        var sentChunks = 0
        var sentWords = 0
        var nextDeadline: NIODeadline
        let interval: TimeAmount
    }

    init(
        id: String, model: String, transcription: Bool = false, socket: WebSocket, behavior: SandboxRealtime.Behavior, log: RealtimeSessionLog,
        recorder: SandboxRecorder?, cache: RealtimeSpeechCache, deviations: RealtimeDeviations? = nil, calleeLines: SandboxCalleeLines? = nil,
        logger: Logger,
        onClose: @escaping @Sendable (String) -> Void
    ) {
        self.calleeLines = calleeLines
        self.id = id
        self.socket = socket
        self.eventLoop = socket.eventLoop
        self.behavior = behavior
        self.log = log
        self.recorder = recorder
        self.cache = cache
        self.deviations = deviations
        self.logger = logger
        self.onClose = onClose
        self.eventPrefix = "event_" + String(RealtimeIdentifier.make("", length: 8).dropFirst())
        self.conversationID = RealtimeIdentifier.make("conv")
        let expiresAt = Int(Date().timeIntervalSince1970) + 3_600
        self.session =
            transcription
            ? RealtimeSessionConfiguration.transcription(id: id, expiresAt: expiresAt)
            : RealtimeSessionConfiguration(id: id, model: model, expiresAt: expiresAt)
        window.reserveCapacity(960)
    }

    // MARK: - Lifecycle

    /// Sends `session.created` and starts listening (on the event loop).
    func start() {
        socket.onText { [self] _, text in receive(text) }
        socket.onBinary { [self] _, _ in
            log.update { $0.eventsReceived["binary", default: 0] += 1 }
            sendError(
                RealtimeRequestError(
                    code: "invalid_value", message: "Binary frames are not supported: send events as JSON text frames.", param: nil),
                clientEventID: nil)
        }
        socket.onClose.whenComplete { [self] _ in
            eventLoop.execute { self.didClose() }
        }
        sessionChanged()
        emit("session.created", ["session": .object(session.object)])
        if let failAfter = behavior.failAfterMs {
            failureTimer = eventLoop.scheduleTask(in: .milliseconds(Int64(failAfter))) { [self] in injectFailure() }
        }
        logger.debug("sandbox.realtime.session started", metadata: ["session_id": "\(id)"])
    }

    /// Stops everything and closes the socket with `code` (after sending `error`, if given).
    func terminate(code: WebSocketErrorCode, reason error: RealtimeRequestError?) {
        guard !closed else { return }
        stopTimers()
        if let error { sendError(error, clientEventID: nil) }
        socket.close(code: code, promise: nil)
    }

    private func injectFailure() {
        failureTimer = nil
        guard !closed else { return }
        log.update { $0.injectedFailure = behavior.failure.rawValue }
        let error =
            behavior.failure == .error
            ? RealtimeRequestError(
                type: "server_error", code: "server_error",
                message: "The server had an error while processing your request. Sorry about that!", param: nil)
            : nil
        terminate(code: .unexpectedServerError, reason: error)
    }

    private func didClose() {
        guard !closed else { return }
        closed = true
        stopTimers()
        if let active = response {
            response = nil
            log.updateResponse(active.id) { record in
                record.status = "cancelled"
                record.reason = "connection_closed"
            }
        }
        let code = socket.closeCode.map { Int(UInt16(webSocketErrorCode: $0)) }
        log.update { record in
            record.closedAt = Date()
            record.closeCode = code
        }
        // WebSocketKit keeps a socket's handlers for the socket's lifetime, and they hold this connection: replaced,
        // so the connection (its conversation, buffers and socket) is freed once the session is over.
        socket.onText { _, _ in }
        socket.onBinary { _, _ in }
        onClose(id)
        logger.debug("sandbox.realtime.session closed", metadata: ["session_id": "\(id)"])
    }

    private func stopTimers() {
        pacing?.cancel()
        pacing = nil
        failureTimer?.cancel()
        failureTimer = nil
        rendering?.cancel()
        rendering = nil
    }

    // MARK: - Receiving

    private func receive(_ text: String) {
        guard !closed else { return }
        recorder?.recordMessage(path: SandboxRealtime.recordedPath, connection: id, text: text)
        var text = text
        let handled = text.withUTF8 { bytes -> Bool in
            guard let members = RealtimeFlatMembers.scan(bytes), let type = members.type,
                RealtimeFlatMembers.equals(bytes, type, "input_audio_buffer.append"), let audio = members.audio
            else { return false }
            appendAudio(bytes, audio, eventID: members.eventID.map { String(decoding: bytes[$0], as: UTF8.self) })
            return true
        }
        if !handled { receiveEvent(text) }
    }

    /// The slow path: every event but a plain append.
    private func receiveEvent(_ text: String) {
        guard let json = RealtimeJSON.parse(text), let event = json.object else {
            log.update { $0.eventsReceived["invalid", default: 0] += 1 }
            sendError(
                RealtimeRequestError(
                    code: "invalid_json", message: "The event could not be parsed as a JSON object.", param: nil),
                clientEventID: nil)
            return
        }
        let eventID = event["event_id"]?.string
        guard let type = event["type"]?.string else {
            log.update { $0.eventsReceived["invalid", default: 0] += 1 }
            sendError(
                RealtimeRequestError(code: "invalid_event", message: "The 'type' field is missing.", param: "type"),
                clientEventID: eventID)
            return
        }
        log.update { $0.eventsReceived[type, default: 0] += 1 }
        do {
            switch type {
            case "session.update":
                try updateSession(event)
            case "input_audio_buffer.append":
                guard var audio = event["audio"]?.string else { throw RealtimeRequestError.missing("audio") }
                audio.withUTF8 { bytes in appendAudio(bytes, 0..<bytes.count, eventID: eventID, counted: true) }
            case "input_audio_buffer.commit":
                try commitBuffer()
            case "input_audio_buffer.clear":
                clearBuffer()
            case "conversation.item.create":
                try createItem(event)
            case "conversation.item.retrieve":
                let item = try existingItem(event)
                emit("conversation.item.retrieved", ["item": .object(item.json)])
            case "conversation.item.delete":
                let item = try existingItem(event)
                let itemID = item.json["id"]?.string ?? ""
                items[itemID] = nil
                itemOrder.removeAll { $0 == itemID }
                emit("conversation.item.deleted", ["item_id": .string(itemID)])
            case "conversation.item.truncate":
                try truncate(event)
            case "response.create" where session.isTranscription, "conversation.item.create" where session.isTranscription:
                throw RealtimeRequestError.invalidValue("type", "'\(type)' is not supported in a transcription session.")
            case "response.create":
                try createResponse(event["response"], trigger: "client")
            case "response.cancel":
                try cancelResponse(event["response_id"]?.string)
            case "output_audio_buffer.clear":
                throw RealtimeRequestError.invalidValue(
                    "type", "output_audio_buffer.clear is only supported for WebRTC and SIP connections.")
            default:
                throw RealtimeRequestError.invalidValue(
                    "type",
                    "Invalid value: '\(type)'. Supported values are: 'session.update', 'input_audio_buffer.append', "
                        + "'input_audio_buffer.commit', 'input_audio_buffer.clear', 'output_audio_buffer.clear', "
                        + "'conversation.item.create', 'conversation.item.retrieve', 'conversation.item.truncate', "
                        + "'conversation.item.delete', 'response.create', and 'response.cancel'.")
            }
        } catch let error as RealtimeRequestError {
            sendError(error, clientEventID: eventID)
        } catch {
            sendError(RealtimeRequestError(code: nil, message: "\(error)", param: nil), clientEventID: eventID)
        }
    }

    // MARK: - Session

    private func updateSession(_ event: RealtimeObject) throws {
        guard let update = event["session"] else { throw RealtimeRequestError.missing("session") }
        guard let object = update.object else {
            throw RealtimeRequestError.invalidType("session", expected: "an object", got: update)
        }
        let previousInput = session.inputFormat
        try session.apply(object, voiceLocked: producedAudio)
        if session.inputFormat != previousInput {
            // A new input format starts a new buffer: bytes of the old format cannot be measured in the new one.
            window.removeAll(keepingCapacity: true)
            inputBufferBytes = 0
            resetDetector()
        }
        if session.turnDetection == nil { resetDetector() }
        sessionChanged()
        emit("session.updated", ["session": .object(session.object)])
    }

    private func sessionChanged() {
        windowBytes = 20 * session.inputFormat.bytesPerMillisecond
        speechLevel = SandboxRealtime.vadLevel(threshold: session.turnDetection?.threshold ?? 0.5)
        let session = self.session
        log.update { record in
            record.instructions = session.instructions
            record.voice = session.voice
            record.inputAudioFormat = session.inputFormat.rawValue
            record.outputAudioFormat = session.outputFormat.rawValue
            record.turnDetection = session.turnDetection.map { $0.semantic ? "semantic_vad" : "server_vad" }
            record.transcription = session.transcribes
        }
    }

    // MARK: - Input audio

    /// Appends base64 audio (`bytes[range]`), running the detector on every complete 20 ms window.
    private func appendAudio(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, eventID: String?, counted: Bool = false) {
        if recognizedLine == nil, let calleeLines, speech != nil || voicedRun > 0 {
            recognizedLine = calleeLines.line(containing: String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self))
        }
        let before = window.count
        let valid = RealtimeBase64.decode(bytes, range, appendingTo: &window)
        inputBufferBytes += window.count - before
        if session.isTranscription, transcriptionAudio.count < Self.transcriptionAudioLimit {
            transcriptionAudio.append(contentsOf: window[before...].prefix(Self.transcriptionAudioLimit - transcriptionAudio.count))
        }
        let format = session.inputFormat
        if window.count >= windowBytes {
            var offset = 0
            while window.count - offset >= windowBytes {
                let level = window.withUnsafeBufferPointer { window in
                    Self.level(UnsafeBufferPointer(rebasing: window[offset..<(offset + windowBytes)]), format: format)
                }
                offset += windowBytes
                analyseWindow(level: level)
            }
            window.removeFirst(offset)
        }
        let inputMs = processedMs + window.count / format.bytesPerMillisecond
        log.update { record in
            if !counted { record.eventsReceived["input_audio_buffer.append", default: 0] += 1 }
            record.inputAudioMs = inputMs
        }
        if !valid {
            sendError(
                RealtimeRequestError.invalidValue("audio", "Invalid 'audio': expected base64-encoded audio bytes."),
                clientEventID: eventID)
        }
    }

    /// Runs the detector on the next 20 ms window, whose RMS level is `level`.
    private func analyseWindow(level: Double) {
        let start = processedMs
        processedMs += 20
        guard !closed, let detection = session.turnDetection else { return }
        let voiced = level >= speechLevel
        if speech != nil {
            if voiced {
                silentMs = 0
            } else {
                silentMs += 20
                if silentMs >= detection.silenceDurationMs { speechStopped(audioEndMs: processedMs, detection: detection) }
            }
        } else if voiced {
            if voicedRun == 0 { voicedRunStartMs = start }
            voicedRun += 1
            if voicedRun >= 3 {
                speechStarted(audioStartMs: max(0, voicedRunStartMs - detection.prefixPaddingMs), detection: detection)
            }
        } else {
            voicedRun = 0
            recognizedLine = nil
        }
    }

    /// Squares of every μ-law and A-law byte's linear value: the RMS of a window is then a table walk. For `audio/pcmu`
    /// the result equals ``MuLaw/rms(_:)``.
    private static let muLawSquares: [Double] = (0...255).map { Double(MuLaw.decode(UInt8($0))) * Double(MuLaw.decode(UInt8($0))) }
    private static let aLawSquares: [Double] = (0...255).map {
        Double(RealtimeALaw.decode(UInt8($0))) * Double(RealtimeALaw.decode(UInt8($0)))
    }

    /// The RMS level (0…32,767) of one window in `format`.
    static func level(_ window: UnsafeBufferPointer<UInt8>, format: RealtimeAudioFormat) -> Double {
        switch format {
        case .pcmu, .pcma:
            guard !window.isEmpty else { return 0 }
            let squares = format == .pcmu ? muLawSquares : aLawSquares
            var sum = 0.0
            squares.withUnsafeBufferPointer { squares in
                for byte in window { sum += squares[Int(byte)] }
            }
            return (sum / Double(window.count)).squareRoot()
        case .pcm:
            let count = window.count / 2
            guard count > 0 else { return 0 }
            var sum = 0.0
            for index in 0..<count {
                let sample = Double(Int16(bitPattern: UInt16(window[2 * index]) | UInt16(window[2 * index + 1]) << 8))
                sum += sample * sample
            }
            return (sum / Double(count)).squareRoot()
        }
    }

    private func resetDetector() {
        speech = nil
        voicedRun = 0
        silentMs = 0
    }

    private func speechStarted(audioStartMs: Int, detection: RealtimeTurnDetection) {
        let itemID = RealtimeIdentifier.make("item")
        speech = (itemID, audioStartMs)
        voicedRun = 0
        silentMs = 0
        emit("input_audio_buffer.speech_started", ["audio_start_ms": .int(audioStartMs), "item_id": .string(itemID)])
        log.update { record in
            record.speechTurns.append(
                .init(itemID: itemID, audioStartMs: audioStartMs, audioEndMs: nil, committed: false, transcript: nil))
        }
        if detection.interruptResponse, response != nil { finishResponse(status: "cancelled", reason: "turn_detected") }
    }

    private func speechStopped(audioEndMs: Int, detection: RealtimeTurnDetection) {
        guard let (itemID, startMs) = speech else { return }
        resetDetector()
        emit("input_audio_buffer.speech_stopped", ["audio_end_ms": .int(audioEndMs), "item_id": .string(itemID)])
        log.updateTurn(itemID) { $0.audioEndMs = audioEndMs }
        commitUserAudio(itemID: itemID, durationMs: max(0, audioEndMs - startMs))
        if detection.createResponse, response == nil {
            try? createResponse(nil, trigger: "turn_detection")
        }
    }

    private func commitBuffer() throws {
        let bufferMs = inputBufferBytes / session.inputFormat.bytesPerMillisecond
        guard bufferMs >= 100 else {
            let shown = String(format: "%.2f", Double(inputBufferBytes) / Double(session.inputFormat.bytesPerMillisecond))
            throw RealtimeRequestError(
                code: "input_audio_buffer_commit_empty",
                message:
                    "Error committing input audio buffer: buffer too small. Expected at least 100ms of audio, but buffer only has \(shown)ms of audio.",
                param: nil)
        }
        let itemID: String
        if let (speechItem, _) = speech {
            itemID = speechItem
        } else {
            itemID = RealtimeIdentifier.make("item")
            log.update { record in
                record.speechTurns.append(.init(itemID: itemID, audioStartMs: nil, audioEndMs: nil, committed: false, transcript: nil))
            }
        }
        resetDetector()
        commitUserAudio(itemID: itemID, durationMs: bufferMs)
    }

    private func clearBuffer() {
        inputBufferBytes = 0
        transcriptionAudio.removeAll()
        recognizedLine = nil
        resetDetector()
        emit("input_audio_buffer.cleared", [:])
    }

    /// `input_audio_buffer.committed`, the user item, and its transcription when configured.
    private func commitUserAudio(itemID: String, durationMs: Int) {
        let previous = previousItemJSON
        inputBufferBytes = 0
        userAudioMs += durationMs
        emit("input_audio_buffer.committed", ["previous_item_id": previous, "item_id": .string(itemID)])
        var item = RealtimeObject()
        item["id"] = .string(itemID)
        item["object"] = "realtime.item"
        item["type"] = "message"
        item["status"] = "completed"
        item["role"] = "user"
        item["content"] = [["type": "input_audio"]]
        items[itemID] = ConversationItem(json: item)
        itemOrder.append(itemID)
        emit("conversation.item.added", ["previous_item_id": previous, "item": .object(item)])
        emit("conversation.item.done", ["previous_item_id": previous, "item": .object(item)])
        var transcript: String?
        if session.isTranscription {
            transcript = transcribeTurn(itemID: itemID, durationMs: durationMs)
        } else if session.transcribes {
            let text: String
            if transcriptsUsed < behavior.callerTranscripts.count {
                text = behavior.callerTranscripts[transcriptsUsed]
            } else if let recognizedLine {
                text = recognizedLine
            } else {
                text = "(caller speech, \(String(format: "%.1f", Double(durationMs) / 1_000)) s)"
            }
            transcriptsUsed += 1
            transcript = text
            items[itemID]?.transcript = text
            emit(
                "conversation.item.input_audio_transcription.completed",
                [
                    "item_id": .string(itemID), "content_index": 0, "transcript": .string(text),
                    "usage": ["type": "duration", "seconds": .double(Double(durationMs) / 1_000)],
                ])
        }
        recognizedLine = nil
        log.updateTurn(itemID) { turn in
            turn.committed = true
            turn.transcript = transcript
        }
    }

    /// A transcription session's turn: what the sandbox transcriber hears in its audio (``SandboxHeardAudio``, as
    /// `POST /audio/transcriptions` hears the same samples in a WAV: a duration sentence, or nothing over silence;
    /// ``Behavior/callerTranscripts`` first when given), streamed as `…delta` events of a few words each, then
    /// `…completed` with the duration usage. A session without a transcription model fails the turn with
    /// `…failed`, as the API does.
    private func transcribeTurn(itemID: String, durationMs: Int) -> String? {
        defer { transcriptionAudio.removeAll() }
        guard session.transcribes, session.transcriptionModel != nil else {
            emit(
                "conversation.item.input_audio_transcription.failed",
                [
                    "item_id": .string(itemID), "content_index": 0,
                    "error": ["type": "invalid_request_error", "code": "missing_model", "message": "No transcription model is configured."],
                ])
            return nil
        }
        let text: String
        if transcriptsUsed < behavior.callerTranscripts.count {
            text = behavior.callerTranscripts[transcriptsUsed]
        } else {
            var samples = [Int16](repeating: 0, count: transcriptionAudio.count / 2)
            for index in samples.indices {
                samples[index] = Int16(bitPattern: UInt16(transcriptionAudio[2 * index]) | UInt16(transcriptionAudio[2 * index + 1]) << 8)
            }
            let sampleRate = session.inputFormat == .pcm ? 24_000 : 8_000
            if session.inputFormat != .pcm {
                samples = session.inputFormat == .pcmu ? MuLaw.decode(transcriptionAudio) : transcriptionAudio.map { RealtimeALaw.decode($0) }
            }
            // What the file transcriber says of a WAV of these samples without sandbox text: silence (below
            // ``SandboxOpenAI/silenceLevel``) is nothing (as gpt-transcribe hears it), anything else a sentence naming
            // its duration.
            let energy = samples.reduce(0.0) { $0 + Double($1) * Double($1) }
            let rms = samples.isEmpty ? 0 : (energy / Double(samples.count)).squareRoot()
            let seconds = Double(samples.count) / Double(sampleRate)
            text = rms < SandboxOpenAI.silenceLevel ? "" : "This is a sandbox transcription of \(String(format: "%.1f", seconds)) seconds of audio."
        }
        transcriptsUsed += 1
        let words = text.split(separator: " ", omittingEmptySubsequences: false)
        var start = 0
        while start < words.count {
            let end = min(words.count, start + 3)
            let delta = words[start..<end].joined(separator: " ") + (end < words.count ? " " : "")
            emit("conversation.item.input_audio_transcription.delta", ["item_id": .string(itemID), "content_index": 0, "delta": .string(delta)])
            start = end
        }
        items[itemID]?.transcript = text
        emit(
            "conversation.item.input_audio_transcription.completed",
            [
                "item_id": .string(itemID), "content_index": 0, "transcript": .string(text),
                "usage": ["type": "duration", "seconds": .double(Double(durationMs) / 1_000)],
            ])
        return text
    }

    // MARK: - Conversation items

    /// The text of the conversation's last item when it is a user message with `input_text` content (parts joined by
    /// a space), else `nil`.
    private var latestUserText: String? {
        guard let last = itemOrder.last, let item = items[last]?.json, item["type"]?.string == "message", item["role"]?.string == "user"
        else { return nil }
        let texts = (item["content"]?.array ?? []).compactMap { part -> String? in
            guard let part = part.object, part["type"]?.string == "input_text" else { return nil }
            return part["text"]?.string
        }
        let text = texts.joined(separator: " ").trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }

    /// What the person said last, when the conversation's last item is theirs: its text, or what was heard of its audio.
    private var latestUserUtterance: String? {
        guard let last = itemOrder.last, let item = items[last], item.json["type"]?.string == "message", item.json["role"]?.string == "user"
        else { return nil }
        return latestUserText ?? item.transcript
    }

    /// The text a response's instructions ask to be said word for word: between « and » (the last such quotation).
    static func verbatimText(in instructions: String) -> String? {
        guard let close = instructions.range(of: "»", options: .backwards),
            let open = instructions.range(of: "«", options: .backwards, range: instructions.startIndex..<close.lowerBound)
        else { return nil }
        let text = instructions[open.upperBound..<close.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }

    /// Answers with a call of `tool` instead of speech: `function_call` item, argument events, `response.done`.
    private func callFunction(_ tool: RealtimeFunctionToolSpec, metadata: RealtimeJSON, trigger: String) {
        let responseID = RealtimeIdentifier.make("resp")
        let itemID = RealtimeIdentifier.make("item")
        let callID = RealtimeIdentifier.make("call")
        let arguments = "{}"
        var item = RealtimeObject()
        item["id"] = .string(itemID)
        item["object"] = "realtime.item"
        item["type"] = "function_call"
        item["status"] = "in_progress"
        item["name"] = .string(tool.name)
        item["call_id"] = .string(callID)
        item["arguments"] = ""
        func response(status: String, output: [RealtimeJSON], usage: RealtimeJSON?) -> RealtimeJSON {
            var object = RealtimeObject()
            object["object"] = "realtime.response"
            object["id"] = .string(responseID)
            object["status"] = .string(status)
            object["output"] = .array(output)
            object["conversation_id"] = .string(conversationID)
            object["output_modalities"] = session.textOnly ? ["text"] : ["audio"]
            object["max_output_tokens"] = session.object["max_output_tokens"] ?? "inf"
            object["audio"] = ["output": ["format": session.outputFormat.json, "voice": .string(session.voice)]]
            if let usage { object["usage"] = usage }
            object["metadata"] = metadata
            return .object(object)
        }
        let previous = previousItemJSON
        emit("response.created", ["response": response(status: "in_progress", output: [], usage: nil)])
        emit("response.output_item.added", ["response_id": .string(responseID), "output_index": 0, "item": .object(item)])
        emit("conversation.item.added", ["previous_item_id": previous, "item": .object(item)])
        let ids: [(String, RealtimeJSON)] = [
            ("response_id", .string(responseID)), ("item_id", .string(itemID)), ("output_index", 0), ("call_id", .string(callID)),
        ]
        emit("response.function_call_arguments.delta", ids + [("delta", .string(arguments))])
        emit("response.function_call_arguments.done", ids + [("name", .string(tool.name)), ("arguments", .string(arguments))])
        item["status"] = "completed"
        item["arguments"] = .string(arguments)
        items[itemID] = ConversationItem(json: item)
        itemOrder.append(itemID)
        emit("response.output_item.done", ["response_id": .string(responseID), "output_index": 0, "item": .object(item)])
        emit("conversation.item.done", ["previous_item_id": previous, "item": .object(item)])
        let inputText = (session.instructions.count + 3) / 4 + 4 * itemOrder.count
        let usage: RealtimeJSON = [
            "total_tokens": .int(inputText + userAudioMs / 100 + 8), "input_tokens": .int(inputText + userAudioMs / 100), "output_tokens": 8,
            "input_token_details": [
                "text_tokens": .int(inputText), "audio_tokens": .int(userAudioMs / 100), "image_tokens": 0, "cached_tokens": 0,
                "cached_tokens_details": ["text_tokens": 0, "audio_tokens": 0, "image_tokens": 0],
            ],
            "output_token_details": ["text_tokens": 8, "audio_tokens": 0],
        ]
        emit("response.done", ["response": response(status: "completed", output: [.object(item)], usage: usage)])
        log.update { record in
            record.functionCalls.append(tool.name)
            record.responses.append(
                .init(
                    id: responseID, itemID: itemID, status: "completed", reason: nil, trigger: trigger, text: "", transcript: "",
                    generatedMs: 0, lineMs: 0, deltas: 0))
        }
    }

    private var previousItemJSON: RealtimeJSON {
        itemOrder.last.map(RealtimeJSON.string) ?? .null
    }

    private func existingItem(_ event: RealtimeObject) throws -> ConversationItem {
        guard let itemID = event["item_id"]?.string else { throw RealtimeRequestError.missing("item_id") }
        guard let item = items[itemID] else {
            throw RealtimeRequestError.invalidValue("item_id", "Item with item_id not found: \(itemID)")
        }
        return item
    }

    private func createItem(_ event: RealtimeObject) throws {
        guard let value = event["item"] else { throw RealtimeRequestError.missing("item") }
        guard var item = value.object else { throw RealtimeRequestError.invalidType("item", expected: "an object", got: value) }
        guard let type = item["type"]?.string else { throw RealtimeRequestError.missing("item.type") }
        let types = ["message", "function_call", "function_call_output", "mcp_approval_response"]
        guard types.contains(type) else {
            throw RealtimeRequestError.invalidValue(
                "item.type",
                "Invalid value: '\(type)'. Supported values are: 'message', 'function_call', 'function_call_output', and 'mcp_approval_response'.")
        }
        if type == "message" {
            guard let role = item["role"]?.string, ["system", "user", "assistant"].contains(role) else {
                throw RealtimeRequestError.invalidValue("item.role", "Invalid 'item.role': expected 'system', 'user', or 'assistant'.")
            }
            guard item["content"]?.array != nil else { throw RealtimeRequestError.missing("item.content") }
        }
        let itemID = item["id"]?.string ?? RealtimeIdentifier.make("item")
        guard items[itemID] == nil else {
            throw RealtimeRequestError.invalidValue("item.id", "Item with id '\(itemID)' already exists.")
        }
        var position = itemOrder.count
        if let previous = event["previous_item_id"]?.string, previous != "root" {
            guard let index = itemOrder.firstIndex(of: previous) else {
                throw RealtimeRequestError.invalidValue("previous_item_id", "Item with item_id not found: \(previous)")
            }
            position = index + 1
        } else if event["previous_item_id"]?.string == "root" {
            position = 0
        }
        item["id"] = .string(itemID)
        item["object"] = "realtime.item"
        if item["status"] == nil { item["status"] = "completed" }
        let previous: RealtimeJSON = position > 0 ? .string(itemOrder[position - 1]) : .null
        items[itemID] = ConversationItem(json: item)
        itemOrder.insert(itemID, at: position)
        emit("conversation.item.added", ["previous_item_id": previous, "item": .object(item)])
        emit("conversation.item.done", ["previous_item_id": previous, "item": .object(item)])
    }

    private func truncate(_ event: RealtimeObject) throws {
        guard let itemID = event["item_id"]?.string else { throw RealtimeRequestError.missing("item_id") }
        guard let contentIndex = event["content_index"]?.int else { throw RealtimeRequestError.missing("content_index") }
        guard let audioEndMs = event["audio_end_ms"]?.int else { throw RealtimeRequestError.missing("audio_end_ms") }
        func refuse(_ error: RealtimeRequestError, generatedMs: Int?) -> RealtimeRequestError {
            log.update { record in
                record.truncations.append(
                    .init(
                        itemID: itemID, contentIndex: contentIndex, audioEndMs: audioEndMs, generatedMs: generatedMs, accepted: false,
                        errorCode: error.code))
            }
            return error
        }
        guard items[itemID] != nil else {
            throw refuse(RealtimeRequestError.invalidValue("item_id", "Item with item_id not found: \(itemID)"), generatedMs: nil)
        }
        // Truncating the item of a response still in progress means the client stopped playing it: the response
        // ends first (cancelled), so no audio is generated past the cut.
        if let active = response, active.itemID == itemID { finishResponse(status: "cancelled", reason: "client_cancelled") }
        guard let item = items[itemID], let generatedMs = item.audioMs else {
            throw refuse(
                RealtimeRequestError.invalidValue("item_id", "Only model output audio messages can be truncated"), generatedMs: nil)
        }
        guard contentIndex == 0 else {
            throw refuse(
                RealtimeRequestError.invalidValue("content_index", "Invalid 'content_index': item \(itemID) has no content part \(contentIndex)."),
                generatedMs: generatedMs)
        }
        guard audioEndMs >= 0 else {
            throw refuse(
                RealtimeRequestError.invalidValue("audio_end_ms", "Invalid 'audio_end_ms': \(audioEndMs) must not be negative."),
                generatedMs: generatedMs)
        }
        guard audioEndMs <= generatedMs else {
            throw refuse(
                RealtimeRequestError.invalidValue(
                    "audio_end_ms",
                    "Audio content of \(generatedMs)ms is already shorter than \(audioEndMs)ms: audio_end_ms exceeds the duration of the item's audio."
                ),
                generatedMs: generatedMs)
        }
        let transcript = Self.cut(item.transcript ?? "", keeping: generatedMs == 0 ? 0 : Double(audioEndMs) / Double(generatedMs))
        var updated = item
        updated.audioMs = audioEndMs
        updated.transcript = transcript
        updated.json["content"] = [["type": "output_audio", "transcript": .string(transcript)]]
        items[itemID] = updated
        log.update { record in
            record.truncations.append(
                .init(
                    itemID: itemID, contentIndex: contentIndex, audioEndMs: audioEndMs, generatedMs: generatedMs, accepted: true,
                    errorCode: nil))
            if let index = record.responses.lastIndex(where: { $0.itemID == itemID }) {
                record.responses[index].transcript = transcript
            }
        }
        emit(
            "conversation.item.truncated",
            ["item_id": .string(itemID), "content_index": .int(contentIndex), "audio_end_ms": .int(audioEndMs)])
    }

    /// The words of `text` that fit in `fraction` of its length (by characters, cut at a word boundary).
    static func cut(_ text: String, keeping fraction: Double) -> String {
        guard fraction < 1 else { return text }
        let limit = Int((Double(text.count) * max(0, fraction)).rounded())
        var kept = ""
        for word in text.split(separator: " ") {
            let next = kept.isEmpty ? String(word) : kept + " " + word
            if next.count > limit { break }
            kept = next
        }
        return kept
    }

    // MARK: - Responses

    private func createResponse(_ parameters: RealtimeJSON?, trigger: String) throws {
        if let active = response {
            throw RealtimeRequestError(
                code: "conversation_already_has_active_response",
                message:
                    "Conversation already has an active response in progress: \(active.id). Wait until the response is finished before creating a new one.",
                param: nil)
        }
        if let parameters, !parameters.isNull, parameters.object == nil {
            throw RealtimeRequestError.invalidType("response", expected: "an object", got: parameters)
        }
        let options = parameters?.object
        // A function whose purpose the person's last words match is called instead of answering (`tool_choice` auto).
        if options?["tool_choice"]?.string != "none", let utterance = latestUserUtterance,
            let tool = session.functionTools.first(where: { $0.matches(utterance) })
        {
            callFunction(tool, metadata: options?["metadata"] ?? .null, trigger: trigger)
            return
        }
        var textOnly = session.textOnly
        if let modalities = options?["output_modalities"] {
            guard modalities == ["audio"] || modalities == ["text"] else {
                throw RealtimeRequestError.invalidValue(
                    "response.output_modalities",
                    "Invalid modalities: \(modalities.text). Supported combinations are: [\"text\"] and [\"audio\"].")
            }
            textOnly = modalities == ["text"]
        }
        // Without turn detection, a user's text message answered in audio is read aloud (speech synthesis: the
        // instructions ask for exactly that, and the emulated model reads perfectly unless told to deviate); any other
        // response speaks the next reply line.
        let text: String
        // Instructions that ask for exact words (« ») are followed: those words are said, as a real model would.
        let verbatim = options?["instructions"]?.string.flatMap(Self.verbatimText(in:))
        let reading = !textOnly && session.turnDetection == nil ? latestUserText : nil
        if let verbatim {
            text = verbatim
        } else if let reading {
            text = deviations?.take().map { RealtimeDeviations.deviate(reading, index: $0) } ?? reading
        } else {
            let lines = behavior.replyLines
            text = lines[responsesStarted % lines.count]
            responsesStarted += 1
        }
        var words: [String] = []
        for (index, word) in text.split(separator: " ").enumerated() {
            words.append(index == 0 ? String(word) : " " + word)
        }
        let responseID = RealtimeIdentifier.make("resp")
        let itemID = RealtimeIdentifier.make("item")
        let interval = TimeAmount.nanoseconds(
            Int64(Double(behavior.chunkMs) * 1_000_000 / (reading == nil ? behavior.speed : behavior.readingSpeed)))
        let active = ActiveResponse(
            id: responseID, itemID: itemID, text: text, words: words, textOnly: textOnly, format: session.outputFormat,
            voice: session.voice, metadata: options?["metadata"] ?? .null, speech: nil,
            nextDeadline: .now() + .milliseconds(Int64(behavior.firstAudioDelayMs)), interval: interval)
        response = active

        let previous = previousItemJSON
        var item = RealtimeObject()
        item["id"] = .string(itemID)
        item["object"] = "realtime.item"
        item["type"] = "message"
        item["status"] = "in_progress"
        item["role"] = "assistant"
        item["content"] = []
        items[itemID] = ConversationItem(json: item, audioMs: textOnly ? nil : 0, transcript: "")
        itemOrder.append(itemID)
        log.update { record in
            record.responses.append(
                .init(
                    id: responseID, itemID: itemID, status: "in_progress", reason: nil, trigger: trigger, text: text, transcript: "",
                    generatedMs: 0, lineMs: 0, deltas: 0))
        }

        emit("response.created", ["response": responseJSON(active, status: "in_progress", output: [], usage: nil, details: nil)])
        emit("response.output_item.added", ["response_id": .string(responseID), "output_index": 0, "item": .object(item)])
        emit("conversation.item.added", ["previous_item_id": previous, "item": .object(item)])
        emit(
            "response.content_part.added",
            [
                "response_id": .string(responseID), "item_id": .string(itemID), "output_index": 0, "content_index": 0,
                "part": textOnly ? ["type": "text", "text": ""] : ["type": "audio", "transcript": ""],
            ])

        if textOnly {
            schedulePacing(at: active.nextDeadline)
            return
        }
        let key = RealtimeSpeechCache.Key(
            text: text, voice: SandboxRealtime.voiceNumber(session.voice), format: session.outputFormat, chunkMs: behavior.chunkMs)
        if let speech = cache.cached(key) {
            response?.speech = speech
            schedulePacing(at: active.nextDeadline)
        } else {
            let cache = self.cache
            rendering = Task { [self] in
                let speech = await cache.render(key)
                guard !Task.isCancelled else { return }
                eventLoop.execute { self.speechReady(responseID, speech) }
            }
        }
    }

    private func speechReady(_ responseID: String, _ speech: RenderedSpeech) {
        rendering = nil
        guard !closed, response?.id == responseID, response?.speech == nil else { return }
        response?.speech = speech
        schedulePacing(at: max(response?.nextDeadline ?? .now(), .now()))
    }

    private func schedulePacing(at deadline: NIODeadline) {
        pacing?.cancel()
        pacing = eventLoop.scheduleTask(deadline: deadline) { [self] in pace() }
    }

    /// Sends every delta that is due, then schedules the next one (or finishes the response).
    private func pace() {
        pacing = nil
        guard !closed, var active = response else { return }
        if active.textOnly {
            for word in active.words {
                emit(
                    "response.output_text.delta",
                    [
                        "response_id": .string(active.id), "item_id": .string(active.itemID), "output_index": 0, "content_index": 0,
                        "delta": .string(word),
                    ])
            }
            active.sentWords = active.words.count
            response = active
            finishResponse(status: "completed", reason: nil)
            return
        }
        guard let speech = active.speech else { return }
        let now = NIODeadline.now()
        let count = speech.chunks.count
        var burst = 0
        while active.sentChunks < count, active.nextDeadline <= now, burst < 64 {
            let index = active.sentChunks
            let wordsDue = (active.words.count * (index + 1) + count - 1) / count
            while active.sentWords < wordsDue {
                sendTranscriptDelta(active, active.words[active.sentWords])
                active.sentWords += 1
            }
            sendAudioDelta(active, speech.chunks[index])
            active.sentChunks += 1
            active.nextDeadline = active.nextDeadline + active.interval
            burst += 1
        }
        if active.sentChunks > 0 { producedAudio = true }
        response = active
        if active.sentChunks >= count {
            while active.sentWords < active.words.count {
                sendTranscriptDelta(active, active.words[active.sentWords])
                active.sentWords += 1
            }
            response = active
            finishResponse(status: "completed", reason: nil)
        } else {
            schedulePacing(at: active.nextDeadline)
        }
    }

    private func sendAudioDelta(_ active: ActiveResponse, _ chunk: String) {
        eventCounter += 1
        let text =
            "{\"type\":\"response.output_audio.delta\",\"event_id\":\"\(eventPrefix)\(eventCounter)\",\"response_id\":\"\(active.id)\",\"item_id\":\"\(active.itemID)\",\"output_index\":0,\"content_index\":0,\"delta\":\"\(chunk)\"}"
        socket.send(text)
        log.update { $0.eventsSent["response.output_audio.delta", default: 0] += 1 }
    }

    private func sendTranscriptDelta(_ active: ActiveResponse, _ delta: String) {
        emit(
            "response.output_audio_transcript.delta",
            [
                "response_id": .string(active.id), "item_id": .string(active.itemID), "output_index": 0, "content_index": 0,
                "delta": .string(delta),
            ])
    }

    private func cancelResponse(_ responseID: String?) throws {
        guard let active = response, responseID == nil || responseID == active.id else {
            throw RealtimeRequestError(
                code: "response_cancel_not_active", message: "Cancellation failed: no active response found.", param: nil)
        }
        finishResponse(status: "cancelled", reason: "client_cancelled")
    }

    /// Ends the active response: the done events of its audio, transcript, part and item, then `response.done`.
    private func finishResponse(status: String, reason: String?) {
        guard let active = response else { return }
        response = nil
        pacing?.cancel()
        pacing = nil
        rendering?.cancel()
        rendering = nil
        let transcript = active.words[0..<active.sentWords].joined()
        let generatedMs = active.speech?.milliseconds(chunks: active.sentChunks) ?? 0
        let lineMs = active.speech?.durationMs ?? 0
        let ids: [(String, RealtimeJSON)] = [
            ("response_id", .string(active.id)), ("item_id", .string(active.itemID)), ("output_index", 0), ("content_index", 0),
        ]
        var item = RealtimeObject()
        item["id"] = .string(active.itemID)
        item["object"] = "realtime.item"
        item["type"] = "message"
        item["status"] = status == "completed" ? "completed" : "incomplete"
        item["role"] = "assistant"
        if active.textOnly {
            item["content"] = [["type": "output_text", "text": .string(transcript)]]
            emit("response.output_text.done", ids + [("text", .string(transcript))])
            emit("response.content_part.done", ids + [("part", ["type": "text", "text": .string(transcript)])])
        } else {
            item["content"] = [["type": "output_audio", "transcript": .string(transcript)]]
            emit("response.output_audio.done", ids)
            emit("response.output_audio_transcript.done", ids + [("transcript", .string(transcript))])
            emit("response.content_part.done", ids + [("part", ["type": "audio", "transcript": .string(transcript)])])
        }
        emit("response.output_item.done", ["response_id": .string(active.id), "output_index": 0, "item": .object(item)])
        let position = itemOrder.firstIndex(of: active.itemID) ?? 0
        let previous: RealtimeJSON = position > 0 ? .string(itemOrder[position - 1]) : .null
        emit("conversation.item.done", ["previous_item_id": previous, "item": .object(item)])
        if items[active.itemID] != nil {
            items[active.itemID] = ConversationItem(
                json: item, audioMs: active.textOnly ? nil : generatedMs, transcript: active.textOnly ? nil : transcript)
        }
        let details: RealtimeJSON? = status == "cancelled" ? ["type": "cancelled", "reason": .string(reason ?? "client_cancelled")] : nil
        // The record is final before `response.done` goes out: a client that saw it finds the response's outcome.
        let deltas = active.textOnly ? 0 : active.sentChunks
        log.updateResponse(active.id) { record in
            record.status = status
            record.reason = reason
            record.transcript = transcript
            record.generatedMs = generatedMs
            record.lineMs = lineMs
            record.deltas = deltas
        }
        emit(
            "response.done",
            [
                "response": responseJSON(
                    active, status: status, output: [.object(item)], usage: usage(active, transcript, generatedMs), details: details)
            ])
    }

    private func responseJSON(
        _ active: ActiveResponse, status: String, output: [RealtimeJSON], usage: RealtimeJSON?, details: RealtimeJSON?
    ) -> RealtimeJSON {
        var object = RealtimeObject()
        object["object"] = "realtime.response"
        object["id"] = .string(active.id)
        object["status"] = .string(status)
        if let details { object["status_details"] = details }
        object["output"] = .array(output)
        object["conversation_id"] = .string(conversationID)
        object["output_modalities"] = active.textOnly ? ["text"] : ["audio"]
        object["max_output_tokens"] = session.object["max_output_tokens"] ?? "inf"
        object["audio"] = ["output": ["format": active.format.json, "voice": .string(active.voice)]]
        if let usage { object["usage"] = usage }
        object["metadata"] = active.metadata
        return .object(object)
    }

    /// Realistic token counts (OpenAI's realtime-costs guide): text ≈ 4 characters a token (the instructions and the
    /// conversation's text messages), user audio 1 token per 100 ms, model audio 1 per 50 ms. Every response is billed
    /// the whole conversation as input — all user audio so far and the model's earlier audio (1 per 50 ms) — and, as
    /// with OpenAI's prompt caching, the part the previous response already read is cached once that prefix is 1,024
    /// tokens or more.
    private func usage(_ active: ActiveResponse, _ transcript: String, _ generatedMs: Int) -> RealtimeJSON {
        let messageText = itemOrder.reduce(0) { total, id in
            total
                + (items[id]?.json["content"]?.array ?? []).reduce(0) { sum, part in
                    sum + (part.object?["type"]?.string == "input_text" ? part.object?["text"]?.string?.count ?? 0 : 0)
                }
        }
        let inputText = (session.instructions.count + messageText + 3) / 4 + 4 * itemOrder.count
        let earlierAssistantAudio = itemOrder.reduce(0) { $1 == active.itemID ? $0 : $0 + (items[$1]?.audioMs ?? 0) }
        let inputAudio = userAudioMs / 100 + earlierAssistantAudio / 50
        let outputText = (transcript.count + 3) / 4
        let outputAudio = active.textOnly ? 0 : generatedMs / 50
        let input = inputText + inputAudio
        let output = outputText + outputAudio
        let cacheable = lastInput.text + lastInput.audio >= 1_024
        let cachedText = cacheable ? min(inputText, lastInput.text) : 0
        let cachedAudio = cacheable ? min(inputAudio, lastInput.audio) : 0
        lastInput = (inputText, inputAudio)
        return [
            "total_tokens": .int(input + output),
            "input_tokens": .int(input),
            "output_tokens": .int(output),
            "input_token_details": [
                "text_tokens": .int(inputText), "audio_tokens": .int(inputAudio), "image_tokens": 0, "cached_tokens": .int(cachedText + cachedAudio),
                "cached_tokens_details": ["text_tokens": .int(cachedText), "audio_tokens": .int(cachedAudio), "image_tokens": 0],
            ],
            "output_token_details": ["text_tokens": .int(outputText), "audio_tokens": .int(outputAudio)],
        ]
    }

    // MARK: - Sending

    /// Sends a server event: `type`, a fresh `event_id`, then `fields`.
    private func emit(_ type: String, _ fields: [(String, RealtimeJSON)]) {
        guard !closed else { return }
        eventCounter += 1
        var object = RealtimeObject()
        object["type"] = .string(type)
        object["event_id"] = .string(eventPrefix + String(eventCounter))
        for (key, value) in fields { object[key] = value }
        var text = ""
        object.write(into: &text)
        // Counted before it is sent: a client that saw the event finds it in the session's record.
        log.update { $0.eventsSent[type, default: 0] += 1 }
        socket.send(text)
    }

    private func emit(_ type: String, _ fields: KeyValuePairs<String, RealtimeJSON>) {
        emit(type, fields.map { ($0.key, $0.value) })
    }

    private func sendError(_ error: RealtimeRequestError, clientEventID: String?) {
        // Recorded before it is sent: a client that saw the event finds it in the session's record.
        log.update { record in
            record.errors.append(
                .init(type: error.type, code: error.code, message: error.message, param: error.param, clientEventID: clientEventID))
        }
        emit(
            "error",
            [
                "error": [
                    "type": .string(error.type), "code": error.code.map(RealtimeJSON.string) ?? .null, "message": .string(error.message),
                    "param": error.param.map(RealtimeJSON.string) ?? .null,
                    "event_id": clientEventID.map(RealtimeJSON.string) ?? .null,
                ]
            ])
    }
}
