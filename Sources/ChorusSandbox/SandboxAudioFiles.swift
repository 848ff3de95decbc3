import ChorusCore
import Foundation

/// Audio files the sandbox speech emulators serve, carrying the text they speak so the sandbox transcription emulator
/// can give it back exactly.
///
/// - WAV: RIFF/WAVE, PCM16 mono, with a `LIST`/`INFO` chunk (before `data`) holding `ISFT` = ``software`` and
///   `ICMT` = the spoken text (UTF-8, NUL-terminated, as RIFF INFO strings are).
/// - MP3: an ID3v2.4 tag with a `TXXX` frame (UTF-8) described ``textFrameDescription`` whose value is the spoken
///   text, followed by MPEG-1 Layer III frames (48 kHz, 64 kbit/s, mono, 24 ms each) of the requested duration.
///   The frames are valid but **silent** (all-zero side information): players accept them and report the right
///   duration; only the WAV output is audible.
///
/// ``embeddedText(in:)`` reads the text back from either; ``durationSeconds(of:)`` measures WAV, MP3 and MP4/M4A.
public enum SandboxAudioFiles {
    /// The `ISFT` value of sandbox WAV files; ``embeddedText(in:)`` only trusts an `ICMT` next to it.
    public static let software = "Chorus sandbox"
    /// The description of the ID3 `TXXX` frame holding the text of sandbox MP3 files.
    public static let textFrameDescription = "chorus-sandbox-text"
    /// The sample rate of ``speechWAV(text:voice:)`` (OpenAI's PCM/WAV speech output rate).
    public static let speechSampleRate = 24_000

    /// Bytes of one MP3 frame (MPEG-1 Layer III, 64 kbit/s, 48 kHz, no padding: 144 × 64,000 / 48,000).
    static let mp3FrameBytes = 192
    /// Samples in one MPEG-1 Layer III frame.
    static let mp3FrameSamples = 1_152
    /// The sample rate of the MP3 frames.
    static let mp3SampleRate = 48_000

    // MARK: - Writing

    /// A RIFF/WAVE file of 16-bit mono PCM `pcm16` at `sampleRate`, with `text` embedded.
    public static func wav(pcm16: [Int16], sampleRate: Int, text: String) -> Data {
        var info = Data("INFO".utf8)
        info.append(infoSubchunk("ISFT", software))
        info.append(infoSubchunk("ICMT", text))
        var body = Data("WAVE".utf8)
        var format = Data()
        format.appendLittleEndian(UInt16(1))  // PCM
        format.appendLittleEndian(UInt16(1))  // mono
        format.appendLittleEndian(UInt32(sampleRate))
        format.appendLittleEndian(UInt32(sampleRate * 2))  // byte rate
        format.appendLittleEndian(UInt16(2))  // block align
        format.appendLittleEndian(UInt16(16))  // bits per sample
        body.append(chunk("fmt ", format))
        body.append(chunk("LIST", info))
        var samples = Data(capacity: pcm16.count * 2)
        for sample in pcm16 { samples.appendLittleEndian(UInt16(bitPattern: sample)) }
        body.append(chunk("data", samples))
        return chunk("RIFF", body)
    }

    /// An MP3 file of `durationSeconds` (rounded up to whole 24 ms frames, at least one) of silent MPEG-1 Layer III
    /// frames, with `text` in an ID3v2.4 `TXXX` frame.
    public static func mp3(durationSeconds: Double, text: String) -> Data {
        let frameSeconds = Double(mp3FrameSamples) / Double(mp3SampleRate)
        let wanted = durationSeconds.isFinite ? max(0, durationSeconds) : 0
        let frames = max(1, Int((wanted / frameSeconds).rounded(.up)))
        var data = id3Tag(text: text)
        var frame = [UInt8](repeating: 0, count: mp3FrameBytes)
        // Sync, MPEG-1, Layer III, no CRC | 64 kbit/s, 48 kHz, no padding | mono, original.
        frame[0] = 0xFF
        frame[1] = 0xFB
        frame[2] = 0x54
        frame[3] = 0xC4
        data.reserveCapacity(data.count + frames * mp3FrameBytes)
        for _ in 0..<frames { data.append(contentsOf: frame) }
        return data
    }

