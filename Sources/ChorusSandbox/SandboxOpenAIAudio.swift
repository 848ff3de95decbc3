import ChorusCore
import ChorusProviders
import Foundation
import Vapor

/// `POST /audio/transcriptions` and `POST /audio/speech` of ``SandboxOpenAI``.
extension SandboxOpenAI {
    /// The transcription models and the response formats each accepts.
    static let transcriptionFormats: [String: Set<String>] = [
        "whisper-1": ["json", "text", "srt", "verbose_json", "vtt"],
        // json only: no verbose_json (no segments), no srt/vtt, no timestamps (research notes §0).
        "gpt-transcribe": ["json"],
        "gpt-4o-transcribe": ["json", "text"],
        "gpt-4o-mini-transcribe": ["json", "text"],
        "gpt-4o-mini-transcribe-2025-12-15": ["json", "text"],
        "gpt-4o-transcribe-diarize": ["json", "text", "diarized_json"],
    ]
    /// The models that return token log-probabilities with `include[]=logprobs`.
    static let logprobModels: Set<String> = ["gpt-4o-transcribe", "gpt-4o-mini-transcribe", "gpt-4o-mini-transcribe-2025-12-15"]
    /// The models that take `languages[]` and `keywords[]`.
    static let languageListModels: Set<String> = ["gpt-transcribe"]
    /// The file extensions the API accepts.
    static let audioExtensions = ["flac", "m4a", "mp3", "mp4", "mpeg", "mpga", "oga", "ogg", "wav", "webm"]
    /// The speech models.
    static let speechModels: Set<String> = ["tts-1", "tts-1-hd", "gpt-4o-mini-tts", "gpt-4o-mini-tts-2025-12-15"]
    /// The built-in voices.
    static let voices = ["alloy", "ash", "ballad", "coral", "echo", "fable", "onyx", "nova", "sage", "shimmer", "verse", "marin", "cedar"]
    /// The transcript of silence: Whisper's best-known hallucination.
    static let silenceHallucination = "Thank you."
    /// RMS level (of 32,767) below which a PCM WAV is silence: about −50 dBFS.
    static let silenceLevel = 104.0

    // MARK: - Transcriptions

