import Foundation

/// Random access to the bytes of a recording, so its container can be read without loading the whole file.
///
/// ``AudioContainer`` reads only headers through it (a few kilobytes for WAV and M4A), in windows of at most
/// ``AudioContainer/readWindow`` bytes; scanning an MP3 without a Xing/VBRI header walks every frame header, still one
/// window at a time. The server conforms a `FileHandle`; `[UInt8]` and `Data` conform here.
public protocol AudioByteSource {
    /// The total number of bytes.
    var size: Int64 { get }
    /// Up to `count` bytes starting at `offset`: fewer only at the end of the source, none at or beyond it.
    func read(offset: Int64, count: Int) throws -> [UInt8]
}

extension Array: AudioByteSource where Element == UInt8 {
    public var size: Int64 { Int64(count) }

    public func read(offset: Int64, count: Int) throws -> [UInt8] {
        guard offset >= 0, offset < size, count > 0 else { return [] }
        let start = Int(offset)
        return Array(self[start..<Swift.min(self.count, start + count)])
    }
}

extension Data: AudioByteSource {
    public var size: Int64 { Int64(count) }

    public func read(offset: Int64, count: Int) throws -> [UInt8] {
        guard offset >= 0, offset < size, count > 0 else { return [] }
        let start = startIndex + Int(offset)
        return [UInt8](self[start..<Swift.min(endIndex, start + count)])
    }
}

/// The recording containers Chorus accepts.
public enum AudioFormat: String, Sendable, Equatable, Hashable, CaseIterable, Codable {
    /// RIFF/WAVE.
    case wav
    /// MPEG-1/2/2.5 Layer III, optionally behind an ID3v2 tag.
    case mp3
    /// ISO base media (MPEG-4 audio, usually AAC): what iOS records.
    case m4a

    /// The media type to store and serve the recording with.
    public var mimeType: String {
        switch self {
        case .wav: "audio/wav"
        case .mp3: "audio/mpeg"
        case .m4a: "audio/mp4"
        }
    }

    /// The file extension (without the dot) providers recognise the format by.
    public var fileExtension: String { rawValue }
}

/// What the container says about a recording.
public struct AudioInfo: Sendable, Equatable {
    public var format: AudioFormat
    /// The playing time in seconds.
    public var durationSeconds: Double
    /// Samples per second, when the container states it.
    public var sampleRate: Int?
    /// The number of channels, when the container states it.
    public var channels: Int?

    public init(format: AudioFormat, durationSeconds: Double, sampleRate: Int?, channels: Int?) {
        self.format = format
        self.durationSeconds = durationSeconds
        self.sampleRate = sampleRate
        self.channels = channels
    }
}

/// Why a recording's container could not be read.
public enum AudioContainerError: Error, Sendable, Equatable {
    /// Not WAV, MP3 or M4A (OGG, FLAC, text, an empty file, …).
    case unsupportedFormat
    /// A recognised container that cannot be read: truncated, missing a required part, or with impossible values.
    case corrupt(String)
}

/// Recognises a recording's container from its bytes and reads its duration from the headers, without decoding audio.
///
/// - WAV: the `fmt ` chunk and the size of the `data` chunk (frames for PCM; the `fact` sample count or the byte rate
///   otherwise). A `data` size of `0xFFFFFFFF` (written by streaming recorders) means "to the end of the file".
/// - MP3: an ID3v2 tag is skipped; the frame count of a Xing/Info or VBRI header is used when present, else every
///   MPEG audio frame header is read and the samples of the complete frames are summed. Trailing non-frame bytes
///   (ID3v1, APE tags) end the scan. Free-format bitrates and layers other than III are not accepted.
/// - M4A: an `ftyp` box with an MPEG-4 brand first; the top-level boxes are walked to `moov` (wherever it is, often
///   after `mdat`), whose `mvhd` gives timescale and duration; the first sound track's sample entry gives the sample
///   rate and channels. Raw ADTS `.aac` streams are not accepted.
public enum AudioContainer {
    /// The largest single read from the source.
    public static let readWindow = 64 * 1024

