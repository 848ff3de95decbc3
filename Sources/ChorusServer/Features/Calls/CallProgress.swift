import ChorusAPI
import ChorusCore
import Foundation
import Vapor

extension ChorusServices {
    /// The hub key of the console's live view: every call's progress is delivered there too.
    static let consoleCallsChannel = "console:calls"

    /// Announces a change in a call to its owner's realtime connections and event streams and to the console's live
    /// view, on every instance.
    func publishCallProgress(_ progress: CallProgressDTO, userID: String) async {
        await messaging.fanout.publish(RealtimeEventDTO(type: "call.progress", call: progress), to: [userID, Self.consoleCallsChannel])
    }

    /// Announces the call's current status (read again, so it carries every change saved so far).
    func publishCallStatus(callID: Int, store: ChorusStore) async {
        guard let call = try? await store.calls.call(id: callID), let item = call.historyItem else { return }
        await publishCallProgress(
            CallProgressDTO(type: "status", callSid: item.callSid, call: item, answeredAt: call.answeredAt, endedAt: call.endedAt),
            userID: call.userID)
    }
}

extension CallRecord {
    /// Whether everything about the call is saved: its final status, and the media bridge's transcript and figures
    /// when it was streamed.
    var isSettled: Bool { status.isTerminal && (streamStartedAt == nil || bridgeReason != nil) }
}

extension CallsController {
    /// `GET /mobile/calls/{call_sid}/events`: server-sent events of one of the caller's calls. First `snapshot` (the
    /// call's detail), then `status` and `transcript` events as they happen, and finally `done` (the detail with the
    /// saved transcript and figures), after which the stream ends. A comment line every 15 s keeps proxies from
    /// closing the stream.
    @Sendable
    func events(_ req: Request) async throws -> Response {
        let user = try req.user
        let (stream, loaded) = try await HubEventStream.listening(hub: services.messaging.hub, key: user.id) {
            () async throws -> (CallRecord, CallDetailResponse) in
            guard let sid = req.parameters.get("call_sid"), let found = try await req.store.calls.call(sid: sid, userID: user.id),
                let detail = try await Self.detail(found, store: req.store)
            else { throw APIError.notFound("Call not found") }
            return (found, detail)
        }
        let (call, snapshot) = loaded
        let store = try req.store
        let sid = snapshot.call.callSid
        return stream.response { sse in
            try await sse.send("snapshot", CallProgressDTO(type: "snapshot", callSid: sid, detail: snapshot))
            /// Sends `done` when the call is settled; a call that ended without its bridge reporting (another instance
            /// crashed) is declared done 10 s after its final status.
            func finishIfSettled(_ current: CallRecord, force: Bool = false) async throws -> Bool {
                guard current.isSettled || (force && current.status.isTerminal), let detail = try await Self.detail(current, store: store)
                else {
                    if current.status.isTerminal { stream.wake(after: .seconds(10)) }
                    return false
                }
                try await sse.send("done", CallProgressDTO(type: "done", callSid: sid, detail: detail))
                return true
            }
            if try await finishIfSettled(call) { return }
            let decoder = ChorusJSON.makeDecoder()
            for await text in stream.events {
                if text.isEmpty {
                    try await sse.keepAlive()
                    continue
                }
                if text == HubEventStream.recheck {
                    if let current = try await store.calls.call(id: call.id), try await finishIfSettled(current, force: true) { return }
                    continue
                }
                guard let event = try? decoder.decode(RealtimeEventDTO.self, from: Data(text.utf8)), let progress = event.call,
                    progress.callSid == sid
                else { continue }
                try await sse.send(progress.type, progress)
                if progress.type == "status", let current = try await store.calls.call(id: call.id), try await finishIfSettled(current) { return }
            }
        }
    }
}
