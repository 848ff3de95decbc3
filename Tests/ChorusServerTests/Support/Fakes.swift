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

extension ChorusApp.Options {
    /// These options with the provider at `role` replaced by `fake` (on top of any replacement already made).
    func fake<Provider: Sendable>(_ role: WritableKeyPath<ProviderSet, Provider> & Sendable, _ fake: Provider) -> ChorusApp.Options {
        var options = self
        let earlier = overrideProviders
        options.overrideProviders = { providers in
            earlier(&providers)
            providers[keyPath: role] = fake
        }
        return options
    }
}