    func transcribe(_ request: Request, body: ByteBuffer) -> Response {
        let contentType = request.headers.first(name: .contentType) ?? ""
        guard let boundary = MultipartForm.boundary(contentType: contentType),
            let form = MultipartForm(bytes: Array(body.readableBytesView), boundary: boundary)
        else {
            return Self.invalid(
                "Invalid Content-Type header (\(contentType)), expected multipart/form-data. (HINT: If you're using curl, you can pass -H 'Content-Type: multipart/form-data')"
            )
        }
        guard let model = form.value("model"), !model.isEmpty else { return Self.invalid("you must provide a model parameter") }
        guard let formats = Self.transcriptionFormats[model] else { return Self.modelNotFound(model) }
        guard let file = form.file("file") else {
            return Self.invalid("Missing required parameter: 'file'.", param: "file", code: "missing_required_parameter")
        }
        let fileExtension = (file.filename as NSString).pathExtension.lowercased()
        guard Self.audioExtensions.contains(fileExtension) else {
            return Self.invalid(
                "Invalid file format. Supported formats: [\(Self.audioExtensions.map { "'\($0)'" }.joined(separator: ", "))]")
        }
        let format = form.value("response_format") ?? "json"
        guard ["json", "text", "srt", "verbose_json", "vtt", "diarized_json"].contains(format) else {
            return Self.invalid(
                "Invalid value: '\(format)'. Supported values are: 'json', 'text', 'srt', 'verbose_json', 'vtt', and 'diarized_json'.",
                param: "response_format", code: "invalid_value")
        }
        guard formats.contains(format) else {
            let allowed = formats.sorted().map { "'\($0)'" }.joined(separator: " or ")
            return Self.invalid(
                "response_format '\(format)' is not compatible with model '\(model)'. Use \(allowed) instead.",
                param: "response_format", code: "unsupported_value")
        }
        let include = form.values("include[]") + form.values("include")
        if let unknown = include.first(where: { $0 != "logprobs" }) {
            return Self.invalid(
                "Invalid value: '\(unknown)'. Supported values are: 'logprobs'.", param: "include", code: "invalid_value")
        }
        let logprobs = !include.isEmpty
        if logprobs, !(Self.logprobModels.contains(model) && format == "json") {
            return Self.invalid(
                "logprobs are only supported with response_format 'json' and the models gpt-4o-transcribe, gpt-4o-mini-transcribe and gpt-4o-mini-transcribe-2025-12-15.",
                param: "include", code: "unsupported_value")
        }
        let granularities = form.values("timestamp_granularities[]") + form.values("timestamp_granularities")
        if let unknown = granularities.first(where: { $0 != "word" && $0 != "segment" }) {
            return Self.invalid(
                "Invalid value: '\(unknown)'. Supported values are: 'word' and 'segment'.", param: "timestamp_granularities",
                code: "invalid_value")
        }
        if !granularities.isEmpty, format != "verbose_json" {
            return Self.invalid(
                "timestamp_granularities requires response_format 'verbose_json'.", param: "timestamp_granularities",
                code: "unsupported_value")
        }
        let language = form.value("language").flatMap { $0.isEmpty ? nil : $0 }
        let languages = form.values("languages[]") + form.values("languages")
        let keywords = form.values("keywords[]") + form.values("keywords")
        for (param, values) in [("languages", languages), ("keywords", keywords)] where !values.isEmpty {
            guard Self.languageListModels.contains(model) else {
                return Self.invalid(
                    "Unsupported parameter: '\(param)' is not supported with this model.", param: param, code: "unsupported_parameter")
            }
        }
        for (param, value) in [("language", language)] + languages.map({ ("languages", Optional($0)) }) {
            if let value, !(value.count == 2 && value.allSatisfy { $0.isASCII && $0.isLowercase }) {
                return Self.invalid(
                    "Invalid language '\(value)'. Language parameter must be specified in ISO-639-1 format.", param: param,
                    code: "invalid_language_format")
            }
        }
        guard !file.body.isEmpty else {
            return Self.invalid("The audio file could not be decoded or its format is not supported.", param: "file", code: "invalid_value")
        }
        let heard = SandboxHeardAudio(Data(file.body))
        guard heard.duration >= 0.1 else {
            return Self.invalid("Audio file is too short. Minimum audio length is 0.1 seconds.", param: "file", code: "audio_too_short")
        }
        // A container claiming more than a day (an M4A's 64-bit duration can claim 2^64 − 1 seconds) is not audio the
        // API would take: refused before the duration is turned into usage, timestamps and segments (it trapped).
        guard heard.duration <= 86_400 else {
            return Self.invalid("The audio file could not be decoded or its format is not supported.", param: "file", code: "invalid_value")
        }
        let code = languages.first ?? language ?? "en"
        switch format {
        case "verbose_json":
            return Self.json(heard.verboseJSON(language: Self.whisperLanguageNames[code] ?? code, granularities: Set(granularities)))
        case "text":
            return Self.text(heard.text + "\n", contentType: "text/plain; charset=utf-8")
        case "srt":
            return Self.text(heard.subtitles(vtt: false), contentType: "text/plain; charset=utf-8")
        case "vtt":
            return Self.text(heard.subtitles(vtt: true), contentType: "text/vtt; charset=utf-8")
        case "diarized_json":
            return Self.json(heard.diarizedJSON())
        default:
            var answer = RealtimeObject()
            if Self.languageListModels.contains(model) {
                let listened = heard.listened(language: code)
                answer["text"] = .string(listened.text)
                answer["languages"] = .array(listened.languages.map { ["code": .string($0)] })
            } else {
                answer["text"] = .string(heard.text)
            }
            if logprobs { answer["logprobs"] = heard.logprobs() }
            answer["usage"] = model == "whisper-1" || model == "gpt-transcribe" ? heard.durationUsage : heard.tokenUsage
            return Self.json(.object(answer))
        }
    }

