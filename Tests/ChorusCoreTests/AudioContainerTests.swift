import Foundation
import Testing

@testable import ChorusCore

// Every file here is built byte by byte, so the expected durations follow from the headers written.

private func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
private func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(value >> (8 * $0) & 0xFF) } }
private func be16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
private func be32(_ value: Int) -> [UInt8] { (0..<4).reversed().map { UInt8(value >> (8 * $0) & 0xFF) } }
private func be64(_ value: Int) -> [UInt8] { (0..<8).reversed().map { UInt8(value >> (8 * $0) & 0xFF) } }
private func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }

private func chunk(_ id: String, _ body: [UInt8]) -> [UInt8] {
    ascii(id) + le32(body.count) + body + (body.count % 2 == 1 ? [0] : [])
}

private func fmtChunk(tag: Int = 1, channels: Int, sampleRate: Int, bitsPerSample: Int = 16, byteRate: Int? = nil) -> [UInt8] {
    let blockAlign = channels * bitsPerSample / 8
    return chunk(
        "fmt ",
        le16(tag) + le16(channels) + le32(sampleRate) + le32(byteRate ?? sampleRate * blockAlign) + le16(blockAlign)
            + le16(bitsPerSample))
}

private func wav(_ chunks: [UInt8]...) -> [UInt8] {
    let body = ascii("WAVE") + chunks.flatMap { $0 }
    return ascii("RIFF") + le32(body.count) + body
}

/// A PCM16 WAV of `frames` sample frames.
private func pcmWAV(frames: Int, channels: Int = 1, sampleRate: Int = 16_000) -> [UInt8] {
    wav(fmtChunk(channels: channels, sampleRate: sampleRate), chunk("data", [UInt8](repeating: 0, count: frames * channels * 2)))
}

/// MPEG audio Layer III header bytes (no CRC).
private func mp3Header(version: Int, bitrateIndex: Int, sampleRateIndex: Int, padding: Bool, mono: Bool) -> [UInt8] {
    [0xFF, 0xE0 | UInt8(version << 3) | 0x02 | 0x01, UInt8(bitrateIndex << 4 | sampleRateIndex << 2 | (padding ? 2 : 0)), mono ? 0xC0 : 0x00]
}

private struct MP3Stream {
    /// 0b11 MPEG-1, 0b10 MPEG-2, 0b00 MPEG-2.5.
    var version: Int
    var bitrateIndex: Int
    var sampleRateIndex: Int
    var bitrate: Int
    var sampleRate: Int
    var mono: Bool

    static let mpeg1 = MP3Stream(version: 0b11, bitrateIndex: 9, sampleRateIndex: 0, bitrate: 128_000, sampleRate: 44_100, mono: false)
    static let mpeg2 = MP3Stream(version: 0b10, bitrateIndex: 8, sampleRateIndex: 0, bitrate: 64_000, sampleRate: 22_050, mono: true)
    static let mpeg25 = MP3Stream(version: 0b00, bitrateIndex: 4, sampleRateIndex: 2, bitrate: 32_000, sampleRate: 8_000, mono: true)

    var samplesPerFrame: Int { version == 0b11 ? 1152 : 576 }

    /// A frame whose first bytes after the header are `payload`; padded as the encoder's bit reservoir would alternate.
    func frame(padding: Bool, payload: [UInt8] = []) -> [UInt8] {
        let length = samplesPerFrame / 8 * bitrate / sampleRate + (padding ? 1 : 0)
        let header = mp3Header(version: version, bitrateIndex: bitrateIndex, sampleRateIndex: sampleRateIndex, padding: padding, mono: mono)
        return header + payload + [UInt8](repeating: 0, count: length - 4 - payload.count)
    }

    /// `count` frames; every third one padded (so lengths vary as they do at 44.1 kHz).
    func frames(_ count: Int) -> [UInt8] { (0..<count).flatMap { frame(padding: $0 % 3 == 2) } }

