import ChorusAPI
import Foundation
import NIOConcurrencyHelpers
import Testing
import Tracing
import Vapor

@testable import ChorusServer

/// Distributed tracing (issue 18): a server with `CHORUS_OTEL_ENDPOINT` exports its spans over OTLP/HTTP to a
/// collector on loopback, which decodes them; without an endpoint nothing is exported.
@Suite("Tracing")
struct TracingTests {
    @Test("a request's span tree: the caller's traceparent, its transactions and provider exchanges, the bridge, a job", arguments: TestDatabase.all)
    func requestSpanTree(_ database: TestDatabase) async throws {
        let collector = try await OTLPCollector.start()
        let clock = TestClock()
        do {
            let environment = [
                "CHORUS_OTEL_ENDPOINT": "http://127.0.0.1:\(collector.port)/", "CHORUS_OTEL_SERVICE_NAME": "chorus-tracing-test",
            ]
            try await TestServer.run(on: database, environment: environment, options: .testing(clock: clock.closure)) { server in
                #expect(server.app.chorus.tracing.isExporting)
                let token = try await server.register().accessToken
                let traceID = Self.randomHex(bytes: 16)
                let callerSpanID = Self.randomHex(bytes: 8)
                let call = try await server.makeCall(token, headers: [("traceparent", "00-\(traceID)-\(callerSpanID)-01")])
                #expect(call.status == 200, "\(call.text)")
                let placed = try call.decode(MakeCallResponse.self)

                // The request's span: the caller's trace, the caller's span as parent, named by the route template.
                var request: OTLPCollector.Span?
                try await server.eventually(timeout: .seconds(20), "the make-call span is exported") {
                    request = collector.spans.first { $0.traceID == traceID && $0.name == "POST /mobile/make-call" }
                    return request != nil
                }
                guard let request else { return }
                #expect(request.parentSpanID == callerSpanID)
                #expect(request.kind == .server)
                #expect(request.attributes["http.route"] == "/mobile/make-call")
                #expect(request.attributes["http.response.status_code"] == "200")
                #expect(request.resource["service.name"] == "chorus-tracing-test")

                // Its children: the write transactions (the charge and the call's row) and the exchange with Twilio.
                try await server.eventually("the request's children are exported") {
                    collector.spans.contains { $0.parentSpanID == request.spanID && $0.name.hasPrefix("twilio ") }
                }
                let children = collector.spans.filter { $0.parentSpanID == request.spanID }
                #expect(children.allSatisfy { $0.traceID == traceID })
                let transactions = children.filter { $0.name == "db.transaction" }
                #expect(!transactions.isEmpty)
                #expect(transactions.allSatisfy { $0.kind == .client })
                #expect(transactions.allSatisfy { $0.attributes["db.system.name"] == (database == .sqlite ? "sqlite" : "postgresql") })
                let twilio = try #require(children.first { $0.name == "twilio calls.create" } ?? children.first { $0.name.hasPrefix("twilio ") })
                #expect(twilio.kind == .client)
                #expect(twilio.attributes["chorus.provider"] == "twilio")
                #expect(twilio.attributes["http.response.status_code"] == "201" || twilio.attributes["http.response.status_code"] == "200")

                // The provider (Twilio's emulator, on this server) received the exchange's traceparent: its request's
                // span continues the caller's trace under the exchange's span.
                try await server.eventually("the emulator's span is exported") {
                    collector.spans.contains { $0.parentSpanID == twilio.spanID }
                }
                let emulated = try #require(collector.spans.first { $0.parentSpanID == twilio.spanID })
                #expect(emulated.traceID == traceID)
                #expect(emulated.kind == .server)
                #expect(emulated.name == "POST /sandbox/2010-04-01/Accounts/:accountSid/Calls.json")
                // Route templates, never the raw path: no account SID or call SID in any request span's name.
                #expect(!collector.spans.contains { $0.kind == .server && ($0.name.contains("/AC") || $0.name.contains(placed.callSid)) })

                // The call's media bridge is a span of its own, ended when the call is settled, with the work it did.
                _ = try await server.waitForEnd(token, sid: placed.callSid)
                try await server.eventually(timeout: .seconds(20), "the bridge's span is exported") {
                    collector.spans.contains { $0.name == "call.bridge" && $0.attributes["chorus.call.ended_reason"] != nil }
                }
                let bridge = try #require(collector.spans.first { $0.name == "call.bridge" && $0.attributes["chorus.call.ended_reason"] != nil })
                #expect(bridge.attributes["chorus.call.ended_reason"] == "callee_hangup")
                #expect(bridge.attributes["chorus.call_id"] != nil)
                #expect(collector.spans.contains { $0.parentSpanID == bridge.spanID && $0.name == "db.transaction" })

                // A call whose final status callback is lost: a day later its reconciliation job asks Twilio. Each job run
                // is a trace of its own, with its exchanges below it.
                try await server.setCallee("+14155550142", behavior: "busy", callbacks: false)
                let lost = try await server.makeCall(token, to: "+14155550142")
                #expect(lost.status == 200, "\(lost.text)")
                clock.advance(days: 1)
                try await server.eventually(timeout: .seconds(20), "the reconciliation job's exchange with Twilio is exported") {
                    let jobs = Set(collector.spans.filter { $0.name == "job reconcile_call" }.map(\.spanID))
                    return collector.spans.contains { $0.name.hasPrefix("twilio ") && jobs.contains($0.parentSpanID ?? "") }
                }
                let exchange = try #require(collector.spans.first { span in
                    span.name.hasPrefix("twilio ") && collector.spans.contains { $0.name == "job reconcile_call" && $0.spanID == span.parentSpanID }
                })
                let job = try #require(collector.spans.first { $0.spanID == exchange.parentSpanID })
                #expect(job.parentSpanID == nil && job.kind == .consumer && job.traceID == exchange.traceID)
                #expect(job.traceID != traceID)
                #expect(job.attributes["chorus.job.kind"] == "reconcile_call")
                #expect(exchange.kind == .client && exchange.attributes["chorus.provider"] == "twilio")
                // Work outside any request starts its own trace: the startup model check's exchange with OpenAI (through
                // ProviderHTTP), which the OpenAI emulator's request span continues.
                let models = try #require(collector.spans.first { $0.name == "openai models.list" })
                #expect(models.parentSpanID == nil && models.kind == .client && models.attributes["http.response.status_code"] == "200")
                #expect(collector.spans.contains { $0.parentSpanID == models.spanID && $0.traceID == models.traceID && $0.kind == .server })
                // Every exported request came as protobuf.
                #expect(collector.contentTypes.allSatisfy { $0 == "application/x-protobuf" })
            }
        } catch {
            await collector.stop()
            throw error
        }
        await collector.stop()
    }

    @Test("http/json: the spans are posted as OTLP JSON")
    func jsonProtocol() async throws {
        let collector = try await OTLPCollector.start()
        do {
            let environment = ["CHORUS_OTEL_ENDPOINT": "http://127.0.0.1:\(collector.port)", "CHORUS_OTEL_PROTOCOL": "http/json"]
            try await TestServer.run(on: .sqlite, environment: environment) { server in
                _ = try await server.register()
                try await server.eventually(timeout: .seconds(20), "spans are posted") { !collector.contentTypes.isEmpty }
                #expect(collector.contentTypes.allSatisfy { $0 == "application/json" })
                #expect(collector.jsonBodies.contains { $0.contains("POST /auth/register") })
            }
        } catch {
            await collector.stop()
            throw error
        }
        await collector.stop()
    }

    @Test("without CHORUS_OTEL_ENDPOINT: a no-op tracer and no exporter; traced callers are still served")
    func offWithoutEndpoint() async throws {
        try await TestServer.run(on: .sqlite) { server in
            let tracing = server.app.chorus.tracing
            #expect(!tracing.isExporting)
            #expect(tracing.tracer is NoOpTracer)
            let token = try await server.register().accessToken
            let traceparent = "00-\(Self.randomHex(bytes: 16))-\(Self.randomHex(bytes: 8))-01"
            let reply = try await server.request(.GET, "/mobile/usage-stats", token: token, headers: [("traceparent", traceparent)])
            #expect(reply.status == 200)
            let malformed = try await server.request(.GET, "/mobile/usage-stats", token: token, headers: [("traceparent", "00-zz-not-a-trace")])
            #expect(malformed.status == 200)
        }
        // Made directly: off is a no-op tracer whose start and shutdown do nothing.
        let off = try ChorusTracing.make(.off, logger: Logger(label: "test"))
        off.start()
        await off.shutdown()
        #expect(!off.isExporting && off.tracer is NoOpTracer)
    }

    @Test("the tracing settings: endpoint, service name, protocol, sample ratio; malformed values are refused")
    func settings() throws {
        let off = try ChorusConfiguration.load(from: [:])
        #expect(off.tracing == .off && off.tracing.tracesURL == nil)
        let on = try ChorusConfiguration.load(from: [
            "CHORUS_OTEL_ENDPOINT": "https://collector.internal:4318/", "CHORUS_OTEL_SERVICE_NAME": "chorus-eu",
            "CHORUS_OTEL_PROTOCOL": "HTTP/JSON", "CHORUS_OTEL_SAMPLE_RATIO": "0.25",
        ])
        #expect(on.tracing.tracesURL?.absoluteString == "https://collector.internal:4318/v1/traces")
        #expect(on.tracing.serviceName == "chorus-eu" && on.tracing.otlpProtocol == .json && on.tracing.sampleRatio == 0.25)
        for (key, value) in [
            ("CHORUS_OTEL_ENDPOINT", "collector:4318"), ("CHORUS_OTEL_ENDPOINT", "grpc://collector:4317"), ("CHORUS_OTEL_PROTOCOL", "grpc"),
            ("CHORUS_OTEL_SAMPLE_RATIO", "1.5"), ("CHORUS_OTEL_SAMPLE_RATIO", "nan"), ("CHORUS_OTEL_SAMPLE_RATIO", "-0.1"),
            ("CHORUS_OTEL_SERVICE_NAME", String(repeating: "x", count: 256)),
        ] {
            #expect(throws: ConfigurationError.self, "\(key)=\(value)") { try ChorusConfiguration.load(from: [key: value]) }
        }
        // The standard variables swift-otel reads: gRPC (not built in, and fatal inside swift-otel) is refused before
        // the exporter is made; HTTP is fine, and without an endpoint nothing is read.
        let logger = Logger(label: "test")
        for key in ["OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"] {
            #expect(throws: ConfigurationError.self) { try ChorusTracing.make(on.tracing, logger: logger, environment: [key: " GRPC "]) }
            #expect(ChorusTracing.unsupportedOverrides(in: [key: "http/json"]).isEmpty)
        }
        #expect(try !ChorusTracing.make(.off, logger: logger, environment: ["OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"]).isExporting)
    }

    static func randomHex(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 1...255, using: &generator)) }.joined()
    }
}