    /// `text` spoken by ``SandboxSpeech`` (audible), as a 24 kHz PCM16 mono WAV with the text embedded. `voice` (any
    /// provider voice name or id) picks the synthetic signal's pitch deterministically.
    public static func speechWAV(text: String, voice: String) -> Data {
        let spoken = MuLaw.decode(SandboxSpeech.speak(text, voice: pitchIndex(voice)))
        return wav(pcm16: WAV.resample(spoken, from: MuLaw.sampleRate, to: speechSampleRate), sampleRate: speechSampleRate, text: text)
    }

    /// `text` as an MP3 as long as ``SandboxSpeech`` takes to say it (silent frames, see the type's documentation), with
    /// the text embedded.
    public static func speechMP3(text: String, voice: String) -> Data {
        let samples = SandboxSpeech.speak(text, voice: pitchIndex(voice)).count
        return mp3(durationSeconds: Double(samples) / Double(MuLaw.sampleRate), text: text)
    }

    // MARK: - Reading

    /// The text a sandbox speech emulator embedded in `data` (WAV `LIST`/`INFO` written by the sandbox, or MP3 ID3
    /// `TXXX` ``textFrameDescription``), or `nil` for any other audio.
    public static func embeddedText(in data: Data) -> String? {
        let bytes = [UInt8](data)
        if let riff = RIFFFile(bytes), riff.info["ISFT"] == software { return riff.info["ICMT"] }
        if let tag = ID3Tag(bytes) { return tag.userText[textFrameDescription] }
        return nil
    }

    /// The duration of a WAV (any codec, from its byte rate), MP3 (Layer III frames) or MP4/M4A (`mvhd`) file in
    /// seconds, or `nil` when the format is not recognised.
    public static func durationSeconds(of data: Data) -> Double? {
        let bytes = [UInt8](data)
        if let riff = RIFFFile(bytes) {
            guard riff.byteRate > 0 else { return nil }
            return Double(riff.dataRange.count) / Double(riff.byteRate)
        }
        if let seconds = mp4Duration(bytes) { return seconds }
        return mp3Duration(bytes)
    }

    /// The first channel of a 16-bit PCM WAV file as samples with their rate, or `nil` for anything else.
    public static func pcm16(wav data: Data) -> (samples: [Int16], sampleRate: Int)? {
        let bytes = [UInt8](data)
        guard let riff = RIFFFile(bytes), riff.isPCM16, riff.channels > 0, riff.sampleRate > 0 else { return nil }
        let stride = riff.channels * 2
        let count = riff.dataRange.count / stride
        var samples = [Int16](repeating: 0, count: count)
        for index in 0..<count {
            let at = riff.dataRange.lowerBound + index * stride
            samples[index] = Int16(bitPattern: UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8)
        }
        return (samples, riff.sampleRate)
    }

    // MARK: - Private

    /// The sandbox pitch (0 lowest … 4 highest, see ``SandboxSpeech``) of OpenAI's named voices, by their character
    /// (onyx deep, nova and shimmer bright), spread so that the Realtime voices use each pitch twice and the seven
    /// storytelling voices use all five (two pairs share, the fewest five pitches allow); and of the sandbox
    /// ElevenLabs' five premade voices (Adam, George, Daniel, Sarah, Rachel: one pitch each), by lowercased id.
    static let namedVoicePitches: [String: Int] = [
        "onyx": 0, "ash": 0, "cedar": 0, "fable": 1, "echo": 1, "ballad": 1, "alloy": 2, "verse": 2, "coral": 3, "sage": 3, "marin": 4,
        "nova": 4, "shimmer": 4, "pninz6obpgdqgcfmajgb": 0, "jbfqncbsd6rmkjvdrzzb": 1, "onwk4e9zlutakqww03f9": 2,
        "exavitqu4vr4xnsdxmal": 3, "21m00tcm4tlvdq8ikwam": 4,
    ]