    func seconds(frames: Int) -> Double { Double(frames * samplesPerFrame) / Double(sampleRate) }
}

/// An ID3v2.4 tag whose size needs more than one syncsafe byte.
private func id3Tag(bodySize: Int) -> [UInt8] {
    let size = [(bodySize >> 21) & 0x7F, (bodySize >> 14) & 0x7F, (bodySize >> 7) & 0x7F, bodySize & 0x7F].map { UInt8($0) }
    return ascii("ID3") + [4, 0, 0] + size + [UInt8](repeating: 0, count: bodySize)
}

private func box(_ type: String, _ content: [UInt8]) -> [UInt8] { be32(8 + content.count) + ascii(type) + content }

private func ftyp(_ major: String = "M4A ", compatible: [String] = ["M4A ", "mp42", "isom"]) -> [UInt8] {
    box("ftyp", ascii(major) + be32(0) + compatible.flatMap(ascii))
}

private func mvhd(version: Int = 0, timescale: Int, duration: Int) -> [UInt8] {
    let times = version == 0 ? be32(0) + be32(0) + be32(timescale) + be32(duration) : be64(0) + be64(0) + be32(timescale) + be64(duration)
    return box("mvhd", [UInt8(version), 0, 0, 0] + times + [UInt8](repeating: 0, count: 80))
}

private func soundTrack(sampleRate: Int, channels: Int) -> [UInt8] {
    let mp4a = box(
        "mp4a",
        [UInt8](repeating: 0, count: 6) + be16(1) + [UInt8](repeating: 0, count: 8) + be16(channels) + be16(16) + be32(0) + be32(sampleRate << 16))
    let stsd = box("stsd", be32(0) + be32(1) + mp4a)
    let hdlr = box("hdlr", be32(0) + be32(0) + ascii("soun") + [UInt8](repeating: 0, count: 13))
    return box(
        "trak",
        box("tkhd", [UInt8](repeating: 0, count: 84))
            + box("mdia", box("mdhd", [UInt8](repeating: 0, count: 24)) + hdlr + box("minf", box("stbl", stsd))))
}

private func moov(version: Int = 0, timescale: Int = 44_100, duration: Int, sampleRate: Int = 44_100, channels: Int = 1) -> [UInt8] {
    box("moov", mvhd(version: version, timescale: timescale, duration: duration) + soundTrack(sampleRate: sampleRate, channels: channels))
}

/// A source that is `head`, then `fill` zero bytes, then `tail`, without holding the zeros; it records every read.
private final class SyntheticSource: AudioByteSource {
    let head: [UInt8]
    let fill: Int64
    let tail: [UInt8]
    private(set) var reads: [(offset: Int64, count: Int)] = []

    init(head: [UInt8], fill: Int64, tail: [UInt8] = []) {
        self.head = head
        self.fill = fill
        self.tail = tail
    }

    var size: Int64 { Int64(head.count) + fill + Int64(tail.count) }
    var bytesRead: Int { reads.reduce(0) { $0 + $1.count } }

    func read(offset: Int64, count: Int) throws -> [UInt8] {
        reads.append((offset, count))
        let end = min(size, offset + Int64(count))
        guard offset < end else { return [] }
        let tailStart = Int64(head.count) + fill
        return (offset..<end).map { position in
            if position < Int64(head.count) { return head[Int(position)] }
            if position >= tailStart { return tail[Int(position - tailStart)] }
            return 0
        }
    }
}

@Suite("Audio containers: WAV")
struct AudioContainerWAVTests {
    @Test("PCM16 mono: frames from the data size and block alignment")
    func pcmMono() throws {
        let info = try AudioContainer.inspect(pcmWAV(frames: 16_000 * 3 + 8_000))
        #expect(info == AudioInfo(format: .wav, durationSeconds: 3.5, sampleRate: 16_000, channels: 1))
    }

