import Foundation

/// Distributed tracing (issue 18): where this instance exports its spans over OTLP/HTTP, under which service name, in
/// which encoding and how many traces it keeps. Without an endpoint nothing is exported and no exporter runs.
public struct TracingSettings: Sendable, Equatable {
    /// The OTLP/HTTP encodings swift-otel speaks.
    public enum OTLPProtocol: String, Sendable, Equatable {
        case protobuf = "http/protobuf"
        case json = "http/json"
    }

    /// The collector's base URL (`CHORUS_OTEL_ENDPOINT`, e.g. `http://collector:4318`): spans go to `/v1/traces` under
    /// it. `nil` (the default): tracing is off.
    public var endpoint: URL?
    /// `service.name` of the exported spans (`CHORUS_OTEL_SERVICE_NAME`, default `chorus`).
    public var serviceName: String = "chorus"
    /// The request encoding (`CHORUS_OTEL_PROTOCOL`, default `http/protobuf`).
    public var otlpProtocol: OTLPProtocol = .protobuf
    /// The share of new traces kept, 0 to 1 (`CHORUS_OTEL_SAMPLE_RATIO`, default 1); a request that arrives with a
    /// `traceparent` follows its caller's decision.
    public var sampleRatio: Double = 1

    /// Off: no endpoint.
    public static let off = TracingSettings()

    /// `<endpoint>/v1/traces`, where the exporter posts.
    public var tracesURL: URL? {
        endpoint.map { $0.appendingPathComponent("v1").appendingPathComponent("traces") }
    }

    static func load(from reader: inout EnvironmentReader) -> TracingSettings {
        var settings = TracingSettings()
        settings.endpoint = reader.value("CHORUS_OTEL_ENDPOINT", default: URL?.none, parse: EnvironmentReader.baseURLs)
        settings.serviceName = reader.value("CHORUS_OTEL_SERVICE_NAME", default: "chorus", accepts: "a name of at most 255 bytes on one line") { text in
            text.utf8.count <= 255 && !text.contains(where: \.isNewline) ? text : nil
        }
        settings.otlpProtocol = reader.choice("CHORUS_OTEL_PROTOCOL", default: .protobuf, among: [.protobuf, .json])
        settings.sampleRatio = reader.value("CHORUS_OTEL_SAMPLE_RATIO", default: 1, parse: EnvironmentReader.number(in: 0...1))
        return settings
    }
}