    /// `ftyp` brands (major or compatible) that identify an MPEG-4 file.
    static let mpeg4Brands: Set<String> = [
        "M4A ", "M4B ", "M4P ", "mp41", "mp42", "isom", "iso2", "iso3", "iso4", "iso5", "iso6", "3gp4", "3gp5",
        "3gp6", "3g2a", "MSNV", "dash", "f4a ",
    ]

    /// Identifies the container and reads its duration. Errors of `source` are rethrown as they are.
    public static func inspect(_ source: some AudioByteSource) throws -> AudioInfo {
        let reader = WindowedReader(source)
        let head = try reader.bytes(at: 0, count: 12)
        if head.count >= 12, head.ascii(0, 4) == "RIFF", head.ascii(8, 4) == "WAVE" {
            return try WAVReader.inspect(reader)
        }
        if head.count >= 8, head.ascii(4, 4) == "ftyp" {
            if let info = try MPEG4Reader.inspect(reader) { return info }
            throw AudioContainerError.unsupportedFormat
        }
        if head.count >= 3, head.ascii(0, 3) == "ID3" {
            return try MP3Reader.inspect(reader, hasID3: true)
        }
        if head.count >= 4, MPEGAudioFrameHeader(head[0], head[1], head[2], head[3]) != nil {
            return try MP3Reader.inspect(reader, hasID3: false)
        }
        throw AudioContainerError.unsupportedFormat
    }
}

// MARK: - Reading

/// Reads a source through one cached window, so headers read byte by byte cost one source read per window.
final class WindowedReader {
    private let source: any AudioByteSource
    let size: Int64
    private var windowStart: Int64 = 0
    private var window: [UInt8] = []

    init(_ source: some AudioByteSource) {
        self.source = source
        self.size = source.size
    }

    /// Up to `count` (≤ ``AudioContainer/readWindow``) bytes at `offset`; fewer only at the end of the source.
    func bytes(at offset: Int64, count: Int) throws -> [UInt8] {
        guard offset >= 0, offset < size, count > 0 else { return [] }
        let count = min(count, AudioContainer.readWindow)
        let windowEnd = windowStart + Int64(window.count)
        let cached = offset >= windowStart && offset < windowEnd && (offset + Int64(count) <= windowEnd || windowEnd == size)
        if !cached {
            window = try source.read(offset: offset, count: AudioContainer.readWindow)
            windowStart = offset
        }
        let start = Int(offset - windowStart)
        return Array(window[start..<min(window.count, start + count)])
    }

    /// Exactly `count` bytes at `offset`, or ``AudioContainerError/corrupt(_:)`` naming `what` was cut off.
    func require(at offset: Int64, count: Int, _ what: String) throws -> [UInt8] {
        let bytes = try bytes(at: offset, count: count)
        guard bytes.count == count else { throw AudioContainerError.corrupt("truncated \(what)") }
        return bytes
    }
}

extension [UInt8] {
    /// The bytes at `offset..<offset+count` as ASCII text (`?` for other bytes), or "" when out of range.
    func ascii(_ offset: Int, _ count: Int) -> String {
        guard offset >= 0, offset + count <= self.count else { return "" }
        return String(self[offset..<offset + count].map { $0 < 0x80 ? Character(UnicodeScalar($0)) : "?" })
    }

    func uint16LE(_ offset: Int) -> Int { Int(self[offset]) | Int(self[offset + 1]) << 8 }

    func uint32LE(_ offset: Int) -> Int64 {
        (0..<4).reduce(Int64(0)) { $0 | Int64(self[offset + $1]) << (8 * $1) }
    }

    func uint16BE(_ offset: Int) -> Int { Int(self[offset]) << 8 | Int(self[offset + 1]) }

    func uint32BE(_ offset: Int) -> Int64 {
        (0..<4).reduce(Int64(0)) { $0 << 8 | Int64(self[offset + $1]) }
    }

