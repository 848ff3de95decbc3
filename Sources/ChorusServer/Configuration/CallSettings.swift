import ChorusCore
import Foundation

// Calls: the bridge's models and policies, where and when calls may go, and what every call says first.
extension ChorusConfiguration {
    /// The call bridge's models and policies.
    public struct CallBridgeSettings: Sendable, Equatable {
        /// The realtime model (`CHORUS_OPENAI_REALTIME_MODEL`).
        public var realtimeModel: String
        /// The model transcribing the callee; `nil` when set to `none`.
        public var transcriptionModel: String?
        /// Days a call's transcript is kept.
        public var transcriptRetentionDays: Int
        /// Outbound calls placed per second across all instances (Twilio's default account limit is 1).
        public var callsPerSecond: Double
        /// Twilio answering-machine detection on every call (`CHORUS_CALL_MACHINE_DETECTION`, default on): the AI's
        /// first words wait for it, and a machine is hung up on (or gets the scenario's message) without a charge.
        public var machineDetection: Bool = true

        static func load(from reader: inout EnvironmentReader) -> CallBridgeSettings {
            CallBridgeSettings(
                realtimeModel: reader.string("CHORUS_OPENAI_REALTIME_MODEL") ?? "gpt-realtime-2.1",
                transcriptionModel: reader.string("CHORUS_OPENAI_TRANSCRIPTION_MODEL").map { $0.lowercased() == "none" ? nil : $0 }
                    ?? "gpt-live-transcribe",
                transcriptRetentionDays: reader.value(
                    "CHORUS_TRANSCRIPT_RETENTION_DAYS", default: 30, parse: EnvironmentReader.integer(in: 0...3_650, of: "days")),
                callsPerSecond: reader.value("CHORUS_TWILIO_CALLS_PER_SECOND", default: 1, parse: EnvironmentReader.number(above: 0, atMost: 1_000)),
                machineDetection: reader.flag("CHORUS_CALL_MACHINE_DETECTION", default: true)
            )
        }
    }

    /// Where and when calls may go (issue 17): countries, the callee's local calling hours, and per-number limits.
    public struct CallDestinationSettings: Sendable, Equatable {
        /// ISO 3166 alpha-2 codes (`CHORUS_CALL_DESTINATIONS`; default: the caller ID's country).
        public var countries: Set<String>
        /// The callee's local hours (`CHORUS_CALL_HOURS`, default `09:00-20:00`); `nil` (`any`): any time.
        public var hours: CallingHours?
        /// Calls one number receives per UTC day, all accounts together (`CHORUS_CALLS_PER_NUMBER_PER_DAY`, default 3;
        /// `nil` (`off`): no limit).
        public var callsPerNumberPerDay: Int?
        /// Accounts that may call one number per UTC week (`CHORUS_ACCOUNTS_PER_NUMBER_PER_WEEK`, default 3; `nil`
        /// (`off`): no limit).
        public var accountsPerNumberPerWeek: Int?

        static func load(from reader: inout EnvironmentReader, callerID: String) -> CallDestinationSettings {
            let supported = NumberingPlan.supportedCountries
            var countries: Set<String> = NumberingPlan.country(of: callerID).map { [$0] } ?? []
            if let text = reader.string("CHORUS_CALL_DESTINATIONS") {
                let codes = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).uppercased() }.filter { !$0.isEmpty }
                let unknown = codes.filter { !supported.contains($0) }
                if codes.isEmpty || !unknown.isEmpty {
                    reader.problems.append(
                        "CHORUS_CALL_DESTINATIONS must list ISO 3166 country codes Chorus has numbering-plan data for"
                            + (unknown.isEmpty ? "" : " (unknown: \(unknown.joined(separator: ", ")))")
                            + "; supported: \(supported.sorted().joined(separator: ", ")).")
                } else {
                    countries = Set(codes)
                }
            } else if countries.isEmpty {
                reader.problems.append(
                    "CHORUS_CALL_DESTINATIONS is required: the caller ID \(PhoneNumberMask.mask(callerID)) is in no country Chorus has "
                        + "numbering-plan data for.")
            }
            let hours = reader.value(
                "CHORUS_CALL_HOURS", default: CallingHours?.some(.standard),
                accepts: "local hours such as 09:00-20:00 (the start before the end), or any"
            ) { text -> CallingHours?? in
                text.lowercased() == "any" ? .some(nil) : CallingHours.parse(text).map { .some($0) }
            }
            if hours != nil {
                let missing = NumberingPlan.allTimeZones.filter { TimeZone(identifier: $0) == nil }.sorted()
                if !missing.isEmpty {
                    reader.problems.append(
                        "CHORUS_CALL_HOURS needs the IANA time zone database (install tzdata); missing: \(missing.prefix(5).joined(separator: ", "))."
                    )
                }
            }
            func limit(_ key: String) -> Int? {
                reader.value(key, default: Int?.some(3), accepts: "a whole number from 1 to 1000, or off") { text -> Int?? in
                    if text.lowercased() == "off" { return .some(nil) }
                    guard let value = Int(text), (1...1_000).contains(value) else { return nil }
                    return .some(value)
                }
            }
            return CallDestinationSettings(
                countries: countries, hours: hours, callsPerNumberPerDay: limit("CHORUS_CALLS_PER_NUMBER_PER_DAY"),
                accountsPerNumberPerWeek: limit("CHORUS_ACCOUNTS_PER_NUMBER_PER_WEEK"))
        }
    }

    /// The disclosure templates (`CHORUS_CALL_DISCLOSURE`, `CHORUS_CALL_DISCLOSURE_<LANG>`); `off` is refused in production.
    static func loadCallDisclosure(from reader: inout EnvironmentReader, production: Bool) -> CallDisclosure? {
        var templates = CallDisclosure.defaultTemplates
        if let text = reader.string("CHORUS_CALL_DISCLOSURE") {
            if text.lowercased() == "off" {
                if production {
                    reader.problems.append("CHORUS_CALL_DISCLOSURE=off is refused in production: every call must open with its disclosure.")
                }
                return production ? CallDisclosure() : nil
            }
            if let problem = CallDisclosure.problem(in: text) {
                reader.problems.append("CHORUS_CALL_DISCLOSURE \(problem).")
            } else {
                for language in CallLanguage.allCases { templates[language] = text }
            }
        }
        for language in CallLanguage.allCases {
            let key = "CHORUS_CALL_DISCLOSURE_" + language.rawValue.uppercased()
            guard let text = reader.string(key) else { continue }
            if let problem = CallDisclosure.problem(in: text) {
                reader.problems.append("\(key) \(problem).")
            } else {
                templates[language] = text
            }
        }
        return CallDisclosure(templates: templates)
    }
}
