import ChorusCore
import ChorusProviders
import ChorusServer
import Foundation
import NIOConcurrencyHelpers

/// In-process stand-ins for providers, for tests where driving an emulator over HTTP adds nothing: install one with
/// ``ChorusApp/Options/overrideProviders`` (e.g. `options.fake(\.transcriber, FakeTranscriber(...))`). Each records what
/// it was asked and answers what the test set, or fails with the ``ProviderError`` the test set.

/// Hears `text` in every recording, or fails with `failure`.
final class FakeTranscriber: Transcriber {
    private let state: NIOLockedValueBox<(answer: Result<String, ProviderError>, requests: [TranscriptionRequest])>

    init(text: String = "", failure: ProviderError? = nil) {
        state = NIOLockedValueBox((failure.map { .failure($0) } ?? .success(text), []))
    }

    /// The recordings it was asked to transcribe, in order.
    var requests: [TranscriptionRequest] { state.withLockedValue { $0.requests } }

    func transcribe(_ request: TranscriptionRequest) async throws -> Transcription {
        let answer = state.withLockedValue { state in
            state.requests.append(request)
            return state.answer
        }
        let text = try answer.get()
        return Transcription(text: text, language: request.language ?? "en", durationSeconds: 1, evidence: TranscriptEvidence(), model: "fake-transcribe")
    }
}

/// Answers every generation with `content`, or fails with `failure`.
final class FakeTextGenerator: TextGenerator {
    private let state: NIOLockedValueBox<(answer: Result<String, ProviderError>, requests: [TextGenerationRequest])>

    init(content: String = "", failure: ProviderError? = nil) {
        state = NIOLockedValueBox((failure.map { .failure($0) } ?? .success(content), []))
    }

    /// The generations it was asked for, in order.
    var requests: [TextGenerationRequest] { state.withLockedValue { $0.requests } }

    func generate(_ request: TextGenerationRequest) async throws -> GeneratedText {
        let answer = state.withLockedValue { state in
            state.requests.append(request)
            return state.answer
        }
        return GeneratedText(content: try answer.get(), model: "fake-text", promptTokens: 1, completionTokens: 1)
    }
}

/// Draws a 1×1 PNG for every prompt, except that prompts containing a failure's `match` fail with its `error`, the
/// first `times` times they are asked for (the way to make one illustration of a story fail while the others succeed).
final class FakeImageGenerator: ImageGenerator {
    struct Failure: Sendable {
        var match: String
        var error: any Error & Sendable
        var times: Int = 1
    }

    /// A valid 1×1 PNG.
    static let png = Data(
        base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==") ?? Data()

    private let state: NIOLockedValueBox<(failures: [Failure], requests: [ImageGenerationRequest])>

    init(failures: [Failure] = []) {
        state = NIOLockedValueBox((failures, []))
    }

    /// The pictures it was asked for, in order.
    var requests: [ImageGenerationRequest] { state.withLockedValue { $0.requests } }

    func generate(_ request: ImageGenerationRequest) async throws -> GeneratedImage {
        let failure = state.withLockedValue { state -> (any Error)? in
            state.requests.append(request)
            guard let index = state.failures.firstIndex(where: { $0.times > 0 && request.prompt.contains($0.match) }) else { return nil }
            state.failures[index].times -= 1
            return state.failures[index].error
        }
        if let failure { throw failure }
        return GeneratedImage(png: Self.png, model: request.model, inputTokens: 1, outputTokens: 1)
    }
}

/// Flags nothing, or fails with `failure`.
final class FakeModerator: ContentModerator {
    private let state: NIOLockedValueBox<(answer: Result<ModerationResult, ProviderError>, texts: [String])>

    init(failure: ProviderError? = nil) {
        state = NIOLockedValueBox((failure.map { .failure($0) } ?? .success(ModerationResult(flagged: false, categories: [])), []))
    }

    /// The texts it was asked to check, in order.
    var texts: [String] { state.withLockedValue { $0.texts } }

    func moderate(_ text: String, model: String) async throws -> ModerationResult {
        try state.withLockedValue { state in
            state.texts.append(text)
            return state.answer
        }.get()
    }
}

extension ChorusApp.Options {
    /// These options with the provider at `role` replaced by `fake` (on top of any replacement already made).
    func fake<Provider: Sendable>(_ role: any WritableKeyPath<ProviderSet, Provider> & Sendable, _ fake: Provider) -> ChorusApp.Options {
        var options = self
        let earlier = overrideProviders
        options.overrideProviders = { providers in
            earlier(&providers)
            providers[keyPath: role] = fake
        }
        return options
    }
}