    @Test("PCM16 stereo at 44.1 kHz, with a LIST chunk of odd size before the data")
    func pcmStereoWithExtraChunks() throws {
        let bytes = wav(
            fmtChunk(channels: 2, sampleRate: 44_100), chunk("LIST", ascii("INFOICMT") + le32(5) + ascii("hello")),
            chunk("data", [UInt8](repeating: 0, count: 44_100 * 4 * 2)))
        let info = try AudioContainer.inspect(Data(bytes))
        #expect(info.durationSeconds == 2)
        #expect(info.channels == 2)
        #expect(info.sampleRate == 44_100)
    }

    @Test("non-PCM: the fact chunk's sample count, else the byte rate")
    func nonPCM() throws {
        // μ-law (tag 7), 8 kHz: 8,000 bytes a second.
        let mulaw = wav(fmtChunk(tag: 7, channels: 1, sampleRate: 8_000, bitsPerSample: 8), chunk("data", [UInt8](repeating: 0xFF, count: 12_000)))
        #expect(try AudioContainer.inspect(mulaw).durationSeconds == 1.5)
        // IMA ADPCM-like: the byte rate is approximate, the fact chunk exact.
        let adpcm = wav(
            fmtChunk(tag: 0x11, channels: 1, sampleRate: 16_000, bitsPerSample: 4, byteRate: 8_110), chunk("fact", le32(40_000)),
            chunk("data", [UInt8](repeating: 0, count: 20_280)))
        #expect(try AudioContainer.inspect(adpcm).durationSeconds == 2.5)
    }

    @Test("WAVE_FORMAT_EXTENSIBLE with a PCM sub-format counts frames")
    func extensible() throws {
        let fmt = chunk(
            "fmt ",
            le16(0xFFFE) + le16(1) + le32(48_000) + le32(96_000) + le16(2) + le16(16) + le16(22) + le16(16) + le32(4) + le16(1)
                + [UInt8](repeating: 0, count: 14))
        let info = try AudioContainer.inspect(wav(fmt, chunk("data", [UInt8](repeating: 0, count: 48_000))))
        #expect(info.durationSeconds == 0.5)
    }

    @Test("a streaming writer's unknown data size (0xFFFFFFFF) runs to the end of the file")
    func unknownDataSize() throws {
        let bytes =
            ascii("RIFF") + le32(-1) + ascii("WAVE") + fmtChunk(channels: 1, sampleRate: 8_000) + ascii("data") + le32(-1)
            + [UInt8](repeating: 0, count: 8_000 * 2 * 4)
        #expect(try AudioContainer.inspect(bytes).durationSeconds == 4)
    }

    @Test("truncated or incomplete WAV files are corrupt")
    func corrupt() throws {
        let full = pcmWAV(frames: 16_000)
        #expect(throws: AudioContainerError.self) { try AudioContainer.inspect(Array(full.prefix(full.count - 100))) }
        #expect(throws: AudioContainerError.corrupt("no fmt chunk")) { try AudioContainer.inspect(wav(chunk("data", [0, 0]))) }
        #expect(throws: AudioContainerError.corrupt("no data chunk")) {
            try AudioContainer.inspect(wav(fmtChunk(channels: 1, sampleRate: 8_000)))
        }
        #expect(throws: AudioContainerError.self) {
            try AudioContainer.inspect(wav(fmtChunk(channels: 0, sampleRate: 8_000), chunk("data", [0, 0])))
        }
        #expect(throws: AudioContainerError.self) { try AudioContainer.inspect(wav(chunk("fmt ", [1, 0, 1, 0]), chunk("data", [0, 0]))) }
    }

    @Test("a 50 MB WAV is read through a few small reads")
    func boundedReads() throws {
        let header = ascii("RIFF") + le32(50_000_036) + ascii("WAVE") + fmtChunk(channels: 1, sampleRate: 48_000) + ascii("data") + le32(50_000_000)
        let source = SyntheticSource(head: header, fill: 50_000_000)
        let info = try AudioContainer.inspect(source)
        #expect(info.durationSeconds == 25_000_000 / 48_000.0)
        #expect(source.reads.allSatisfy { $0.count <= AudioContainer.readWindow })
        #expect(source.reads.count <= 2)
    }
}

