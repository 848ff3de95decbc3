import Foundation
import Testing

@testable import ChorusAPI

/// ``StoryStageStatus`` on the wire: the bare string, unknown values kept; ``StoryStagesDTO/isFinished`` from it.
@Suite struct StoryStageStatusTests {
    @Test func stagesDecodeAsTheirStringsAndKeepUnknownValues() throws {
        let json = #"{"text":"succeeded","scenes":"running","narration":"pending","illustrations":"queued_elsewhere"}"#
        let stages = try ChorusJSON.makeDecoder().decode(StoryStagesDTO.self, from: Data(json.utf8))
        #expect(stages.text == .succeeded && stages.scenes == .running && stages.narration == .pending)
        #expect(stages.illustrations.rawValue == "queued_elsewhere" && !stages.illustrations.isEnded)
        let encoded = try #require(String(data: try ChorusJSON.makeEncoder().encode(stages), encoding: .utf8))
        #expect(encoded.contains(#""illustrations":"queued_elsewhere""#) && encoded.contains(#""text":"succeeded""#))
    }

    @Test func finishedWhenTheTextFailedOrNarrationAndPicturesEnded() {
        #expect(StoryStagesDTO(text: .failed, scenes: .pending, narration: .pending, illustrations: .pending).isFinished)
        #expect(StoryStagesDTO(text: .succeeded, scenes: .succeeded, narration: .succeeded, illustrations: .partial).isFinished)
        #expect(StoryStagesDTO(text: .succeeded, scenes: .failed, narration: .succeeded, illustrations: .pending).isFinished)
        #expect(StoryStagesDTO(text: .succeeded, scenes: .succeeded, narration: .skipped, illustrations: .skipped).isFinished)
        #expect(!StoryStagesDTO(text: .succeeded, scenes: .succeeded, narration: .running, illustrations: .succeeded).isFinished)
        #expect(!StoryStagesDTO(text: .succeeded, scenes: .succeeded, narration: .succeeded, illustrations: .running).isFinished)
    }
}
