import Foundation
import Logging

#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// MP3 encoding of 16-bit mono PCM with libmp3lame, loaded at run time (`dlopen`/`dlsym`): no LAME headers or library
/// are needed to build, and a machine without the library still runs (callers then keep WAV).
///
/// Speech is encoded as constant bit rate, mono, at the input's sample rate (24 kHz for the Realtime API: MPEG-2
/// Layer III, 576 samples = 24 ms a frame) and ``bitRateKbps`` (64 kbps, about 480 KB a minute — clear speech, and
/// a constant bit rate makes a file's duration its frame count and lets players seek by byte). No Xing/Info summary
/// frame is written (``MP3Joiner`` joins parts frame by frame).
///
/// One LAME encoder (`lame_t`) is made per ``encode(_:sampleRate:)`` call, so calls may run concurrently.
public final class MP3Encoder: Sendable {
    /// The constant bit rate, kbps.
    public static let bitRateKbps: Int32 = 64
    /// LAME's algorithm quality (0 best … 9 fastest); 5 is its "good speed, good quality" setting.
    public static let quality: Int32 = 5

    /// Where the library is looked for, in order: the dynamic linker's search path first, then Homebrew's folders.
    public static let libraryCandidates: [String] = {
        #if canImport(Darwin)
        [
            "libmp3lame.0.dylib", "libmp3lame.dylib", "/opt/homebrew/lib/libmp3lame.0.dylib", "/opt/homebrew/lib/libmp3lame.dylib",
            "/usr/local/lib/libmp3lame.0.dylib", "/usr/local/lib/libmp3lame.dylib",
        ]
        #else
        ["libmp3lame.so.0", "libmp3lame.so"]
        #endif
    }()

    typealias Init = @convention(c) () -> OpaquePointer?
    typealias SetInt = @convention(c) (OpaquePointer?, Int32) -> Int32
    typealias Params = @convention(c) (OpaquePointer?) -> Int32
    typealias EncodeBuffer =
        @convention(c) (OpaquePointer?, UnsafePointer<Int16>?, UnsafePointer<Int16>?, Int32, UnsafeMutablePointer<UInt8>?, Int32) -> Int32
    typealias Flush = @convention(c) (OpaquePointer?, UnsafeMutablePointer<UInt8>?, Int32) -> Int32

    private struct Functions: @unchecked Sendable {
        let initialize: Init
        let setInSampleRate: SetInt
        let setChannels: SetInt
        let setMode: SetInt
        let setBitRate: SetInt
        let setQuality: SetInt?
        let setWriteVBRTag: SetInt?
        let initParams: Params
        let encodeBuffer: EncodeBuffer
        let flush: Flush
        let close: Params
    }

    /// The file the library was loaded from.
    public let libraryPath: String
    private let functions: Functions

    private init(libraryPath: String, functions: Functions) {
        self.libraryPath = libraryPath
        self.functions = functions
    }

    /// Why encoding failed.
    public enum Failure: Error, Sendable, Equatable {
        /// `lame_init` or `lame_init_params` refused (an unsupported sample rate).
        case setup(String)
        /// `lame_encode_buffer` or `lame_encode_flush` returned an error code.
        case encoding(Int32)
    }

    /// The library found on this machine (loaded once), or `nil` when there is none.
    public static let system: MP3Encoder? = load()

