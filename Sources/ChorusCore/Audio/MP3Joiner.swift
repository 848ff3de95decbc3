import Foundation

/// The audio frames of one MP3 file: what is left when its tags and its Xing/Info/VBRI summary frame are removed.
public struct MP3Frames: Sendable, Equatable {
    /// Whole MPEG audio frames, back to back.
    public var bytes: Data
    public var frameCount: Int
    public var sampleRate: Int
    public var channels: Int
    public var samplesPerFrame: Int

    /// Exact duration: frames × samples per frame ÷ sample rate.
    public var durationSeconds: Double { Double(frameCount * samplesPerFrame) / Double(sampleRate) }
}

/// Joins MP3 files made separately (text-to-speech of a long text, split for the provider's limit) into one seamless
/// file: tags (ID3v2 at the start; ID3v1, APE and anything else after the last frame) and each part's Xing/Info/VBRI
/// summary frame are dropped — a summary frame in the middle would make players think the file ends with the first
/// part — and the audio frames are concatenated. The result is one stream of frames whose duration is the sum of the
/// parts' durations. Parts must share sample rate and channel count (one voice, one model, one format).
public enum MP3Joiner {
    /// The frames of one MP3. Throws ``AudioContainerError`` when it is not an MP3 or a frame is cut off.
    public static func frames(of data: Data) throws -> MP3Frames {
        let bytes = [UInt8](data)
        var offset = 0
        while bytes.count >= offset + 10, bytes[offset] == 0x49, bytes[offset + 1] == 0x44, bytes[offset + 2] == 0x33 {
            let size = bytes[(offset + 6)...(offset + 9)]
            guard size.allSatisfy({ $0 < 0x80 }) else { throw AudioContainerError.corrupt("ID3v2 size not syncsafe") }
            let length = size.reduce(0) { $0 << 7 | Int($1) }
            offset += 10 + length + (bytes[offset + 5] & 0x10 != 0 ? 10 : 0)
        }
        // The first frame: a valid header whose successor (if any) is a frame of the same sample rate.
        var start = offset
        var first: MPEGAudioFrameHeader?
        while start + 4 <= bytes.count, start <= offset + 64 * 1024 {
            if let header = MPEGAudioFrameHeader(bytes[start], bytes[start + 1], bytes[start + 2], bytes[start + 3]) {
                let next = start + header.frameLength
                if next + 4 > bytes.count && next <= bytes.count { first = header }
                if next + 4 <= bytes.count, let following = MPEGAudioFrameHeader(bytes[next], bytes[next + 1], bytes[next + 2], bytes[next + 3]),
                    following.sampleRate == header.sampleRate
                {
                    first = header
                }
                if first != nil { break }
            }
            start += 1
        }
        guard let first else { throw AudioContainerError.unsupportedFormat }
        var output = Data()
        output.reserveCapacity(bytes.count - start)
        var position = start
        var frames = 0
        while position + 4 <= bytes.count,
            let header = MPEGAudioFrameHeader(bytes[position], bytes[position + 1], bytes[position + 2], bytes[position + 3]),
            header.sampleRate == first.sampleRate
        {
            let end = position + header.frameLength
            guard end <= bytes.count else { throw AudioContainerError.corrupt("truncated MPEG audio frame") }
            if !(position == start && isSummaryFrame(bytes, at: position, header: header)) {
                output.append(contentsOf: bytes[position..<end])
                frames += 1
            }
            position = end
        }
        guard frames > 0 else { throw AudioContainerError.corrupt("no MPEG audio frame") }
        return MP3Frames(
            bytes: output, frameCount: frames, sampleRate: first.sampleRate, channels: first.channels, samplesPerFrame: first.samplesPerFrame)
    }

    /// One file of `parts`' frames in order. Throws ``MP3JoinError`` when the parts differ in format.
    public static func join(_ parts: [MP3Frames]) throws -> MP3Frames {
        guard let first = parts.first else { throw MP3JoinError.noParts }
        var joined = first
        for part in parts.dropFirst() {
            guard part.sampleRate == first.sampleRate, part.channels == first.channels, part.samplesPerFrame == first.samplesPerFrame else {
                throw MP3JoinError.formatMismatch
            }
            joined.bytes.append(part.bytes)
            joined.frameCount += part.frameCount
        }
        return joined
    }

    /// Whether the frame at `offset` is a Xing/Info or VBRI summary (no audio).
    static func isSummaryFrame(_ bytes: [UInt8], at offset: Int, header: MPEGAudioFrameHeader) -> Bool {
        let xing = offset + 4 + (header.protected ? 2 : 0) + header.sideInformationSize
        let vbri = offset + 4 + 32
        func tag(_ at: Int) -> String? {
            guard at + 4 <= bytes.count else { return nil }
            return String(decoding: bytes[at..<(at + 4)], as: UTF8.self)
        }
        return ["Xing", "Info"].contains(tag(xing)) || tag(vbri) == "VBRI"
    }
}

/// Why MP3 parts could not be joined.
public enum MP3JoinError: Error, Sendable, Equatable {
    case noParts
    /// The parts differ in sample rate, channels or MPEG version.
    case formatMismatch
}