/// An OTLP/HTTP collector on a loopback port: accepts `POST /v1/traces` and decodes the protobuf requests' spans.
final class OTLPCollector: Sendable {
    enum Kind: Int, Sendable {
        case unspecified = 0, `internal`, server, client, producer, consumer
    }

    struct Span: Sendable {
        var traceID = ""
        var spanID = ""
        var parentSpanID: String?
        var name = ""
        var kind = Kind.unspecified
        var attributes: [String: String] = [:]
        var statusCode = 0
        var resource: [String: String] = [:]
    }

    let port: Int
    private let app: Application
    private let state: NIOLockedValueBox<State>

    private struct State {
        var spans: [Span] = []
        var contentTypes: [String] = []
        var jsonBodies: [String] = []
        var requests = 0
    }

    var spans: [Span] { state.withLockedValue { $0.spans } }
    var contentTypes: [String] { state.withLockedValue { $0.contentTypes } }
    var jsonBodies: [String] { state.withLockedValue { $0.jsonBodies } }
    var requests: Int { state.withLockedValue { $0.requests } }

    private init(app: Application, port: Int, state: NIOLockedValueBox<State>) {
        self.app = app
        self.port = port
        self.state = state
    }

    static func start() async throws -> OTLPCollector {
        let app = try await Application.make(.testing)
        app.logger.logLevel = .warning
        let state = NIOLockedValueBox(State())
        app.on(.POST, "v1", "traces", body: .collect(maxSize: "16mb")) { request -> Response in
            let contentType = request.headers.first(name: .contentType) ?? ""
            let body = request.body.data.map { Array($0.readableBytesView) } ?? []
            if contentType == "application/json" {
                state.withLockedValue {
                    $0.requests += 1
                    $0.contentTypes.append(contentType)
                    $0.jsonBodies.append(String(decoding: body, as: UTF8.self))
                }
                let response = Response(status: .ok, body: .init(string: "{}"))
                response.headers.replaceOrAdd(name: .contentType, value: "application/json")
                return response
            }
            let spans = try OTLPDecoding.spans(ofExportRequest: body[...])
            state.withLockedValue {
                $0.requests += 1
                $0.contentTypes.append(contentType)
                $0.spans += spans
            }
            // An empty ExportTraceServiceResponse: full success.
            let response = Response(status: .ok)
            response.headers.replaceOrAdd(name: .contentType, value: "application/x-protobuf")
            return response
        }
        do {
            try await app.asyncBoot()
            try await app.server.start(address: .hostname("127.0.0.1", port: 0))
        } catch {
            try? await app.asyncShutdown()
            throw error
        }
        guard let port = app.http.server.shared.localAddress?.port else {
            try? await app.asyncShutdown()
            throw TestSetupError(message: "the collector has no port")
        }
        return OTLPCollector(app: app, port: port, state: state)
    }

