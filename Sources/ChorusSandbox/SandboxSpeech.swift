import ChorusCore
import Foundation
import NIOConcurrencyHelpers

/// Speech audio for the simulated callee and the simulated AI: 8 kHz μ-law, the telephone format.
///
/// By default (``Engine/synthetic``) a deterministic voice-like signal speaks: a glottal pulse train at a speaking pitch
/// shaped into syllables and words, loud enough for an energy-based speech detector and ~14 characters per second long,
/// like speech. The same text in the same voice gives the same bytes on every machine, whatever is installed there.
/// `espeak-ng` really speaks the text (resampled to 8 kHz) only when asked for (``Engine/espeakNG(_:)``, the
/// `CHORUS_SANDBOX_SPEECH=espeak-ng` setting), each voice at its own pitch.
public enum SandboxSpeech {
    /// What speaks.
    public enum Engine: Sendable, Equatable {
        /// The built-in deterministic voice-like signal (the default).
        case synthetic
        /// The `espeak-ng` program at this path, the voice's pitch index as its pitch (`-p`).
        case espeakNG(URL)

        /// The setting choosing the engine (`chorus serve` and `chorus sandbox`).
        public static let settingKey = "CHORUS_SANDBOX_SPEECH"
        /// The setting's accepted values.
        public static let settingValues = ["synthetic", "espeak-ng"]

        /// The engine a `CHORUS_SANDBOX_SPEECH` value asks for (blank or absent: ``synthetic``), `espeak-ng` found on
        /// `path` (a `PATH`-style list of directories); a message naming the setting, the value and what would do for
        /// an unknown value or an `espeak-ng` that is not installed.
        public static func forSetting(_ value: String?, path: String?) -> Result<Engine, SettingError> {
            let trimmed = (value ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            switch trimmed.lowercased() {
            case "", "synthetic":
                return .success(.synthetic)
            case "espeak-ng":
                guard let executable = SandboxSpeech.findExecutable("espeak-ng", path: path) else {
                    return .failure(
                        SettingError(
                            message: "\(settingKey)=espeak-ng, but espeak-ng is not installed (not found on PATH): install it "
                                + "(e.g. `apt-get install espeak-ng`) or leave \(settingKey) unset for the built-in synthetic voice "
                                + "(see docs/configuration.md)."))
                }
                return .success(.espeakNG(executable))
            default:
                let shown = trimmed.count > 40 ? String(trimmed.prefix(40)) + "…" : trimmed
                return .failure(
                    SettingError(
                        message: "\(settingKey)=\"\(shown)\" is not valid: expected synthetic or espeak-ng (see docs/configuration.md)."))
            }
        }
    }

    /// Why a `CHORUS_SANDBOX_SPEECH` value cannot be used.
    public struct SettingError: Error, Sendable, Equatable, CustomStringConvertible {
        /// One line for the operator.
        public let message: String
        public var description: String { message }
    }

    private static let configured = NIOLockedValueBox<Engine>(.synthetic)

    /// The engine of this process's emulators: ``Engine/synthetic`` unless ``use(_:)`` chose another.
    public static var engine: Engine { configured.withLockedValue { $0 } }

    /// Chooses the engine for the whole process (`chorus serve` and `chorus sandbox` at startup, from
    /// `CHORUS_SANDBOX_SPEECH`). Tests that run many servers in one process leave it alone and pass an engine to
    /// ``speak(_:voice:engine:)``.
    public static func use(_ engine: Engine) {
        configured.withLockedValue { $0 = engine }
    }

    /// `text` as 8 kHz μ-law speech in `voice` (a pitch index; any integer) by `engine` (this process's by default).
    /// With `espeak-ng`, a run that fails gives the synthetic voice.
    public static func speak(_ text: String, voice: Int = 0, engine: Engine = SandboxSpeech.engine) -> [UInt8] {
        if case .espeakNG(let executable) = engine, let spoken = espeak(text, voice: voice, executable: executable) { return spoken }
        return synthetic(text, voice: voice)
    }

    /// The pitch index `voice` (any integer) brought into 0…4, the five sandbox voices.
    static func pitchIndex(_ voice: Int) -> Int { (voice % 5 + 5) % 5 }

    /// The `espeak-ng` pitch (`-p`, 0…99, 50 its default) of a voice: 20, 35, 50, 65 or 80.
    public static func espeakPitch(voice: Int) -> Int { 20 + 15 * pitchIndex(voice) }