@Suite("Audio containers: MP3")
struct AudioContainerMP3Tests {
    @Test("MPEG-1 Layer III frames are counted, padding honoured", arguments: [1, 2, 38, 1_000])
    func mpeg1Scan(frames: Int) throws {
        let stream = MP3Stream.mpeg1
        let info = try AudioContainer.inspect(stream.frames(frames))
        #expect(info == AudioInfo(format: .mp3, durationSeconds: stream.seconds(frames: frames), sampleRate: 44_100, channels: 2))
    }

    @Test("MPEG-2 and MPEG-2.5 Layer III: 576 samples a frame, their own bitrate and sample-rate tables")
    func mpeg2Scan() throws {
        for stream in [MP3Stream.mpeg2, .mpeg25] {
            let info = try AudioContainer.inspect(stream.frames(250))
            #expect(info.durationSeconds == stream.seconds(frames: 250))
            #expect(info.sampleRate == stream.sampleRate)
            #expect(info.channels == 1)
        }
        #expect(MP3Stream.mpeg25.seconds(frames: 250) == 18)
    }

    @Test("an ID3v2 tag (syncsafe size, zero padding after it) and an ID3v1 trailer are skipped")
    func id3Tags() throws {
        let stream = MP3Stream.mpeg1
        let bytes = id3Tag(bodySize: 3_000) + [0, 0, 0, 0] + stream.frames(100) + ascii("TAG") + [UInt8](repeating: 0x20, count: 125)
        #expect(try AudioContainer.inspect(bytes).durationSeconds == stream.seconds(frames: 100))
    }

    @Test("a Xing header's frame count gives the duration without a scan")
    func xing() throws {
        let stream = MP3Stream.mpeg1
        // Stereo MPEG-1: 32 bytes of side information after the header.
        let payload = [UInt8](repeating: 0, count: 32) + ascii("Xing") + be32(0x1) + be32(5_000)
        let bytes = id3Tag(bodySize: 200) + stream.frame(padding: false, payload: payload) + stream.frames(10)
        let source = SyntheticSource(head: bytes, fill: 0)
        let info = try AudioContainer.inspect(source)
        #expect(info.durationSeconds == stream.seconds(frames: 5_000))
        #expect(source.reads.count == 1)
    }

    @Test("an Info header (CBR) in a mono MPEG-2 stream, and a VBRI header")
    func infoAndVBRI() throws {
        let mono = MP3Stream.mpeg2
        let info = mono.frame(padding: false, payload: [UInt8](repeating: 0, count: 9) + ascii("Info") + be32(0xF) + be32(777) + be32(1))
        #expect(try AudioContainer.inspect(info + mono.frames(3)).durationSeconds == mono.seconds(frames: 777))

        let stereo = MP3Stream.mpeg1
        let vbri = stereo.frame(
            padding: false, payload: [UInt8](repeating: 0, count: 32) + ascii("VBRI") + be16(1) + be16(0) + be16(75) + be32(123_456) + be32(321))
        #expect(try AudioContainer.inspect(vbri + stereo.frames(3)).durationSeconds == stereo.seconds(frames: 321))
    }

    @Test("a Xing header without the frame-count flag falls back to the scan")
    func xingWithoutFrames() throws {
        let stream = MP3Stream.mpeg1
        let first = stream.frame(padding: false, payload: [UInt8](repeating: 0, count: 32) + ascii("Xing") + be32(0x2) + be32(9_999))
        #expect(try AudioContainer.inspect(first + stream.frames(9)).durationSeconds == stream.seconds(frames: 10))
    }

