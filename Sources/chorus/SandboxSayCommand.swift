import ArgumentParser
import ChorusSandbox
import Foundation

/// `chorus sandbox say TEXT --output FILE`: a recording to upload, spoken by the sandbox's synthetic voice.
///
/// The README's voice-message walkthrough uploads one: nobody has a `message.wav` at hand, and the embedded OpenAI
/// emulator's speech endpoint needs the server's per-process key. The WAV carries its text (``SandboxAudioFiles``), so
/// the sandbox transcription of the upload gives that text back.
struct SandboxSayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "say",
        abstract: "Write TEXT spoken by the sandbox voice as a WAV recording (to upload to POST /audio).",
        discussion: """
            The file is 24 kHz 16-bit mono PCM with TEXT embedded, so the sandbox transcription gives TEXT back. \
            Each voice name picks its own pitch.
            """
    )

    /// The longest text accepted, in characters (OpenAI's speech limit; about four minutes of audio).
    static let maximumCharacters = 4_096

    @ArgumentParser.Argument(help: "The words to say.")
    var text: String

    @ArgumentParser.Option(help: "The voice (any name: each picks its own pitch).")
    var voice = "alloy"

    @ArgumentParser.Option(name: [.short, .long], help: "The WAV file to write (replaced if it exists; - for standard output).")
    var output: String

    func validate() throws {
        if text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { throw ValidationError("TEXT is empty: give the words to say") }
        if text.count > Self.maximumCharacters {
            throw ValidationError("TEXT has \(text.count) characters; at most \(Self.maximumCharacters) are accepted")
        }
        if voice.trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError("--voice is empty: give a voice name, such as alloy") }
        if output.isEmpty { throw ValidationError("--output is empty: give a file name, such as message.wav") }
    }

    func run() throws {
        let audio = SandboxAudioFiles.speechWAV(text: text, voice: voice)
        if output == "-" {
            FileHandle.standardOutput.write(audio)
            return
        }
        do {
            try audio.write(to: URL(fileURLWithPath: output), options: .atomic)
        } catch {
            FileHandle.standardError.write(Data("chorus: cannot write \(output): \(error.localizedDescription)\n".utf8))
            throw ExitCode(73)  // EX_CANTCREAT
        }
        let seconds = SandboxAudioFiles.durationSeconds(of: audio) ?? 0
        let note = "wrote \(output): \(String(format: "%.1f", seconds)) s of \"\(text)\" in the sandbox voice \(voice)\n"
        FileHandle.standardError.write(Data(note.utf8))
    }
}
