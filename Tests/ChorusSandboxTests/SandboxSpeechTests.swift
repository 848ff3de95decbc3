import ChorusCore
import Foundation
import Testing

@testable import ChorusSandbox

/// Sandbox speech never depends on what is installed (issue 20): the synthetic voice unless `espeak-ng` is asked for.
@Suite("Sandbox speech engine")
struct SandboxSpeechTests {
    /// A directory holding a fake `espeak-ng` that writes its arguments (one a line) to `arguments` and prints `wav`.
    struct FakeEspeak {
        let directory: URL
        let arguments: URL

        init(wav: Data) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-espeak-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            arguments = directory.appendingPathComponent("arguments")
            let audio = directory.appendingPathComponent("speech.wav")
            try wav.write(to: audio)
            let script = directory.appendingPathComponent("espeak-ng")
            try Data("#!/bin/sh\nprintf '%s\\n' \"$@\" > '\(arguments.path)'\n/bin/cat '\(audio.path)'\n".utf8).write(to: script)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        }

        /// The arguments of the last run, or `nil` if it never ran.
        var lastArguments: [String]? {
            (try? String(contentsOf: arguments, encoding: .utf8)).map { $0.split(separator: "\n").map(String.init) }
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    /// One second of a 300 Hz tone at 16 kHz, unlike anything the synthetic voice says.
    static let tone: [Int16] = (0..<16_000).map { Int16(8_000 * sin(2 * Double.pi * 300 * Double($0) / 16_000)) }

    @Test("the default engine is the synthetic voice, whatever the PATH holds")
    func defaultIsSynthetic() throws {
        let fake = try FakeEspeak(wav: SandboxAudioFiles.wav(pcm16: Self.tone, sampleRate: 16_000, text: "tone"))
        defer { fake.remove() }
        #expect(SandboxSpeech.engine == .synthetic)
        for voice in 0..<5 {
            #expect(SandboxSpeech.speak("Hello from the sandbox.", voice: voice) == SandboxSpeech.synthetic("Hello from the sandbox.", voice: voice))
        }
        // An unset or `synthetic` setting never looks for the program, even where one is installed.
        for setting in [nil, "", "  ", "synthetic", "SYNTHETIC"] {
            #expect(SandboxSpeech.Engine.forSetting(setting, path: fake.directory.path) == .success(.synthetic), "\(setting ?? "nil")")
        }
        #expect(fake.lastArguments == nil)
    }

    @Test("espeak-ng asked for: the program on the PATH speaks, each voice at its own pitch")
    func espeakWhenAskedFor() throws {
        let fake = try FakeEspeak(wav: SandboxAudioFiles.wav(pcm16: Self.tone, sampleRate: 16_000, text: "tone"))
        defer { fake.remove() }
        let engine = try SandboxSpeech.Engine.forSetting("espeak-ng", path: "/nonexistent:\(fake.directory.path)").get()
        #expect(engine == .espeakNG(fake.directory.appendingPathComponent("espeak-ng")))

        let spoken = SandboxSpeech.speak("Hello there", voice: 3, engine: engine)
        #expect(spoken == MuLaw.encode(WAV.resample(Self.tone, from: 16_000, to: MuLaw.sampleRate)))
        #expect(spoken.count == 8_000)
        #expect(fake.lastArguments == ["--stdout", "-s", "165", "-p", "65", "--", "Hello there"])

        var pitches: [String] = []
        for voice in [0, 1, 2, 3, 4, -1, 7] {
            _ = SandboxSpeech.speak("-v not an option", voice: voice, engine: engine)
            let arguments = try #require(fake.lastArguments)
            pitches.append(arguments[4])
            #expect(arguments.last == "-v not an option")
        }
        #expect(pitches == ["20", "35", "50", "65", "80", "80", "50"])
    }

    @Test("espeak-ng that fails or prints no WAV gives the synthetic voice")
    func espeakFailureFallsBack() throws {
        let fake = try FakeEspeak(wav: Data("not a wav".utf8))
        defer { fake.remove() }
        let engine = try SandboxSpeech.Engine.forSetting("espeak-ng", path: fake.directory.path).get()
        #expect(SandboxSpeech.speak("Fallback", voice: 2, engine: engine) == SandboxSpeech.synthetic("Fallback", voice: 2))
        #expect(fake.lastArguments?.last == "Fallback")
    }

    @Test("espeak-ng not installed, or an unknown value: one message naming the setting, the value and what is accepted")
    func settingErrors() throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-empty-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: empty) }
        guard case .failure(let missing) = SandboxSpeech.Engine.forSetting("espeak-ng", path: empty.path) else {
            Issue.record("espeak-ng was found in an empty directory")
            return
        }
        #expect(missing.message.hasPrefix("CHORUS_SANDBOX_SPEECH=espeak-ng, but espeak-ng is not installed"))
        #expect(missing.message.contains("leave CHORUS_SANDBOX_SPEECH unset"))
        guard case .failure(let unknown) = SandboxSpeech.Engine.forSetting("festival", path: empty.path) else {
            Issue.record("festival was accepted")
            return
        }
        #expect(unknown.message == #"CHORUS_SANDBOX_SPEECH="festival" is not valid: expected synthetic or espeak-ng (see docs/configuration.md)."#)
    }
}