    func stop() async {
        await app.server.shutdown()
        try? await app.asyncShutdown()
    }
}

/// Just enough of the protobuf wire format to read an `ExportTraceServiceRequest` (opentelemetry-proto, trace v1).
enum OTLPDecoding {
    enum Field {
        case varint(UInt64)
        case fixed64(UInt64)
        case bytes(ArraySlice<UInt8>)
        case fixed32(UInt32)

        var bytes: ArraySlice<UInt8> {
            if case .bytes(let value) = self { return value }
            return []
        }
        var integer: UInt64 {
            switch self {
            case .varint(let value), .fixed64(let value): value
            case .fixed32(let value): UInt64(value)
            case .bytes: 0
            }
        }
        var string: String { String(decoding: bytes, as: UTF8.self) }
        var hex: String { bytes.map { String(format: "%02x", $0) }.joined() }
    }

    struct Malformed: Error {}

    /// The fields of one message, in order.
    static func fields(_ message: ArraySlice<UInt8>) throws -> [(number: Int, value: Field)] {
        var index = message.startIndex
        func varint() throws -> UInt64 {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard index < message.endIndex, shift < 64 else { throw Malformed() }
                let byte = message[index]
                index += 1
                result |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return result }
                shift += 7
            }
        }
        func take(_ count: Int) throws -> ArraySlice<UInt8> {
            guard count >= 0, message.endIndex - index >= count else { throw Malformed() }
            defer { index += count }
            return message[index..<(index + count)]
        }
        var fields: [(number: Int, value: Field)] = []
        while index < message.endIndex {
            let key = try varint()
            guard let number = Int(exactly: key >> 3) else { throw Malformed() }
            switch key & 7 {
            case 0: fields.append((number, .varint(try varint())))
            case 1: fields.append((number, .fixed64(try take(8).reversed().reduce(0) { $0 << 8 | UInt64($1) })))
            case 2:
                guard let length = Int(exactly: try varint()) else { throw Malformed() }
                fields.append((number, .bytes(try take(length))))
            case 5: fields.append((number, .fixed32(try take(4).reversed().reduce(0) { $0 << 8 | UInt32($1) })))
            default: throw Malformed()
            }
        }
        return fields
    }

    /// ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1 }.
    static func spans(ofExportRequest body: ArraySlice<UInt8>) throws -> [OTLPCollector.Span] {
        var spans: [OTLPCollector.Span] = []
        for resourceSpans in try fields(body) where resourceSpans.number == 1 {
            // ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2 }
            let parts = try fields(resourceSpans.value.bytes)
            var resource: [String: String] = [:]
            for part in parts where part.number == 1 {
                for attribute in try fields(part.value.bytes) where attribute.number == 1 {
                    let (key, value) = try keyValue(attribute.value.bytes)
                    resource[key] = value
                }
            }
            for scopeSpans in parts where scopeSpans.number == 2 {
                // ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2 }
                for spanField in try fields(scopeSpans.value.bytes) where spanField.number == 2 {
                    var span = try self.span(spanField.value.bytes)
                    span.resource = resource
                    spans.append(span)
                }
            }
        }
        return spans
    }

    /// Span { trace_id = 1; span_id = 2; parent_span_id = 4; name = 5; kind = 6; attributes = 9; status = 15 }.
    static func span(_ message: ArraySlice<UInt8>) throws -> OTLPCollector.Span {
        var span = OTLPCollector.Span()
        for field in try fields(message) {
            switch field.number {
            case 1: span.traceID = field.value.hex
            case 2: span.spanID = field.value.hex
            case 4: span.parentSpanID = field.value.bytes.isEmpty ? nil : field.value.hex
            case 5: span.name = field.value.string
            case 6: span.kind = OTLPCollector.Kind(rawValue: Int(truncatingIfNeeded: field.value.integer)) ?? .unspecified
            case 9:
                let (key, value) = try keyValue(field.value.bytes)
                span.attributes[key] = value
            case 15:
                // Status { string message = 2; StatusCode code = 3 }
                for part in try fields(field.value.bytes) where part.number == 3 {
                    span.statusCode = Int(truncatingIfNeeded: part.value.integer)
                }
            default: break
            }
        }
        return span
    }

    /// KeyValue { string key = 1; AnyValue value = 2 }, the value as text (strings, booleans, integers, doubles).
    static func keyValue(_ message: ArraySlice<UInt8>) throws -> (String, String) {
        var key = ""
        var text = ""
        for field in try fields(message) {
            if field.number == 1 { key = field.value.string }
            if field.number == 2 {
                for value in try fields(field.value.bytes) {
                    switch value.number {
                    case 1: text = value.value.string
                    case 2: text = value.value.integer == 0 ? "false" : "true"
                    case 3: text = String(Int64(bitPattern: value.value.integer))
                    case 4: text = String(Double(bitPattern: value.value.integer))
                    default: break
                    }
                }
            }
        }
        return (key, text)
    }
}