    @Test("a cut-off last frame is not counted; a tag with no frames after it is corrupt")
    func truncation() throws {
        let stream = MP3Stream.mpeg1
        let bytes = stream.frames(20)
        #expect(try AudioContainer.inspect(Array(bytes.dropLast(100))).durationSeconds == stream.seconds(frames: 19))
        #expect(throws: AudioContainerError.corrupt("no MPEG audio frame")) { try AudioContainer.inspect(id3Tag(bodySize: 500)) }
        #expect(throws: AudioContainerError.corrupt("truncated ID3v2 tag")) { try AudioContainer.inspect(Array(id3Tag(bodySize: 500).prefix(300))) }
        #expect(throws: AudioContainerError.corrupt("no MPEG audio frame")) {
            try AudioContainer.inspect(Array(stream.frame(padding: false).prefix(200)))
        }
    }

    @Test("a 50 MB constant-bitrate MP3 is scanned in windows of at most 64 KiB")
    func boundedScan() throws {
        let stream = MP3Stream.mpeg1
        let frame = stream.frame(padding: false)
        let count = 50_000_000 / frame.count
        let source = FrameRepeatingSource(frame: frame, count: count)
        let info = try AudioContainer.inspect(source)
        #expect(info.durationSeconds == stream.seconds(frames: count))
        #expect(source.largestRead <= AudioContainer.readWindow)
    }
}

/// `count` copies of one frame, produced on demand from a buffer one read window long.
private final class FrameRepeatingSource: AudioByteSource {
    let frameLength: Int
    let count: Int
    private let pattern: [UInt8]
    private(set) var largestRead = 0

    init(frame: [UInt8], count: Int) {
        self.frameLength = frame.count
        self.count = count
        self.pattern = Array([[UInt8]](repeating: frame, count: AudioContainer.readWindow / frame.count + 2).joined())
    }

    var size: Int64 { Int64(frameLength * count) }

    func read(offset: Int64, count: Int) throws -> [UInt8] {
        largestRead = max(largestRead, count)
        let available = Int(min(Int64(min(count, AudioContainer.readWindow)), max(0, size - offset)))
        let start = Int(offset % Int64(frameLength))
        return Array(pattern[start..<start + available])
    }
}

@Suite("Audio containers: M4A")
struct AudioContainerM4ATests {
    @Test("moov before mdat: mvhd duration over timescale, sample rate and channels from the sound track")
    func moovFirst() throws {
        let bytes =
            ftyp() + moov(timescale: 44_100, duration: 44_100 * 25 / 2, sampleRate: 44_100, channels: 1)
            + box("mdat", [UInt8](repeating: 7, count: 5_000))
        let info = try AudioContainer.inspect(bytes)
        #expect(info == AudioInfo(format: .m4a, durationSeconds: 12.5, sampleRate: 44_100, channels: 1))
    }

    @Test("moov after mdat (as iOS writes it), with free boxes, mvhd version 1")
    func moovLast() throws {
        let bytes =
            ftyp("mp42", compatible: ["isom"]) + box("free", [0, 0]) + box("mdat", [UInt8](repeating: 1, count: 10_000))
            + moov(version: 1, timescale: 1_000, duration: 95_250, sampleRate: 48_000, channels: 2)
        let info = try AudioContainer.inspect(Data(bytes))
        #expect(info == AudioInfo(format: .m4a, durationSeconds: 95.25, sampleRate: 48_000, channels: 2))
    }

    @Test("a 64-bit mdat size before a moov at the end of a 50 MB file: a few small reads")
    func largeMdat() throws {
        let mdatSize = 50_000_000
        let head = ftyp() + be32(1) + ascii("mdat") + be64(mdatSize)
        let tail = moov(timescale: 600, duration: 600 * 170)
        let source = SyntheticSource(head: head, fill: Int64(mdatSize - 16), tail: tail)
        let info = try AudioContainer.inspect(source)
        #expect(info.durationSeconds == 170)
        #expect(source.bytesRead <= 3 * AudioContainer.readWindow)
    }