    /// The pitch index of a voice: OpenAI's named voices by ``namedVoicePitches``, any other id (an ElevenLabs voice,
    /// a custom voice) by a stable sum of its characters (Swift's `hashValue` is seeded per process).
    static func pitchIndex(_ voice: String) -> Int {
        if let named = namedVoicePitches[voice.lowercased()] { return named }
        return voice.unicodeScalars.reduce(0) { ($0 &+ Int($1.value)) % 5 }
    }

    private static func chunk(_ id: String, _ body: Data) -> Data {
        var data = Data(id.utf8)
        data.appendLittleEndian(UInt32(body.count))
        data.append(body)
        if body.count % 2 == 1 { data.append(0) }
        return data
    }

    private static func infoSubchunk(_ id: String, _ value: String) -> Data {
        var body = Data(value.utf8)
        body.append(0)
        return chunk(id, body)
    }

    private static func id3Tag(text: String) -> Data {
        var content = Data([0x03])  // UTF-8
        content.append(contentsOf: Array(textFrameDescription.utf8))
        content.append(0)
        content.append(contentsOf: Array(text.utf8))
        var frame = Data("TXXX".utf8)
        frame.append(contentsOf: syncsafe(content.count))
        frame.append(contentsOf: [0, 0])
        frame.append(content)
        var tag = Data("ID3".utf8)
        tag.append(contentsOf: [4, 0, 0])
        tag.append(contentsOf: syncsafe(frame.count))
        tag.append(frame)
        return tag
    }

    private static func syncsafe(_ value: Int) -> [UInt8] {
        [UInt8((value >> 21) & 0x7F), UInt8((value >> 14) & 0x7F), UInt8((value >> 7) & 0x7F), UInt8(value & 0x7F)]
    }

    /// The duration of the MPEG audio Layer III frames in `bytes` (after any ID3v2 tag), resynchronising over junk.
    private static func mp3Duration(_ bytes: [UInt8]) -> Double? {
        var offset = ID3Tag.totalSize(bytes) ?? 0
        var seconds = 0.0
        var frames = 0
        while offset + 4 <= bytes.count {
            guard let frame = MPEGFrameHeader(bytes, at: offset) else {
                offset += 1
                continue
            }
            seconds += Double(frame.samples) / Double(frame.sampleRate)
            frames += 1
            offset += frame.length
        }
        return frames > 0 ? seconds : nil
    }

    /// `moov`/`mvhd` duration ÷ timescale of an ISO base media file (MP4, M4A).
    private static func mp4Duration(_ bytes: [UInt8]) -> Double? {
        guard bytes.count >= 8, bytes[4..<8].elementsEqual("ftyp".utf8) else { return nil }
        guard let moov = box("moov", in: bytes, range: 0..<bytes.count),
            let mvhd = box("mvhd", in: bytes, range: moov)
        else { return nil }
        let at = mvhd.lowerBound
        guard mvhd.count >= 4 else { return nil }
        let version = bytes[at]
        let timescale: UInt64
        let duration: UInt64
        if version == 1 {
            guard mvhd.count >= 32 else { return nil }
            timescale = bigEndian(bytes, at + 20, 4)
            duration = bigEndian(bytes, at + 24, 8)
        } else {
            guard mvhd.count >= 20 else { return nil }
            timescale = bigEndian(bytes, at + 12, 4)
            duration = bigEndian(bytes, at + 16, 4)
        }
        guard timescale > 0 else { return nil }
        return Double(duration) / Double(timescale)
    }

