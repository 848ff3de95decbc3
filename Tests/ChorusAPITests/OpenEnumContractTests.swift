import ChorusAPI
import Foundation
import Testing

/// The open value sets against the contract: the values each one knows (`allCases`) are exactly the `enum` that
/// `openapi/openapi.json` lists for the field it types.
@Suite struct OpenEnumContractTests {
    /// The `enum` of `schema`'s `property` in the contract's components (without `null`).
    static func contractEnum(_ schema: String, _ property: String) throws -> Set<String> {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let data = try Data(contentsOf: root.appendingPathComponent("openapi/openapi.json"))
        let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: Any])
        let properties = try #require((schemas[schema] as? [String: Any])?["properties"] as? [String: Any], "\(schema)")
        let values = try #require((properties[property] as? [String: Any])?["enum"] as? [Any], "\(schema).\(property)")
        return Set(values.compactMap { $0 as? String })
    }

    static func known<E: OpenEnum & CaseIterable>(_: E.Type) -> Set<String> where E.AllCases == [E] {
        Set(E.allCases.map(\.rawValue))
    }

    @Test func knownValuesAreTheContracts() throws {
        #expect(Self.known(CallPermissionStatus.self) == (try Self.contractEnum("CallPermissionResponse", "status")))
        #expect(Self.known(SubscriptionState.self) == (try Self.contractEnum("SubscriptionStatusResponse", "subscription_status")))
        #expect(Self.known(CallTranscriptLine.Speaker.self) == (try Self.contractEnum("CallTranscriptLine", "speaker")))
        #expect(Self.known(ScenarioDTO.Category.self) == (try Self.contractEnum("ScenarioDTO", "category")))
        #expect(Self.known(VoiceDTO.Gender.self) == (try Self.contractEnum("VoiceDTO", "gender")))
        #expect(Self.known(VoiceDTO.Accent.self) == (try Self.contractEnum("VoiceDTO", "accent")))
        #expect(Self.known(VoiceDTO.Personality.self) == (try Self.contractEnum("VoiceDTO", "personality")))
        #expect(Self.known(AppType.self) == (try Self.contractEnum("UsageStatsResponse", "app_type")))
        #expect(Self.known(AppType.self) == (try Self.contractEnum("CallPermissionDetails", "app_type")))
        #expect(Self.known(RecordingFormat.self) == (try Self.contractEnum("AudioUploadResponse", "format")))
    }

    @Test func openValuesEncodeAsTheBareString() throws {
        let line = CallTranscriptLine(speaker: "system", text: "t", atMs: 1, interrupted: false)
        let tree = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(line)) as? [String: Any])
        #expect(tree["speaker"] as? String == "system")
        #expect(try JSONDecoder().decode(CallTranscriptLine.self, from: JSONEncoder().encode(line)) == line)
    }
}
