import ChorusAPI
import ChorusCore
import ChorusProviders
import Foundation
import NIOHTTP1
import NIOWebSocket
import Vapor

/// The live call path Twilio drives once the callee answers:
/// - `POST /twilio/voice?call_id=…` (signed): the call's TwiML, `<Connect><Stream>` to this server's media stream with
///   a one-time call token as a `<Parameter>` and nothing after it, so the call ends when the stream ends;
/// - `GET /media-stream` (a signed WebSocket upgrade): the Media Stream, bridged to the OpenAI Realtime session by
///   ``MediaStreamBridge``.
struct MediaStreamController: RouteCollection {
    let services: ChorusServices

    func boot(routes: any RoutesBuilder) throws {
        routes.on(API.Calls.voice, use: voice)
        routes.on(API.Calls.mediaStream, use: mediaStream)
    }

    /// The stream URL written into TwiML (and signed by Twilio when it connects).
    var streamURL: String {
        var components = URLComponents(url: services.publicURL(API.Calls.mediaStream.path()), resolvingAgainstBaseURL: false)!
        components.scheme = components.scheme == "https" ? "wss" : "ws"
        return components.url!.absoluteString
    }

    @Sendable
    func voice(_ req: Request) async throws -> Response {
        let form = try TwilioWebhookController(services: services).verifiedForm(req)
        let callID = try req.query.get(Int?.self, at: "call_id")
        let token = ChorusApp.randomHex(48)
        var issued = false
        if let callID, let sid = form["CallSid"], !sid.isEmpty {
            issued = try await req.store.callBridge.issueStreamToken(
                callID: callID, callSid: sid, tokenHash: MediaStreamBridge.hash(token), now: services.now())
        }
        let twiml: String
        if issued {
            twiml = """
                <?xml version="1.0" encoding="UTF-8"?>
                <Response><Connect><Stream url="\(Self.xmlEscaped(streamURL))"><Parameter name="token" value="\(token)"/></Stream></Connect></Response>
                """
        } else {
            req.logger.warning("TwiML requested for an unknown or finished call", metadata: ["call_id": .string(callID.map(String.init) ?? "-")])
            twiml = #"<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>"#
        }
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .contentType, value: "text/xml; charset=utf-8")
        headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        return Response(status: .ok, headers: headers, body: .init(string: twiml))
    }

    /// Refuses the upgrade (403) unless Twilio signed it; the call token is checked on the `start` frame.
    @Sendable
    func mediaStream(_ req: Request) async throws -> Response {
        var url = streamURL
        if let query = req.url.query, !query.isEmpty { url += "?" + query }
        guard services.twilioSignatures.isValid(signature: req.headers.first(name: "X-Twilio-Signature"), url: url, parameters: []) else {
            req.logger.warning("rejected a media stream upgrade with a missing or invalid signature")
            throw APIError.detail(.forbidden, "Invalid Twilio signature")
        }
        let services = services
        let store = try req.store
        let logger = req.logger
        let response = Response(status: .switchingProtocols)
        response.upgrader = MediaStreamUpgrader { socket in
            MediaStreamBridge(twilio: socket, services: services, store: store, logger: logger).run()
        }
        return response
    }

    static func xmlEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}

/// Upgrades `/media-stream` to a ``MediaWebSocket`` (Vapor's own upgrader would hand over a WebSocketKit socket).
struct MediaStreamUpgrader: Upgrader {
    /// Twilio's messages are small (a media message is about 300 bytes); anything above 64 KiB is refused.
    static let maxMessageSize = 1 << 16

    let onUpgrade: @Sendable (MediaWebSocket) -> Void

    func applyUpgrade(req: Request, res: Response) -> any HTTPServerProtocolUpgrader {
        NIOWebSocketServerUpgrader(
            maxFrameSize: Self.maxMessageSize, automaticErrorHandling: false,
            shouldUpgrade: { channel, _ in channel.eventLoop.makeSucceededFuture(HTTPHeaders()) },
            upgradePipelineHandler: { channel, _ in
                do {
                    onUpgrade(try MediaWebSocket.install(on: channel, role: .server, maxMessageSize: Self.maxMessageSize))
                    return channel.eventLoop.makeSucceededVoidFuture()
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
            })
    }
}
