import ChorusAPI
import ChorusCore
import ChorusProviders
import Foundation
import Vapor

/// Twilio's status callback. Every request must carry a valid `X-Twilio-Signature` computed over `CHORUS_PUBLIC_URL`
/// + path + query and the form parameters (``verifiedForm(_:)``, shared with the TwiML route).
struct TwilioWebhookController: RouteCollection {
    let services: ChorusServices

    func boot(routes: any RoutesBuilder) throws {
        routes.on(API.Calls.statusCallback, use: statusCallback)
        routes.on(API.Calls.machineDetection, use: machineDetection)
    }

    /// Twilio's asynchronous answering-machine detection: `AnsweredBy` is `human`, `unknown`, `fax` or
    /// `machine_end_beep|silence|other`. The call's bridge on this instance applies it (releases the AI's first words,
    /// hangs up on a machine or leaves the scenario's message). When the stream is bridged elsewhere, a machine or fax
    /// is hung up on from here and the call settled as `voicemail`/`fax`, without a charge. Answers 204.
    @Sendable
    func machineDetection(_ req: Request) async throws {
        let form = try verifiedForm(req)
        guard let sid = form["CallSid"], !sid.isEmpty else { throw APIError.invalid("CallSid", "Field required") }
        guard let text = form["AnsweredBy"], !text.isEmpty else { throw APIError.invalid("AnsweredBy", "Field required") }
        // A value Twilio adds later is treated as undecided: the call goes on.
        let answeredBy = AnsweredBy(rawValue: text) ?? .unknown
        let store = try req.store
        guard let callID = try req.query.get(Int?.self, at: "call_id"), let call = try await store.calls.call(id: callID),
            call.callSid == nil || call.callSid == sid
        else { throw APIError.notFound("Unknown call") }
        let handled = services.bridges.machineDetected(callID: call.id, answeredBy: answeredBy)
        var settled = false
        if !handled, !call.status.isTerminal, answeredBy == .fax || answeredBy.isMachineEnd {
            let reason: EndedReason = answeredBy == .fax ? .fax : .voicemail
            try await store.callBridge.recordBridgeOutcome(
                callID: call.id,
                outcome: BridgeOutcome(
                    reason: reason, firstAudioMilliseconds: nil, turnLatencyP50Milliseconds: nil, turnLatencyP90Milliseconds: nil,
                    turns: 0, bargeIns: 0, transcript: []),
                retention: TimeInterval(services.configuration.callBridge.transcriptRetentionDays * 86_400), now: services.now())
            do {
                try await services.telephony.hangUp(callSid: sid)
            } catch {
                req.logger.warning("could not hang up on a machine", metadata: ["call_sid": .string(sid)])
            }
            settled = true
        }
        req.logger.info(
            "answering-machine detection",
            metadata: [
                "call_sid": .string(sid), "answered_by": .string(answeredBy.rawValue), "bridged_here": .stringConvertible(handled),
                "hung_up_here": .stringConvertible(settled),
            ])
    }

    /// Twilio's status callback: records progress, the final status and duration; refunds unanswered calls.
    /// Statuses only move forward, so duplicates and late callbacks change nothing.
    @Sendable
    func statusCallback(_ req: Request) async throws {
        let form = try verifiedForm(req)
        guard let sid = form["CallSid"], !sid.isEmpty else { throw APIError.invalid("CallSid", "Field required") }
        guard let statusText = form["CallStatus"] else { throw APIError.invalid("CallStatus", "Field required") }
        guard let status = CallStatus(known: statusText) else { throw APIError.invalid("CallStatus", "Unknown call status") }
        let callID = try req.query.get(Int?.self, at: "call_id")
        let duration = form["CallDuration"].flatMap { Int($0) }
        let store = try req.store
        let update = try await store.calls.applyCallStatus(
            callID: callID, callSid: sid, status: status, durationSeconds: duration, now: services.now()
        )
        guard let call = update.call else { throw APIError.notFound("Unknown call") }
        services.instruments.callStatusApplied(update)
        // A call that ended without a stream here (unanswered, or streamed by another instance) releases its session.
        if status.isTerminal { services.bridges.discard(callID: call.id) }
        if update.applied { await services.publishCallStatus(callID: call.id, store: store) }
        // What the call cost (issue 18): its minutes, once however often Twilio sends the final status.
        if call.status.isTerminal { await services.callCosts.settle(call, store: store, logger: req.logger) }
        req.logger.info(
            "call status",
            metadata: [
                "call_sid": .string(sid), "status": .string(status.rawValue), "applied": .stringConvertible(update.applied),
                "refunded": .stringConvertible(update.refunded), "duration": .string(duration.map(String.init) ?? "-"),
            ])
    }

    /// The form parameters of a request whose Twilio signature is valid; otherwise 403 and nothing happens.
    func verifiedForm(_ req: Request) throws -> [String: String] {
        let raw = req.body.data.map { String(decoding: $0.readableBytesView, as: UTF8.self) } ?? ""
        let pairs = TwilioFormEncoding.decode(raw)
        var url = services.publicURL(req.url.path).absoluteString
        if let query = req.url.query, !query.isEmpty { url += "?" + query }
        guard services.twilioSignatures.isValid(signature: req.headers.first(name: "X-Twilio-Signature"), url: url, parameters: pairs) else {
            req.logger.warning("rejected Twilio request with a missing or invalid signature", metadata: ["path": .string(req.url.path)])
            throw APIError.detail(.forbidden, "Invalid Twilio signature")
        }
        return Dictionary(pairs, uniquingKeysWith: { first, _ in first })
    }
}