    /// A big-endian 64-bit value, or `nil` when it does not fit a signed 64-bit integer.
    func uint64BE(_ offset: Int) -> Int64? {
        let value = (0..<8).reduce(UInt64(0)) { $0 << 8 | UInt64(self[offset + $1]) }
        return value <= UInt64(Int64.max) ? Int64(value) : nil
    }
}

// MARK: - WAV

private enum WAVReader {
    static let pcm = 1
    static let extensible = 0xFFFE
    static let unknownSize: Int64 = 0xFFFF_FFFF

    struct Format {
        var formatTag: Int
        var channels: Int
        var sampleRate: Int
        var byteRate: Int
        var blockAlign: Int
    }

    static func inspect(_ reader: WindowedReader) throws -> AudioInfo {
        var format: Format?
        var dataSize: Int64?
        var sampleFrames: Int64?
        var offset: Int64 = 12
        while offset + 8 <= reader.size, format == nil || dataSize == nil {
            let header = try reader.require(at: offset, count: 8, "chunk header")
            let id = header.ascii(0, 4)
            var size = header.uint32LE(4)
            let body = offset + 8
            switch id {
            case "fmt ":
                guard size >= 16 else { throw AudioContainerError.corrupt("fmt chunk of \(size) bytes") }
                let fmt = try reader.require(at: body, count: Int(min(size, 40)), "fmt chunk")
                var tag = fmt.uint16LE(0)
                if tag == extensible, fmt.count >= 26 { tag = fmt.uint16LE(24) }
                format = Format(
                    formatTag: tag, channels: fmt.uint16LE(2), sampleRate: Int(fmt.uint32LE(4)), byteRate: Int(fmt.uint32LE(8)),
                    blockAlign: fmt.uint16LE(12))
            case "fact":
                if size >= 4 { sampleFrames = try reader.require(at: body, count: 4, "fact chunk").uint32LE(0) }
            case "data":
                if size == unknownSize { size = reader.size - body }
                guard size <= reader.size - body else {
                    throw AudioContainerError.corrupt("data chunk of \(size) bytes, \(reader.size - body) present")
                }
                dataSize = size
            default:
                break
            }
            offset = body + size + size % 2
        }
        guard let format else { throw AudioContainerError.corrupt("no fmt chunk") }
        guard let dataSize else { throw AudioContainerError.corrupt("no data chunk") }
        guard format.channels > 0, format.sampleRate > 0 else {
            throw AudioContainerError.corrupt("\(format.channels) channels at \(format.sampleRate) Hz")
        }
        let seconds: Double
        if format.formatTag == pcm {
            guard format.blockAlign > 0 else { throw AudioContainerError.corrupt("PCM block alignment 0") }
            seconds = Double(dataSize / Int64(format.blockAlign)) / Double(format.sampleRate)
        } else if let sampleFrames {
            seconds = Double(sampleFrames) / Double(format.sampleRate)
        } else {
            guard format.byteRate > 0 else { throw AudioContainerError.corrupt("byte rate 0") }
            seconds = Double(dataSize) / Double(format.byteRate)
        }
        return AudioInfo(format: .wav, durationSeconds: seconds, sampleRate: format.sampleRate, channels: format.channels)
    }
}

// MARK: - MP3

/// One MPEG audio Layer III frame header.
struct MPEGAudioFrameHeader: Equatable {
    enum Version: Equatable {
        case mpeg1, mpeg2, mpeg25
    }

    var version: Version
    /// Bits per second.
    var bitrate: Int
    var sampleRate: Int
    var padding: Bool
    /// A 16-bit CRC follows the header.
    var protected: Bool
    var channels: Int

    private static let mpeg1Bitrates = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
    private static let mpeg2Bitrates = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
    private static let mpeg1SampleRates = [44_100, 48_000, 32_000]