    /// Whisper's names of the languages ISO-639-1 codes stand for (the names `verbose_json` reports).
    static let whisperLanguageNames: [String: String] = [
        "ar": "arabic", "ca": "catalan", "cs": "czech", "da": "danish", "de": "german", "el": "greek", "en": "english",
        "es": "spanish", "fa": "persian", "fi": "finnish", "fr": "french", "he": "hebrew", "hi": "hindi", "hu": "hungarian",
        "id": "indonesian", "it": "italian", "ja": "japanese", "ko": "korean", "nl": "dutch", "no": "norwegian",
        "pl": "polish", "pt": "portuguese", "ro": "romanian", "ru": "russian", "sv": "swedish", "th": "thai",
        "tl": "tagalog", "tr": "turkish", "uk": "ukrainian", "vi": "vietnamese", "zh": "chinese",
    ]

    static func text(_ body: String, contentType: String) -> Response {
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .contentType, value: contentType)
        return Response(status: .ok, headers: headers, body: .init(string: body))
    }

    // MARK: - Speech

    func speech(_ request: Request) -> Response {
        guard let text = request.body.string, case .object(let body)? = RealtimeJSON.parse(text) else { return Self.unparsableJSON() }
        let allowed: Set<String> = ["model", "input", "instructions", "voice", "response_format", "speed", "stream_format"]
        if let unknown = body.keys.first(where: { !allowed.contains($0) }) {
            return Self.invalid("Unrecognized request argument supplied: \(unknown)")
        }
        for required in ["model", "input", "voice"] where body[required] == nil {
            return Self.invalid("Missing required parameter: '\(required)'.", param: required, code: "missing_required_parameter")
        }
        guard let model = body["model"]?.string else { return Self.invalidType("model", expected: "a string", got: body["model"]) }
        guard let input = body["input"]?.string else { return Self.invalidType("input", expected: "a string", got: body["input"]) }
        guard Self.speechModels.contains(model) else { return Self.modelNotFound(model) }
        let length = input.unicodeScalars.count
        if length > 4_096 {
            return Self.invalid(
                "[{'type': 'string_too_long', 'loc': ('body', 'input'), 'msg': 'String should have at most 4096 characters', 'ctx': {'max_length': 4096}}]"
            )
        }
        if length == 0 {
            return Self.invalid(
                "[{'type': 'string_too_short', 'loc': ('body', 'input'), 'msg': 'String should have at least 1 character', 'ctx': {'min_length': 1}}]"
            )
        }
        let voice: String
        switch body["voice"] {
        case .string(let name)?:
            guard Self.voices.contains(name) else {
                return Self.invalid(
                    "Invalid value: '\(name)'. Supported values are: \(Self.voices.map { "'\($0)'" }.joined(separator: ", ")).",
                    param: "voice", code: "invalid_value")
            }
            voice = name
        case .object(let custom)? where custom.keys == ["id"] && custom["id"]?.string?.isEmpty == false:
            voice = custom["id"]?.string ?? ""
        default:
            return Self.invalidType("voice", expected: "a voice name or an object with an id", got: body["voice"])
        }
        if let instructions = body["instructions"] {
            guard let text = instructions.string else { return Self.invalidType("instructions", expected: "a string", got: instructions) }
            if text.unicodeScalars.count > 4_096 {
                return Self.invalid(
                    "Invalid 'instructions': string too long. Expected a string with maximum length 4096, but got a string with length \(text.unicodeScalars.count) instead.",
                    param: "instructions", code: "string_above_max_length")
            }
        }
        let format = body["response_format"]?.string ?? "mp3"
        guard ["mp3", "opus", "aac", "flac", "wav", "pcm"].contains(format) else {
            return Self.invalid(
                "Invalid value: '\(format)'. Supported values are: 'mp3', 'opus', 'aac', 'flac', 'wav', and 'pcm'.",
                param: "response_format", code: "invalid_value")
        }
        guard ["mp3", "wav", "pcm"].contains(format) else {
            return Self.invalid(
                "The sandbox emulator produces mp3, wav and pcm audio, not \(format).", param: "response_format", code: "unsupported_value")
        }
        var speed = 1.0
        if let value = body["speed"] {
            guard let number = value.number else { return Self.invalidType("speed", expected: "a number", got: value) }
            guard number >= 0.25, number <= 4 else {
                return Self.invalid(
                    "Invalid 'speed': expected a value between 0.25 and 4.0, but got \(number) instead.", param: "speed",
                    code: "invalid_value")
            }
            speed = number
        }
        if let stream = body["stream_format"] {
            guard stream.string == "audio" || stream.string == "sse" else {
                return Self.invalid(
                    "Invalid value for 'stream_format': expected 'sse' or 'audio'.", param: "stream_format", code: "invalid_value")
            }
            if stream.string == "sse" {
                return Self.invalid(
                    "The sandbox emulator streams raw audio only (stream_format 'audio').", param: "stream_format", code: "unsupported_value")
            }
        }
        return Self.speechAudio(input, voice: voice, format: format, speed: speed)
    }

    /// The audio for `text`: ``SandboxSpeech`` at `speed`, as MP3 (silent frames, same duration), WAV or raw PCM.
    static func speechAudio(_ text: String, voice: String, format: String, speed: Double) -> Response {
        let spoken = SandboxSpeech.speak(text, voice: SandboxAudioFiles.pitchIndex(voice))
        let seconds = Double(spoken.count) / Double(MuLaw.sampleRate) / speed
        var headers = HTTPHeaders()
        let audio: Data
        switch format {
        case "mp3":
            audio = SandboxAudioFiles.mp3(durationSeconds: seconds, text: text)
            headers.replaceOrAdd(name: .contentType, value: "audio/mpeg")
        default:
            let rate = SandboxAudioFiles.speechSampleRate
            let samples = WAV.resample(MuLaw.decode(spoken), from: Int((Double(MuLaw.sampleRate) * speed).rounded()), to: rate)
            if format == "wav" {
                audio = SandboxAudioFiles.wav(pcm16: samples, sampleRate: rate, text: text)
                headers.replaceOrAdd(name: .contentType, value: "audio/wav")
            } else {
                var pcm = Data(capacity: samples.count * 2)
                for sample in samples { pcm.appendLittleEndian(UInt16(bitPattern: sample)) }
                audio = pcm
                headers.replaceOrAdd(name: .contentType, value: "audio/pcm")
            }
        }
        return Response(status: .ok, headers: headers, body: .init(data: audio))
    }

    /// 400 for a member of the wrong JSON type (the API's wording).
    static func invalidType(_ param: String, expected: String, got value: RealtimeJSON?) -> Response {
        let got = value.map { ["integer", "object", "array"].contains($0.typeName) ? "an \($0.typeName)" : "a \($0.typeName)" } ?? "nothing"
        return invalid("Invalid type for '\(param)': expected \(expected), but got \(got) instead.", param: param, code: "invalid_type")
    }
}