    /// The body range of the first box of `type` directly inside `range`.
    private static func box(_ type: String, in bytes: [UInt8], range: Range<Int>) -> Range<Int>? {
        var offset = range.lowerBound
        while offset + 8 <= range.upperBound {
            var size = Int(bigEndian(bytes, offset, 4))
            var header = 8
            if size == 1 {
                guard offset + 16 <= range.upperBound else { return nil }
                size = Int(clamping: bigEndian(bytes, offset + 8, 8))
                header = 16
            } else if size == 0 {
                size = range.upperBound - offset
            }
            // `size` is the file's (up to Int.max with a 64-bit size): compared with what is left, never added (it trapped).
            guard size >= header, size <= range.upperBound - offset else { return nil }
            if bytes[offset + 4..<offset + 8].elementsEqual(type.utf8) { return offset + header..<offset + size }
            offset += size
        }
        return nil
    }

    private static func bigEndian(_ bytes: [UInt8], _ at: Int, _ count: Int) -> UInt64 {
        bytes[at..<at + count].reduce(0) { $0 << 8 | UInt64($1) }
    }
}

/// The chunks of a RIFF/WAVE file that matter here.
struct RIFFFile {
    var formatTag = 0
    var channels = 0
    var sampleRate = 0
    var byteRate = 0
    var bitsPerSample = 0
    var dataRange = 0..<0
    /// `LIST`/`INFO` strings by id (`ICMT`, `ISFT`), trailing NULs removed.
    var info: [String: String] = [:]

    /// Whether the samples are 16-bit linear PCM (format 1, or `WAVE_FORMAT_EXTENSIBLE`).
    var isPCM16: Bool { (formatTag == 1 || formatTag == 0xFFFE) && bitsPerSample == 16 }

    init?(_ bytes: [UInt8]) {
        guard bytes.count >= 12, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WAVE".utf8) else {
            return nil
        }
        var sawFormat = false
        var sawData = false
        var offset = 12
        while offset + 8 <= bytes.count {
            let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            let declared = Self.u32(bytes, offset + 4)
            let body = offset + 8
            // Streaming writers (espeak-ng on a pipe) leave 0xFFFFFFFF as the size: clamp to what is there.
            let size = min(declared, bytes.count - body)
            if id == "fmt ", size >= 16 {
                formatTag = Self.u16(bytes, body)
                channels = Self.u16(bytes, body + 2)
                sampleRate = Self.u32(bytes, body + 4)
                byteRate = Self.u32(bytes, body + 8)
                bitsPerSample = Self.u16(bytes, body + 14)
                sawFormat = true
            } else if id == "data" {
                dataRange = body..<body + size
                sawData = true
            } else if id == "LIST", size >= 4, bytes[body..<body + 4].elementsEqual("INFO".utf8) {
                readInfo(bytes, from: body + 4, to: body + size)
            }
            offset = body + size + (size & 1)
        }
        guard sawFormat, sawData else { return nil }
    }

    private mutating func readInfo(_ bytes: [UInt8], from start: Int, to end: Int) {
        var offset = start
        while offset + 8 <= end {
            let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            let size = min(Self.u32(bytes, offset + 4), end - offset - 8)
            var value = bytes[offset + 8..<offset + 8 + size]
            while value.last == 0 { value = value.dropLast() }
            info[id] = String(decoding: value, as: UTF8.self)
            offset += 8 + size + (size & 1)
        }
    }

    private static func u16(_ bytes: [UInt8], _ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
    private static func u32(_ bytes: [UInt8], _ at: Int) -> Int { u16(bytes, at) | u16(bytes, at + 2) << 16 }
}

/// An ID3v2.3/2.4 tag at the start of a file: its user-defined text frames (`TXXX`).
struct ID3Tag {
    /// `TXXX` values by description (ISO-8859-1 and UTF-8 frames; UTF-16 frames are skipped).
    var userText: [String: String] = [:]

