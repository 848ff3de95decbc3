import ChorusAPI
import ChorusCore
import ChorusProviders
import Foundation
import Vapor

/// Checks user text that becomes a call's AI instructions (a custom scenario's name and persona) when it is saved and
/// again before each call: the persona policy's rules (``PersonaPolicy``) and the moderation model
/// (`CHORUS_CALLS_MODERATION_MODEL`, through the same ``ContentModerator`` Stories uses, metered for calls).
///
/// Refusals are 422 `persona_refused` with the categories. When the moderation model cannot be reached the text is
/// not accepted (503 with `Retry-After`): a persona nobody checked never reaches a call.
struct PersonaScreening: Sendable {
    let policy: PersonaPolicy
    /// `nil` when `CHORUS_CALLS_MODERATION_MODEL=off` (development only).
    let moderator: (any ContentModerator)?
    let model: String?

    /// The verdict on `text` (allowed or not); throws 503 when the moderation model does not answer.
    func verdict(on text: String, at date: Date, logger: Logger) async throws -> PersonaVerdict {
        let rules = policy.categories(of: text)
        var flagged: [String] = []
        if let moderator, let model {
            do {
                let result = try await moderator.moderate(text, model: model)
                if result.flagged { flagged = result.categories.isEmpty ? ["flagged"] : result.categories }
            } catch {
                logger.warning("persona moderation failed", metadata: ["error": .string(String(describing: error).prefix(300).description)])
                throw APIError.unavailable(retryAfter: 30, detail: "The persona could not be checked right now; nothing was saved or charged. Please retry.")
            }
        }
        return PersonaVerdict.combine(policy: rules, moderation: flagged, model: moderator == nil ? nil : model, at: date)
    }

    /// The refusal (422) of a refused verdict.
    static func refusal(_ verdict: PersonaVerdict) -> CallPlacementError {
        .refused(RefusalDetail(error: "persona_refused", message: verdict.refusalMessage, field: "persona", categories: verdict.categories))
    }

    /// The refusal (422) of a scenario an operator disabled.
    static let disabled = CallPlacementError.refused(
        RefusalDetail(
            error: "scenario_disabled",
            message: "This custom scenario was disabled after a content report and can no longer be used for calls.", field: "scenario"))
}

extension CallPlacement {
    /// Checks a custom scenario again before a call is charged or scheduled: 422 `scenario_disabled` when an operator
    /// disabled it, 422 `persona_refused` when its text no longer passes (the verdict is stored either way). Built-in
    /// scenarios carry their guardrails in their instructions and are not checked.
    func screen(_ scenario: ResolvedScenario, userID: String) async throws {
        guard scenario.isCustom, let rowID = CustomScenarioRecord.rowID(fromPublicID: scenario.id),
            let record = try await store.scenarios.customScenario(id: rowID, userID: userID)
        else { return }
        if record.disabledAt != nil { throw PersonaScreening.disabled }
        let verdict = try await services.personas.verdict(on: record.screenedText, at: services.now(), logger: logger)
        try await store.scenarios.recordVerdict(verdict, customScenarioID: rowID)
        guard verdict.allowed else {
            logger.notice(
                "call refused: custom persona failed its check", metadata: ["scenario": .string(scenario.id), "categories": .string(verdict.categories.joined(separator: ","))])
            throw PersonaScreening.refusal(verdict)
        }
    }
}