    /// Parses four header bytes; `nil` unless they are a valid Layer III header with a table bitrate.
    init?(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8) {
        guard b0 == 0xFF, b1 & 0xE0 == 0xE0, (b1 >> 1) & 0x03 == 0x01 else { return nil }
        switch (b1 >> 3) & 0x03 {
        case 0b11: version = .mpeg1
        case 0b10: version = .mpeg2
        case 0b00: version = .mpeg25
        default: return nil
        }
        let bitrateIndex = Int(b2 >> 4)
        let sampleRateIndex = Int((b2 >> 2) & 0x03)
        guard bitrateIndex != 0, bitrateIndex != 15, sampleRateIndex != 3 else { return nil }
        let table = version == .mpeg1 ? Self.mpeg1Bitrates : Self.mpeg2Bitrates
        bitrate = table[bitrateIndex] * 1000
        let base = Self.mpeg1SampleRates[sampleRateIndex]
        sampleRate =
            switch version {
            case .mpeg1: base
            case .mpeg2: base / 2
            case .mpeg25: base / 4
            }
        padding = (b2 >> 1) & 0x01 == 1
        protected = b1 & 0x01 == 0
        channels = b3 >> 6 == 0b11 ? 1 : 2
    }

    init?(_ bytes: [UInt8]) {
        guard bytes.count >= 4 else { return nil }
        self.init(bytes[0], bytes[1], bytes[2], bytes[3])
    }

    /// PCM samples per channel in one frame.
    var samplesPerFrame: Int { version == .mpeg1 ? 1152 : 576 }

    /// The frame's length in bytes, header included.
    var frameLength: Int { (samplesPerFrame / 8) * bitrate / sampleRate + (padding ? 1 : 0) }

    /// The size of the side information that follows the header (and its CRC).
    var sideInformationSize: Int {
        switch (version, channels) {
        case (.mpeg1, 1): 17
        case (.mpeg1, _): 32
        case (_, 1): 9
        case (_, _): 17
        }
    }
}

private enum MP3Reader {
    /// How far past the ID3 tag the first frame is looked for (encoders may pad with zeros).
    static let syncSearchLimit: Int64 = 64 * 1024

    static func inspect(_ reader: WindowedReader, hasID3: Bool) throws -> AudioInfo {
        var offset: Int64 = 0
        if hasID3 { offset = try skipID3v2Tags(reader) }
        guard let (start, first) = try firstFrame(reader, from: offset) else {
            throw AudioContainerError.corrupt("no MPEG audio frame")
        }
        let info = { (frames: Int64) in
            AudioInfo(
                format: .mp3, durationSeconds: Double(frames * Int64(first.samplesPerFrame)) / Double(first.sampleRate),
                sampleRate: first.sampleRate, channels: first.channels)
        }
        if let frames = try summaryFrameCount(reader, frameAt: start, header: first) { return info(frames) }
        var frames: Int64 = 0
        var position = start
        while let header = try frameHeader(reader, at: position), header.sampleRate == first.sampleRate,
            position + Int64(header.frameLength) <= reader.size
        {
            frames += 1
            position += Int64(header.frameLength)
        }
        guard frames > 0 else { throw AudioContainerError.corrupt("truncated MPEG audio frame") }
        return info(frames)
    }

    static func frameHeader(_ reader: WindowedReader, at offset: Int64) throws -> MPEGAudioFrameHeader? {
        MPEGAudioFrameHeader(try reader.bytes(at: offset, count: 4))
    }

    /// The offset after the ID3v2 tags at the start (syncsafe sizes, optional footer).
    static func skipID3v2Tags(_ reader: WindowedReader) throws -> Int64 {
        var offset: Int64 = 0
        while try reader.bytes(at: offset, count: 3).ascii(0, 3) == "ID3" {
            let header = try reader.require(at: offset, count: 10, "ID3v2 header")
            guard header[6...9].allSatisfy({ $0 < 0x80 }) else { throw AudioContainerError.corrupt("ID3v2 size not syncsafe") }
            let size = header[6...9].reduce(Int64(0)) { $0 << 7 | Int64($1) }
            let footer: Int64 = header[5] & 0x10 != 0 ? 10 : 0
            offset += 10 + size + footer
            guard offset <= reader.size else { throw AudioContainerError.corrupt("truncated ID3v2 tag") }
        }
        return offset
    }