/// What the transcription emulator "hears" in a recording (see ``SandboxOpenAI``).
struct SandboxHeardAudio {
    let text: String
    let duration: Double
    let silent: Bool
    /// The recording as received.
    let audio: Data
    /// The recording carries the sandbox's text (what was said).
    let hasEmbeddedText: Bool

    init(_ audio: Data) {
        self.audio = audio
        let measured = SandboxAudioFiles.durationSeconds(of: audio) ?? Double(audio.count) * 8 / 32_000
        duration = measured
        let embedded = SandboxAudioFiles.embeddedText(in: audio)?.trimmingCharacters(in: .whitespacesAndNewlines)
        hasEmbeddedText = embedded?.isEmpty == false
        if let embedded, !embedded.isEmpty {
            text = embedded
            silent = false
        } else if embedded != nil || SandboxAudioFiles.pcm16(wav: audio).map({ Self.rms($0.samples) < SandboxOpenAI.silenceLevel }) == true {
            text = SandboxOpenAI.silenceHallucination
            silent = true
        } else {
            text = "This is a sandbox transcription of \(String(format: "%.1f", measured)) seconds of audio."
            silent = false
        }
    }

    /// What `gpt-transcribe` makes of the recording: the words it can hear and the languages it can tell.
    ///
    /// Unlike Whisper it does not invent "Thank you." over silence: silence is `""` with `languages: []` (an empty list
    /// is the API's "could not detect"). For a PCM WAV it listens like a model does, from the samples on 20 ms frames:
    /// - noise: speech less than 12 dB above the background (90th over 10th percentile of the frame levels) loses words,
    ///   linearly to all of them at 3 dB; audio with no embedded text and no level contrast (< 6 dB: a steady noise or
    ///   hum) is heard as nothing;
    /// - speed: more than 11 syllables of the text (one per three characters of a word, as ``SandboxSpeech`` speaks
    ///   them) per voiced second loses words, linearly to 90 % at 19;
    /// - a recording that stops in speech (its last 40 ms voiced) loses the word cut off;
    /// - when half the words or more are lost, no language is detected.
    /// Lost words are spread evenly (a golden-ratio sequence), so results are deterministic. Other formats are heard
    /// in full.
    func listened(language: String) -> (text: String, languages: [String]) {
        if silent { return ("", []) }
        guard let pcm = SandboxAudioFiles.pcm16(wav: audio), pcm.sampleRate > 0, !pcm.samples.isEmpty else {
            return (text, [language])
        }
        let frame = max(1, pcm.sampleRate / 50)
        let levels = stride(from: 0, to: pcm.samples.count, by: frame).map { start in
            Self.rms(Array(pcm.samples[start..<min(pcm.samples.count, start + frame)]))
        }
        let sorted = levels.sorted()
        let floor = max(1, sorted[(sorted.count - 1) / 10])
        let contrast = 20 * log10(max(1, sorted[(sorted.count - 1) * 9 / 10]) / floor)
        guard hasEmbeddedText else { return contrast < 6 ? ("", []) : (text, [language]) }
        let voiced = levels.map { $0 >= max(SandboxOpenAI.silenceLevel, 2 * floor) }
        let voicedSeconds = Double(voiced.filter { $0 }.count) * Double(frame) / Double(pcm.sampleRate)
        var words = text.split(whereSeparator: \.isWhitespace).map(String.init)
        let syllables = Double(words.reduce(0) { $0 + max(1, $1.count / 3) })
        let noiseLoss = min(1, max(0, (12 - contrast) / 9))
        let rate = voicedSeconds > 0 ? syllables / voicedSeconds : 0
        let speedLoss = min(0.9, max(0, (rate - 11) / 8))
        let loss = max(noiseLoss, speedLoss)
        if voiced.count >= 2, voiced.suffix(2).allSatisfy({ $0 }), !words.isEmpty { words.removeLast() }
        let kept = words.enumerated().filter { index, _ in
            let position = (Double(index + 1) * 0.618_033_988_749_895).truncatingRemainder(dividingBy: 1)
            return position >= loss
        }.map(\.element)
        let heard = kept.joined(separator: " ")
        return (heard, heard.isEmpty || loss >= 0.5 ? [] : [language])
    }

