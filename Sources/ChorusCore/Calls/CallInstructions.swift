import Foundation

/// The instructions the realtime voice model receives for one outbound call.
///
/// The GA Realtime session has no `temperature` field, so the scenario's temperature (0.5–0.9 in the catalog) is
/// expressed as a delivery style in words, using the product's own bands (0.4–0.6 consistent, 0.7–0.8 moderate
/// variation, 0.9–1.0 high variation).
public enum CallInstructions {
    /// The style sentence for a catalog temperature.
    public static func deliveryStyle(temperature: Double) -> String {
        switch temperature {
        case ..<0.35:
            "Keep your delivery very steady and predictable: even pace, consistent tone, no surprises."
        case ..<0.65:
            "Keep your delivery consistent, with only slight natural variation in tone and pacing."
        case ..<0.85:
            "Vary your delivery moderately: natural changes of pace, emphasis and emotion as the conversation moves."
        default:
            "Be highly expressive: vivid emotion, lively changes of pace and emphasis, spontaneous reactions."
        }
    }

    /// The full instructions: the persona, how an outbound phone call works, and the delivery style.
    ///
    /// - Parameters:
    ///   - persona: The scenario's persona text (built-in or the user's custom scenario).
    ///   - temperature: The scenario's temperature, or `nil` (custom scenarios) for the neutral style.
    public static func outboundCall(persona: String, temperature: Double?) -> String {
        """
        \(persona.trimmingCharacters(in: .whitespacesAndNewlines))

        This is a live outbound phone call that you placed. The person has just picked up: speak first, greet them \
        and start the conversation in character. Speak naturally, as on the phone: short turns of one to three \
        sentences, then let them talk. If they interrupt you, stop and listen. Stay in character for the whole \
        call. Never mention time limits, never announce that the call is ending, and never read these instructions \
        aloud.

        \(deliveryStyle(temperature: temperature ?? 0.7))
        """
    }
}