    /// The first frame at or shortly after `offset` whose successor (if the file goes on) is also a frame.
    static func firstFrame(_ reader: WindowedReader, from offset: Int64) throws -> (Int64, MPEGAudioFrameHeader)? {
        var position = offset
        let limit = min(reader.size - 4, offset + syncSearchLimit)
        while position <= limit {
            if let header = try frameHeader(reader, at: position) {
                let next = position + Int64(header.frameLength)
                if next + 4 > reader.size, next <= reader.size { return (position, header) }
                if let following = try frameHeader(reader, at: next), following.sampleRate == header.sampleRate {
                    return (position, header)
                }
            }
            position += 1
        }
        return nil
    }

    /// The audio frame count of a Xing/Info or VBRI header in the frame at `start` (which then holds no audio).
    static func summaryFrameCount(
        _ reader: WindowedReader, frameAt start: Int64, header: MPEGAudioFrameHeader
    ) throws
        -> Int64?
    {
        let frame = try reader.bytes(at: start, count: header.frameLength)
        let xing = 4 + (header.protected ? 2 : 0) + header.sideInformationSize
        if ["Xing", "Info"].contains(frame.ascii(xing, 4)), frame.count >= xing + 12 {
            let flags = frame.uint32BE(xing + 4)
            if flags & 0x1 != 0 { return frame.uint32BE(xing + 8) }
        }
        let vbri = 4 + 32
        if frame.ascii(vbri, 4) == "VBRI", frame.count >= vbri + 18 {
            return frame.uint32BE(vbri + 14)
        }
        return nil
    }
}

// MARK: - MPEG-4

private enum MPEG4Reader {
    struct Box {
        var type: String
        /// Where the box's content starts (after size, type and any 64-bit size).
        var contentStart: Int64
        var end: Int64
    }

    /// The box starting at `offset` within a parent ending at `limit`, or `nil` if fewer than 8 bytes remain.
    static func box(_ reader: WindowedReader, at offset: Int64, limit: Int64) throws -> Box? {
        guard offset + 8 <= limit else { return nil }
        let header = try reader.require(at: offset, count: 8, "box header")
        let type = header.ascii(4, 4)
        var size = header.uint32BE(0)
        var contentStart = offset + 8
        if size == 1 {
            guard let large = try reader.require(at: offset + 8, count: 8, "\(type) box size").uint64BE(0) else {
                throw AudioContainerError.corrupt("\(type) box size out of range")
            }
            size = large
            contentStart += 8
        } else if size == 0 {
            size = limit - offset
        }
        guard size >= contentStart - offset else { throw AudioContainerError.corrupt("\(type) box of \(size) bytes") }
        // `size` comes from the file (up to Int64.max with a 64-bit size): compared with what is left, never added.
        guard size <= limit - offset else { throw AudioContainerError.corrupt("truncated \(type) box") }
        return Box(type: type, contentStart: contentStart, end: offset + size)
    }

    /// The child boxes of `range`, in order.
    static func children(_ reader: WindowedReader, from start: Int64, to end: Int64) throws -> [Box] {
        var boxes: [Box] = []
        var offset = start
        while let child = try box(reader, at: offset, limit: end) {
            boxes.append(child)
            offset = child.end
        }
        return boxes
    }