    /// One stretch of the transcript.
    struct Segment {
        let start: Double
        let end: Double
        let text: String
        let averageLogprob: Double
        let compressionRatio: Double
        let noSpeechProbability: Double
    }

    /// One segment per sentence, timed in proportion to its length; silence is one doubtful segment.
    var segments: [Segment] {
        if silent {
            return [
                Segment(
                    start: 0, end: Self.rounded(duration), text: text, averageLogprob: -1.3, compressionRatio: 0.6,
                    noSpeechProbability: 0.9)
            ]
        }
        let sentences = SandboxText.sentences(in: text)
        let total = Double(max(1, sentences.reduce(0) { $0 + $1.count }))
        var elapsed = 0
        return sentences.enumerated().map { index, sentence in
            let start = Self.rounded(duration * Double(elapsed) / total)
            elapsed += sentence.count
            return Segment(
                start: start, end: Self.rounded(duration * Double(elapsed) / total), text: sentence,
                averageLogprob: -(0.18 + 0.01 * Double(index % 5)), compressionRatio: 1.28 + 0.02 * Double(index % 3),
                noSpeechProbability: 0.01 + 0.002 * Double(index % 3))
        }
    }

    func verboseJSON(language: String, granularities: Set<String>) -> RealtimeJSON {
        var answer = RealtimeObject()
        answer["task"] = "transcribe"
        answer["language"] = .string(language)
        answer["duration"] = .double(Self.rounded(duration))
        answer["text"] = .string(text)
        if granularities.contains("word") {
            let words = text.split(whereSeparator: \.isWhitespace)
            let total = Double(max(1, words.reduce(0) { $0 + $1.count }))
            var elapsed = 0
            answer["words"] = .array(
                words.map { word in
                    let start = Self.rounded(duration * Double(elapsed) / total)
                    elapsed += word.count
                    return ["word": .string(String(word)), "start": .double(start), "end": .double(Self.rounded(duration * Double(elapsed) / total))]
                })
        }
        if granularities.isEmpty || granularities.contains("segment") {
            answer["segments"] = .array(
                segments.enumerated().map { index, segment in
                    [
                        "id": .int(index), "seek": .int(Int(segment.start / 30) * 3_000), "start": .double(segment.start),
                        "end": .double(segment.end), "text": .string(" " + segment.text),
                        "tokens": .array(Self.tokens(segment.text).map { .int($0) }), "temperature": .double(0),
                        "avg_logprob": .double(segment.averageLogprob), "compression_ratio": .double(segment.compressionRatio),
                        "no_speech_prob": .double(segment.noSpeechProbability),
                    ]
                })
        }
        answer["usage"] = durationUsage
        return .object(answer)
    }

