import ChorusCore
import ChorusFuzz
import ChorusProviders
import Foundation
import NIOHTTP1
import Testing

/// Replays every committed fuzz corpus (Fuzz/corpus/<target>) through its target in the ordinary test run, so the
/// inputs that once crashed Chorus stay fixed even where libFuzzer is not run.
@Suite struct FuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/corpus")

    @Test(arguments: FuzzTarget.allCases)
    func corpusReplays(_ target: FuzzTarget) async throws {
        let files = FuzzInputs.files(at: Self.corpus.appendingPathComponent(target.rawValue))
        #expect(files.count >= 2, "every target has a seed corpus of a few inputs")
        for file in files {
            await target.runAsync([UInt8](try Data(contentsOf: file)))
        }
    }

    @Test func everyCorpusFolderNamesATarget() throws {
        let folders = try FileManager.default.contentsOfDirectory(atPath: Self.corpus.path).sorted()
        #expect(folders == FuzzTarget.allCases.map(\.rawValue).sorted())
    }

    /// The inputs of issue 16 that trapped, as the parsers now answer them.
    @Test func formerCrashesGetAnswers() throws {
        // bytes=0-9223372036854775807 on a 1,000-byte blob: the whole blob.
        #expect(ByteRange.parse("bytes=0-9223372036854775807", size: 1_000) == .range(0..<1_000))
        #expect(ByteRange.parse("bytes=9223372036854775807-", size: 1_000) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=99999999999999999999-", size: 1_000) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=-99999999999999999999", size: 1_000) == .range(0..<1_000))
        #expect(ByteRange.parse("bytes=+5-9", size: 1_000) == ByteRange.none)
        #expect(ByteRange.parse("bytes=-0", size: 1_000) == .unsatisfiable)
        // The M4A whose second box declares a 64-bit size of Int64.max: a corrupt file, not a trap.
        let m4a = try Data(contentsOf: Self.corpus.appendingPathComponent("audio-container/crash-m4a-64bit-box-size"))
        #expect(throws: AudioContainerError.corrupt("truncated mdat box")) { try AudioContainer.inspect(m4a) }
        // A Retry-After of 1e300 seconds: clamped to a day (and so never waited for).
        #expect(ProviderHTTP.retryAfter(["retry-after": "1e300"]) == ProviderHTTP.longestRetryAfter)
        #expect(ProviderHTTP.retryAfter(["retry-after-ms": "1e300"]) == ProviderHTTP.longestRetryAfter)
        #expect(ProviderHTTP.retryAfter(["retry-after": "nan"]) == nil)
        #expect(ProviderHTTP.retryAfter(["retry-after": "1.5"]) == .milliseconds(1_500))
    }
}
