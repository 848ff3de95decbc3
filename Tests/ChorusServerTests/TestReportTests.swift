import Foundation
import Testing

/// scripts/test's report (scripts/lib/test-report.sh) on fabricated logs: the recap lists real failures only, and the
/// last line agrees with the exit status (issue 20, "the test run tells the truth").
@Suite("scripts/test report")
struct TestReportTests {
    static let library = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/lib/test-report.sh")

    /// Runs `script` in bash after sourcing the report library: its exit status and standard output.
    static func bash(_ script: String) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", "set -euo pipefail; . \"$1\"; " + script, "bash", library.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test("the recap lists failures, crashes and compiler errors, never warnings, server logs or other stages' output")
    func recapListsRealFailuresOnly() throws {
        let log = """
            [412/415] Compiling ChorusServer Foo.swift
            /work/Sources/ChorusServer/Foo.swift:12:5: warning: variable 'x' was never mutated; consider changing to 'let'
            /work/Sources/ChorusServer/Bar.swift:3:9: warning: 'error: ' is only a string here
            ◇ Test theVoiceIdPicksAStablePitch() started.
            ✘ Test theVoiceIdPicksAStablePitch() recorded an issue at SandboxElevenLabsTests.swift:214:17: Expectation failed: (pitches.count → 1) == 5
            ✘ Test theVoiceIdPicksAStablePitch() failed after 0.412 seconds with 1 issue.
            ⚠︎ Test slowThing() recorded a warning at Slow.swift:9:3: took long
            ✘ Test flaky() passed after 0.1 seconds with 1 known issue.
            ✔ Test fine() passed after 0.002 seconds.
            2026-11-27T01:00:00+0000 error chorus.http : request_id=1 [ChorusServer] provider failed: error: connection reset
            [ ERROR ] Abort.404: Not Found [request-id: 1, codes.vapor.request.error]
            Test Case '-[ChorusKitTests.Old testThing]' failed (0.005 seconds).
            /work/Tests/ChorusKitTests/Old.swift:40: error: -[ChorusKitTests.Old testThing] : XCTAssertEqual failed: ("1") is not equal to ("2")
            ChorusServer/Store.swift:88: Fatal error: Unexpectedly found nil while unwrapping an Optional value
            error: Exited with unexpected signal code 4
            ✘ Test run with 2000 tests in 300 suites failed after 900.1 seconds with 2 issues.
            Ran 10 tests in 42.0s
            OK
            """
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-report-\(UUID().uuidString.prefix(8)).log")
        try Data(log.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let recap = try Self.bash("failure_recap \"\(file.path)\"")
        #expect(recap.status == 0)
        #expect(
            recap.output.split(separator: "\n").map(String.init) == [
                "✘ Test theVoiceIdPicksAStablePitch() recorded an issue at SandboxElevenLabsTests.swift:214:17: Expectation failed: (pitches.count → 1) == 5",
                "✘ Test theVoiceIdPicksAStablePitch() failed after 0.412 seconds with 1 issue.",
                "Test Case '-[ChorusKitTests.Old testThing]' failed (0.005 seconds).",
                "/work/Tests/ChorusKitTests/Old.swift:40: error: -[ChorusKitTests.Old testThing] : XCTAssertEqual failed: (\"1\") is not equal to (\"2\")",
                "ChorusServer/Store.swift:88: Fatal error: Unexpectedly found nil while unwrapping an Optional value",
                "error: Exited with unexpected signal code 4",
                "✘ Test run with 2000 tests in 300 suites failed after 900.1 seconds with 2 issues.",
            ], "\(recap.output)")

        let clean = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-report-\(UUID().uuidString.prefix(8)).log")
        try Data("✔ Test fine() passed after 0.002 seconds.\n/x/Foo.swift:1:1: warning: unused\n".utf8).write(to: clean)
        defer { try? FileManager.default.removeItem(at: clean) }
        let nothing = try Self.bash("failure_recap \"\(clean.path)\"")
        #expect(nothing.status == 0)
        #expect(nothing.output.isEmpty)
    }

    @Test("the last line counts every stage and the exit status agrees with it")
    func lastLineAgreesWithExitStatus() throws {
        let passing = try Self.bash(#"stages=("swift tests" "browser tests"); statuses=(0 0); run_summary"#)
        #expect(passing.status == 0)
        #expect(passing.output == "chorus tests: 2 passed, 0 failed (swift tests: passed; browser tests: passed)\n")

        let failing = try Self.bash(#"stages=("swift tests" "browser tests" "fuzzing"); statuses=(1 0 2); run_summary"#)
        #expect(failing.status == 1)
        #expect(failing.output == "chorus tests: 1 passed, 2 failed (swift tests: FAILED; browser tests: passed; fuzzing: FAILED)\n")

        let none = try Self.bash(#"stages=(); statuses=(); run_summary"#)
        #expect(none.status == 1)
        #expect(none.output == "chorus tests: 0 passed, 1 failed (setup: FAILED)\n")
    }
}
