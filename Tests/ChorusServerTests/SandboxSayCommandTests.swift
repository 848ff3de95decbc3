import ChorusSandbox
import Foundation
import Testing

/// `chorus sandbox say`: the recording the README's voice-message walkthrough uploads (issue 20).
@Suite("chorus sandbox say")
struct SandboxSayCommandTests {
    /// Runs `chorus arguments` in `directory`, keeping standard output as bytes (a WAV with `--output -`).
    static func runBinary(_ arguments: [String], in directory: URL) throws -> (status: Int32, stdout: Data, stderr: String) {
        let process = Process()
        process.executableURL = CLITests.executable
        process.arguments = arguments
        process.environment = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"]
        process.currentDirectoryURL = directory
        let errURL = directory.appendingPathComponent(".stderr-\(UUID().uuidString.prefix(8))")
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errURL) }
        let out = Pipe()
        process.standardOutput = out
        process.standardError = try FileHandle(forWritingTo: errURL)
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, data, String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }

    @Test("writes the text in the chosen sandbox voice as a WAV carrying its text, to a file or standard output")
    func writesRecording() throws {
        let directory = try CLITests.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let text = "Pick up Emma at five, I'm stuck at work."

        let run = try Self.runBinary(["sandbox", "say", text, "--output", "message.wav"], in: directory)
        #expect(run.status == 0, "\(run.stderr)")
        let file = try Data(contentsOf: directory.appendingPathComponent("message.wav"))
        #expect(file == SandboxAudioFiles.speechWAV(text: text, voice: "alloy"))
        #expect(SandboxAudioFiles.embeddedText(in: file) == text)
        let seconds = try #require(SandboxAudioFiles.durationSeconds(of: file))
        #expect(seconds > 1 && seconds < 10)
        #expect(run.stderr.contains("wrote message.wav"))
        #expect(run.stderr.contains(String(format: "%.1f s", seconds)))

        let nova = try Self.runBinary(["sandbox", "say", text, "--voice", "nova", "--output", "-"], in: directory)
        #expect(nova.status == 0, "\(nova.stderr)")
        #expect(nova.stdout == SandboxAudioFiles.speechWAV(text: text, voice: "nova"))
        #expect(SandboxAudioFiles.embeddedText(in: nova.stdout) == text)
    }

    @Test("refuses empty or oversized text and an empty voice (exit 64), and names a file it cannot write (exit 73)")
    func refusals() throws {
        let directory = try CLITests.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }

        let empty = try Self.runBinary(["sandbox", "say", "  ", "--output", "x.wav"], in: directory)
        #expect(empty.status == 64)
        #expect(empty.stderr.contains("TEXT is empty"))

        let long = try Self.runBinary(["sandbox", "say", String(repeating: "a", count: 4_097), "--output", "x.wav"], in: directory)
        #expect(long.status == 64)
        #expect(long.stderr.contains("at most 4096"))

        let noVoice = try Self.runBinary(["sandbox", "say", "hello", "--voice", "", "--output", "x.wav"], in: directory)
        #expect(noVoice.status == 64)
        #expect(noVoice.stderr.contains("--voice is empty"))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("x.wav").path))

        let unwritable = try Self.runBinary(["sandbox", "say", "hello", "--output", "missing/dir/x.wav"], in: directory)
        #expect(unwritable.status == 73)
        #expect(unwritable.stderr.contains("cannot write missing/dir/x.wav"))
    }
}