    /// Loads libmp3lame from the first of `candidates` that opens and has every required function.
    public static func load(candidates: [String] = libraryCandidates) -> MP3Encoder? {
        for candidate in candidates {
            guard let handle = dlopen(candidate, RTLD_NOW | RTLD_LOCAL) else { continue }
            func symbol<T>(_ name: String, as type: T.Type) -> T? {
                dlsym(handle, name).map { unsafeBitCast($0, to: type) }
            }
            guard let initialize = symbol("lame_init", as: Init.self),
                let setInSampleRate = symbol("lame_set_in_samplerate", as: SetInt.self),
                let setChannels = symbol("lame_set_num_channels", as: SetInt.self),
                let setMode = symbol("lame_set_mode", as: SetInt.self),
                let setBitRate = symbol("lame_set_brate", as: SetInt.self),
                let initParams = symbol("lame_init_params", as: Params.self),
                let encodeBuffer = symbol("lame_encode_buffer", as: EncodeBuffer.self),
                let flush = symbol("lame_encode_flush", as: Flush.self),
                let close = symbol("lame_close", as: Params.self)
            else {
                dlclose(handle)
                continue
            }
            // The handle stays open for the life of the process (the functions point into it).
            return MP3Encoder(
                libraryPath: candidate,
                functions: Functions(
                    initialize: initialize, setInSampleRate: setInSampleRate, setChannels: setChannels, setMode: setMode,
                    setBitRate: setBitRate, setQuality: symbol("lame_set_quality", as: SetInt.self),
                    setWriteVBRTag: symbol("lame_set_bWriteVbrTag", as: SetInt.self), initParams: initParams, encodeBuffer: encodeBuffer,
                    flush: flush, close: close))
        }
        return nil
    }

    /// LAME's `MPEG_mode` value for mono.
    private static let mono: Int32 = 3
    /// Samples handed to LAME per call.
    private static let block = 24_000

    /// `samples` (mono, 16-bit) at `sampleRate` as MPEG audio frames.
    public func encode(_ samples: [Int16], sampleRate: Int) throws(Failure) -> Data {
        guard let rate = Int32(exactly: sampleRate), rate > 0 else { throw .setup("sample rate \(sampleRate)") }
        guard let lame = functions.initialize() else { throw .setup("lame_init failed") }
        defer { _ = functions.close(lame) }
        _ = functions.setInSampleRate(lame, rate)
        _ = functions.setChannels(lame, 1)
        _ = functions.setMode(lame, Self.mono)
        _ = functions.setBitRate(lame, Self.bitRateKbps)
        _ = functions.setQuality?(lame, Self.quality)
        _ = functions.setWriteVBRTag?(lame, 0)
        guard functions.initParams(lame) >= 0 else { throw .setup("lame_init_params refused \(sampleRate) Hz") }
        // LAME's worst case for n samples is 1.25 n + 7,200 bytes.
        let capacity = Self.block + Self.block / 4 + 7_200
        var output = Data()
        output.reserveCapacity(samples.count / 3 + 8_000)
        var buffer = [UInt8](repeating: 0, count: capacity)
        var start = 0
        while start < samples.count {
            let end = min(start + Self.block, samples.count)
            let written = samples[start..<end].withUnsafeBufferPointer { pcm in
                buffer.withUnsafeMutableBufferPointer { out in
                    functions.encodeBuffer(lame, pcm.baseAddress, pcm.baseAddress, Int32(pcm.count), out.baseAddress, Int32(capacity))
                }
            }
            guard written >= 0 else { throw .encoding(written) }
            output.append(contentsOf: buffer[0..<Int(written)])
            start = end
        }
        let flushed = buffer.withUnsafeMutableBufferPointer { out in functions.flush(lame, out.baseAddress, Int32(capacity)) }
        guard flushed >= 0 else { throw .encoding(flushed) }
        output.append(contentsOf: buffer[0..<Int(flushed)])
        return output
    }

    /// Logs which path speech takes on this machine (MP3 by libmp3lame, or WAV) and returns the encoder.
    @discardableResult
    public static func announce(_ encoder: MP3Encoder?, logger: Logger) -> MP3Encoder? {
        if let encoder {
            logger.info("speech audio: MP3 by libmp3lame", metadata: ["library": .string(encoder.libraryPath)])
        } else {
            logger.warning(
                "speech audio: libmp3lame not found, Realtime speech is served as WAV (install libmp3lame0 / brew install lame for MP3)",
                metadata: ["searched": .string(libraryCandidates.joined(separator: ", "))])
        }
        return encoder
    }
}