    /// The bytes the tag occupies (header, body and 2.4 footer), or `nil` without a tag.
    static func totalSize(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 10, bytes[0..<3].elementsEqual("ID3".utf8) else { return nil }
        let footer = bytes[3] == 4 && bytes[5] & 0x10 != 0 ? 10 : 0
        return 10 + syncsafe(bytes, 6) + footer
    }

    init?(_ bytes: [UInt8]) {
        guard Self.totalSize(bytes) != nil, bytes[3] == 3 || bytes[3] == 4 else { return nil }
        let version = bytes[3]
        let end = min(bytes.count, 10 + Self.syncsafe(bytes, 6))
        var offset = 10
        if bytes[5] & 0x40 != 0, offset + 4 <= end {
            // Extended header: 2.4 counts itself (syncsafe), 2.3 does not.
            offset += version == 4 ? Self.syncsafe(bytes, offset) : 4 + Self.u32(bytes, offset)
        }
        while offset + 10 <= end, bytes[offset] != 0 {
            let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            let size = version == 4 ? Self.syncsafe(bytes, offset + 4) : Self.u32(bytes, offset + 4)
            let body = offset + 10
            guard size >= 0, body + size <= end else { break }
            if id == "TXXX", size >= 1, bytes[body] == 0 || bytes[body] == 3 {
                let content = bytes[body + 1..<body + size]
                if let separator = content.firstIndex(of: 0) {
                    let description = String(decoding: content[content.startIndex..<separator], as: UTF8.self)
                    var value = content[(separator + 1)...]
                    while value.last == 0 { value = value.dropLast() }
                    userText[description] =
                        bytes[body] == 3
                        ? String(decoding: value, as: UTF8.self)
                        : String(value.map { Character(Unicode.Scalar($0)) })
                }
            }
            offset = body + size
        }
    }

    private static func syncsafe(_ bytes: [UInt8], _ at: Int) -> Int {
        bytes[at..<at + 4].reduce(0) { $0 << 7 | Int($1 & 0x7F) }
    }

    private static func u32(_ bytes: [UInt8], _ at: Int) -> Int {
        bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) }
    }
}

/// One MPEG audio Layer III frame header (MPEG-1, 2 and 2.5).
struct MPEGFrameHeader {
    let length: Int
    let samples: Int
    let sampleRate: Int

    private static let mpeg1Bitrates = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
    private static let mpeg2Bitrates = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]

    init?(_ bytes: [UInt8], at offset: Int) {
        let b1 = bytes[offset + 1]
        let b2 = bytes[offset + 2]
        guard bytes[offset] == 0xFF, b1 & 0xE0 == 0xE0 else { return nil }
        let version = (b1 >> 3) & 0x03  // 3 MPEG-1, 2 MPEG-2, 0 MPEG-2.5
        guard version != 1, (b1 >> 1) & 0x03 == 1 else { return nil }  // Layer III only
        let bitrateIndex = Int(b2 >> 4)
        let rateIndex = Int((b2 >> 2) & 0x03)
        guard bitrateIndex > 0, bitrateIndex < 15, rateIndex < 3 else { return nil }
        let base = [44_100, 48_000, 32_000][rateIndex]
        let padding = Int((b2 >> 1) & 0x01)
        if version == 3 {
            sampleRate = base
            samples = 1_152
            length = 144 * Self.mpeg1Bitrates[bitrateIndex] * 1_000 / sampleRate + padding
        } else {
            sampleRate = version == 2 ? base / 2 : base / 4
            samples = 576
            length = 72 * Self.mpeg2Bitrates[bitrateIndex] * 1_000 / sampleRate + padding
        }
    }
}

extension Data {
    mutating func appendLittleEndian(_ value: UInt16) {
        append(UInt8(value & 0xFF))
        append(UInt8(value >> 8))
    }

    mutating func appendLittleEndian(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { append(UInt8((value >> UInt32(shift)) & 0xFF)) }
    }
}