    /// `logprobs` of `json`: one token per word (with its leading space), about −0.05 each, −1.3 for silence.
    func logprobs() -> RealtimeJSON {
        let words = text.split(whereSeparator: \.isWhitespace)
        return .array(
            words.enumerated().map { index, word in
                let token = (index == 0 ? "" : " ") + word
                let logprob = silent ? -1.3 : -(0.02 + 0.01 * Double(index % 4))
                return ["token": .string(token), "logprob": .double(logprob), "bytes": .array(token.utf8.map { .int(Int($0)) })]
            })
    }

    func diarizedJSON() -> RealtimeJSON {
        [
            "task": "transcribe", "duration": .double(Self.rounded(duration)), "text": .string(text),
            "segments": .array(
                segments.enumerated().map { index, segment in
                    [
                        "type": "transcript.text.segment", "id": .string(String(format: "seg_%03d", index + 1)),
                        "start": .double(segment.start), "end": .double(segment.end), "text": .string(segment.text), "speaker": "A",
                    ]
                }),
            "usage": tokenUsage,
        ]
    }

    /// SRT or WebVTT cues, one per segment.
    func subtitles(vtt: Bool) -> String {
        var output = vtt ? "WEBVTT\n\n" : ""
        for (index, segment) in segments.enumerated() {
            if !vtt { output += "\(index + 1)\n" }
            output += "\(Self.timestamp(segment.start, vtt: vtt)) --> \(Self.timestamp(segment.end, vtt: vtt))\n\(segment.text)\n\n"
        }
        return output
    }

    var durationUsage: RealtimeJSON {
        ["type": "duration", "seconds": .int(Int(duration.rounded(.up)))]
    }

    /// Token usage as the gpt-4o transcription models report it (about 10 audio tokens a second).
    var tokenUsage: RealtimeJSON {
        let audioTokens = max(1, Int((duration * 10).rounded()))
        let outputTokens = max(1, text.split(whereSeparator: \.isWhitespace).count * 4 / 3)
        return [
            "type": "tokens", "input_tokens": .int(audioTokens),
            "input_token_details": ["text_tokens": 0, "audio_tokens": .int(audioTokens)], "output_tokens": .int(outputTokens),
            "total_tokens": .int(audioTokens + outputTokens),
        ]
    }

    /// Stand-in token ids: one per word, derived from its letters.
    private static func tokens(_ text: String) -> [Int] {
        text.split(whereSeparator: \.isWhitespace).map { word in
            1_000 + word.unicodeScalars.reduce(0) { ($0 * 31 + Int($1.value)) % 49_000 }
        }
    }

    private static func timestamp(_ seconds: Double, vtt: Bool) -> String {
        let milliseconds = Int((seconds * 1_000).rounded())
        return String(
            format: "%02d:%02d:%02d%@%03d", milliseconds / 3_600_000, milliseconds / 60_000 % 60, milliseconds / 1_000 % 60,
            vtt ? "." : ",", milliseconds % 1_000)
    }

    private static func rounded(_ value: Double) -> Double { (value * 100).rounded() / 100 }

    private static func rms(_ samples: [Int16]) -> Double {
        guard !samples.isEmpty else { return 0 }
        let sum = samples.reduce(0.0) { $0 + Double($1) * Double($1) }
        return (sum / Double(samples.count)).squareRoot()
    }
}