    /// The deterministic voice-like signal for `text` (no external program).
    public static func synthetic(_ text: String, voice: Int = 0) -> [UInt8] {
        let rate = Double(MuLaw.sampleRate)
        let words = text.split(whereSeparator: { $0.isWhitespace })
        var samples: [Int16] = []
        let pitch = 110.0 + Double(pitchIndex(voice)) * 25
        var phase = 0.0
        for (index, word) in words.enumerated() {
            let syllables = max(1, word.count / 3)
            for syllable in 0..<syllables {
                let length = Int(rate * (0.16 + 0.02 * Double((index + syllable) % 3)))
                let f0 = pitch * (1 + 0.08 * sin(Double(index * 3 + syllable)))
                for n in 0..<length {
                    let envelope = sin(Double.pi * Double(n) / Double(length))
                    phase += f0 / rate
                    if phase >= 1 { phase -= 1 }
                    // A pulse-like waveform (decaying harmonics) sounds voiced and carries energy in the speech band.
                    var value = 0.0
                    for harmonic in 1...6 { value += sin(2 * .pi * phase * Double(harmonic)) / Double(harmonic) }
                    samples.append(Int16(max(-32_000, min(32_000, value * envelope * 9_000))))
                }
            }
            // A short pause between words, a longer one after punctuation.
            let pause = word.last.map { ".,!?;:".contains($0) } == true ? 0.25 : 0.06
            samples.append(contentsOf: repeatElement(0, count: Int(rate * pause)))
        }
        return MuLaw.encode(samples)
    }

    private static func espeak(_ text: String, voice: Int, executable: URL) -> [UInt8]? {
        let process = Process()
        process.executableURL = executable
        // `--` ends the options: a text starting with `-` is spoken, not parsed.
        process.arguments = ["--stdout", "-s", "165", "-p", String(espeakPitch(voice: voice)), "--", text]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, let pcm = WAV.pcm16(data), !pcm.samples.isEmpty else { return nil }
        return MuLaw.encode(WAV.resample(pcm.samples, from: pcm.sampleRate, to: MuLaw.sampleRate))
    }

    /// The first executable `name` in the directories of `path` (a `PATH`-style list).
    static func findExecutable(_ name: String, path: String?) -> URL? {
        for directory in (path ?? "/usr/bin:/bin").split(separator: ":") where !directory.isEmpty {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }
}

/// The little of WAV that reading `espeak-ng --stdout` needs.
enum WAV {
    /// The 16-bit mono PCM samples of a RIFF/WAVE file, or `nil` for anything else.
    static func pcm16(_ data: Data) -> (samples: [Int16], sampleRate: Int)? {
        let bytes = [UInt8](data)
        guard bytes.count > 44, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WAVE".utf8) else { return nil }
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
        var offset = 12
        var sampleRate = 0
        var bits = 0
        var channels = 0
        while offset + 8 <= bytes.count {
            let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            // espeak-ng writes 0xFFFFFFFF as the data size when streaming to a pipe.
            var size = u32(offset + 4)
            let body = offset + 8
            if id == "fmt " {
                guard body + 16 <= bytes.count else { return nil }
                channels = u16(body + 2)
                sampleRate = u32(body + 4)
                bits = u16(body + 14)
            } else if id == "data" {
                guard bits == 16, channels == 1, sampleRate > 0 else { return nil }
                size = min(size, bytes.count - body)
                var samples = [Int16](repeating: 0, count: size / 2)
                for index in samples.indices { samples[index] = Int16(bitPattern: UInt16(u16(body + index * 2))) }
                return (samples, sampleRate)
            }
            offset = body + size + (size & 1)
        }
        return nil
    }

    /// Linear-interpolation resampling (enough for telephone-band test speech).
    static func resample(_ samples: [Int16], from source: Int, to target: Int) -> [Int16] {
        guard source != target, !samples.isEmpty else { return samples }
        let count = samples.count * target / source
        let step = Double(source) / Double(target)
        return (0..<count).map { index in
            let position = Double(index) * step
            let base = Int(position)
            let next = min(base + 1, samples.count - 1)
            let fraction = position - Double(base)
            return Int16(Double(samples[base]) * (1 - fraction) + Double(samples[next]) * fraction)
        }
    }
}