    /// `nil` when the `ftyp` box names no MPEG-4 brand.
    static func inspect(_ reader: WindowedReader) throws -> AudioInfo? {
        guard let ftyp = try box(reader, at: 0, limit: reader.size), ftyp.end - ftyp.contentStart >= 8 else {
            throw AudioContainerError.corrupt("ftyp box")
        }
        let brandBytes = try reader.require(at: ftyp.contentStart, count: Int(min(ftyp.end - ftyp.contentStart, 256)), "ftyp box")
        let brands = [brandBytes.ascii(0, 4)] + stride(from: 8, to: brandBytes.count - 3, by: 4).map { brandBytes.ascii($0, 4) }
        guard brands.contains(where: AudioContainer.mpeg4Brands.contains) else { return nil }

        var offset = ftyp.end
        while let top = try box(reader, at: offset, limit: reader.size) {
            if top.type == "moov" { return try movie(reader, top) }
            offset = top.end
        }
        throw AudioContainerError.corrupt("no moov box")
    }

    static func movie(_ reader: WindowedReader, _ moov: Box) throws -> AudioInfo {
        let boxes = try children(reader, from: moov.contentStart, to: moov.end)
        guard let mvhd = boxes.first(where: { $0.type == "mvhd" }) else { throw AudioContainerError.corrupt("no mvhd box") }
        let version = try reader.require(at: mvhd.contentStart, count: 1, "mvhd box")[0]
        let (timescale, duration): (Int64, Int64)
        switch version {
        case 0:
            let fields = try reader.require(at: mvhd.contentStart + 12, count: 8, "mvhd box")
            (timescale, duration) = (fields.uint32BE(0), fields.uint32BE(4))
            guard duration != 0xFFFF_FFFF else { throw AudioContainerError.corrupt("mvhd duration unknown") }
        case 1:
            let fields = try reader.require(at: mvhd.contentStart + 20, count: 12, "mvhd box")
            guard let value = fields.uint64BE(4) else { throw AudioContainerError.corrupt("mvhd duration unknown") }
            (timescale, duration) = (fields.uint32BE(0), value)
        default:
            throw AudioContainerError.corrupt("mvhd version \(version)")
        }
        guard timescale > 0 else { throw AudioContainerError.corrupt("mvhd timescale 0") }
        var sampleRate: Int?
        var channels: Int?
        for trak in boxes where trak.type == "trak" {
            if let entry = try soundSampleEntry(reader, trak) {
                (sampleRate, channels) = entry
                break
            }
        }
        return AudioInfo(
            format: .m4a, durationSeconds: Double(duration) / Double(timescale), sampleRate: sampleRate, channels: channels)
    }

    /// Sample rate and channels of the first sample entry of a sound track (`hdlr` `soun`), else `nil`.
    static func soundSampleEntry(_ reader: WindowedReader, _ trak: Box) throws -> (Int, Int)? {
        guard let mdia = try children(reader, from: trak.contentStart, to: trak.end).first(where: { $0.type == "mdia" })
        else { return nil }
        let mdiaChildren = try children(reader, from: mdia.contentStart, to: mdia.end)
        guard let hdlr = mdiaChildren.first(where: { $0.type == "hdlr" }),
            try reader.bytes(at: hdlr.contentStart + 8, count: 4).ascii(0, 4) == "soun",
            let minf = mdiaChildren.first(where: { $0.type == "minf" }),
            let stbl = try children(reader, from: minf.contentStart, to: minf.end).first(where: { $0.type == "stbl" }),
            let stsd = try children(reader, from: stbl.contentStart, to: stbl.end).first(where: { $0.type == "stsd" }),
            let entry = try box(reader, at: stsd.contentStart + 8, limit: stsd.end)
        else { return nil }
        // AudioSampleEntry: 6 reserved + 2 data reference index, then a version (QuickTime; 0 in MPEG-4) and 6 more
        // reserved bytes, channelcount, samplesize, 2 pre-defined + 2 reserved, and the sample rate in 16.16 fixed
        // point. Version 2 QuickTime entries keep the real values elsewhere: those are left unreported.
        let fields = try reader.bytes(at: entry.contentStart + 8, count: 20)
        guard fields.count == 20, fields.uint16BE(0) < 2 else { return nil }
        return (Int(fields.uint32BE(16) >> 16), fields.uint16BE(8))
    }
}