    @Test("a track that is not sound leaves sample rate and channels unknown")
    func noSoundTrack() throws {
        let bytes =
            ftyp() + box("moov", mvhd(timescale: 1_000, duration: 2_000) + box("trak", box("mdia", box("hdlr", be32(0) + be32(0) + ascii("vide")))))
        let info = try AudioContainer.inspect(bytes)
        #expect(info == AudioInfo(format: .m4a, durationSeconds: 2, sampleRate: nil, channels: nil))
    }

    @Test("missing or cut-off moov, missing mvhd, zero timescale are corrupt")
    func corrupt() throws {
        #expect(throws: AudioContainerError.corrupt("no moov box")) { try AudioContainer.inspect(ftyp() + box("mdat", [1, 2, 3])) }
        let full = ftyp() + box("mdat", [1, 2, 3]) + moov(duration: 1_000)
        #expect(throws: AudioContainerError.corrupt("truncated moov box")) { try AudioContainer.inspect(Array(full.dropLast(10))) }
        #expect(throws: AudioContainerError.corrupt("no mvhd box")) { try AudioContainer.inspect(ftyp() + box("moov", box("udta", []))) }
        #expect(throws: AudioContainerError.corrupt("mvhd timescale 0")) {
            try AudioContainer.inspect(ftyp() + box("moov", mvhd(timescale: 0, duration: 5)))
        }
    }

    @Test("an ftyp without an MPEG-4 brand (QuickTime, HEIF) is not M4A")
    func foreignBrands() throws {
        #expect(throws: AudioContainerError.unsupportedFormat) {
            try AudioContainer.inspect(ftyp("qt  ", compatible: ["qt  "]) + moov(duration: 1_000))
        }
        #expect(throws: AudioContainerError.unsupportedFormat) {
            try AudioContainer.inspect(ftyp("heic", compatible: ["mif1", "heic"]) + box("meta", []))
        }
    }
}

@Suite("Audio containers: formats")
struct AudioContainerFormatTests {
    @Test("OGG, FLAC, WebM, ADTS AAC, text, random bytes and empty input are unsupported")
    func unsupported() throws {
        let inputs: [[UInt8]] = [
            [], ascii("OggS") + [UInt8](repeating: 0, count: 60), ascii("fLaC") + [UInt8](repeating: 0, count: 60),
            [0x1A, 0x45, 0xDF, 0xA3, 0, 0, 0, 0], [0xFF, 0xF1, 0x50, 0x80, 0x02, 0x1F, 0xFC],
            ascii("Hello, this is not audio at all."), (0..<512).map { UInt8(($0 * 37 + 11) % 251) },
            ascii("RIFF") + le32(4) + ascii("AVI "),
        ]
        for input in inputs {
            #expect(throws: AudioContainerError.unsupportedFormat) { try AudioContainer.inspect(input) }
        }
    }

    @Test("MIME types and extensions")
    func mimeTypes() {
        #expect(AudioFormat.wav.mimeType == "audio/wav")
        #expect(AudioFormat.mp3.mimeType == "audio/mpeg")
        #expect(AudioFormat.m4a.mimeType == "audio/mp4")
        #expect(AudioFormat.allCases.map(\.fileExtension) == ["wav", "mp3", "m4a"])
    }

    @Test("a Data slice with a non-zero start index reads from its own start")
    func dataSlice() throws {
        let data = Data([1, 2, 3] + pcmWAV(frames: 8_000, sampleRate: 8_000)).dropFirst(3)
        #expect(try AudioContainer.inspect(data).durationSeconds == 1)
        #expect(try data.read(offset: 0, count: 4) == ascii("RIFF"))
        #expect(try data.read(offset: data.size, count: 4) == [])
    }
}
