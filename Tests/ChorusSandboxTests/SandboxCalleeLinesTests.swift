import ChorusSandbox
import Testing

@Suite("Sandbox callee lines")
struct SandboxCalleeLinesTests {
    @Test("a frame names its line; a frame shared by two lines names neither; a full directory starts again")
    func directory() {
        let lines = SandboxCalleeLines()
        lines.register("Hello?", frames: ["a", "b", "silence"])
        lines.register("Bye.", frames: ["c", "silence"])
        #expect(lines.line(containing: "a") == "Hello?" && lines.line(containing: "b") == "Hello?")
        #expect(lines.line(containing: "c") == "Bye.")
        #expect(lines.line(containing: "silence") == nil)
        // Registered again (a second call with the same script): still one line per frame.
        lines.register("Hello?", frames: ["a", "b", "silence"])
        #expect(lines.line(containing: "a") == "Hello?" && lines.line(containing: "silence") == nil)
        #expect(lines.line(containing: "unknown") == nil)

        lines.register("Long.", frames: (0..<SandboxCalleeLines.capacity).map { "frame\($0)" })
        #expect(lines.line(containing: "a") == nil && lines.line(containing: "frame7") == "Long.")
    }
}
