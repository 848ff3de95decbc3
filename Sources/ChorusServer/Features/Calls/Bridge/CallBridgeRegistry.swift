import ChorusCore
import ChorusProviders
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// Realtime sessions opened while calls ring, and the bridges in progress in this instance.
///
/// `prepare` opens the OpenAI session right after the call is placed so the AI can speak as soon as the callee
/// answers; the stream's bridge `take`s it. If the call is not answered (or its stream lands on another instance),
/// the session is closed when the call ends or after `expiry`. Nothing here outlives `shutdown()`.
final class CallBridgeRegistry: Sendable {
    private struct Prepared {
        let opening: Task<RealtimeSession?, Never>
        let expiry: Task<Void, Never>
    }

    private struct State {
        var prepared: [Int: Prepared] = [:]
        var bridges: [ObjectIdentifier: MediaStreamBridge] = [:]
        /// Bridges whose stream was accepted, by call id (where answering-machine detection reports go).
        var byCall: [Int: MediaStreamBridge] = [:]
        /// Calls that ended recently: a session prepared after its call's final callback (a fast busy) is not opened.
        var ended: [Int: ContinuousClock.Instant] = [:]
        /// Calls whose bridge here ended in the last minutes (a draining instance waits for their final status).
        var bridgeEnded: [Int: ContinuousClock.Instant] = [:]
        var shutDown = false
    }

    private let state = NIOLockedValueBox(State())
    private let connector: any RealtimeConnector
    private let eventLoopGroup: any EventLoopGroup
    let metrics: BridgeMetrics
    private let expiry: Duration
    private let logger: Logger
    /// Told about every realtime connection and session (the console's provider health).
    let observer: (any ProviderCallObserver)?

    init(
        connector: any RealtimeConnector, eventLoopGroup: any EventLoopGroup, metrics: BridgeMetrics, expiry: Duration,
        observer: (any ProviderCallObserver)?, logger: Logger
    ) {
        self.observer = observer
        self.connector = connector
        self.eventLoopGroup = eventLoopGroup
        self.metrics = metrics
        self.expiry = expiry
        self.logger = logger
    }

    /// Opens a session for `callID` in the background.
    func prepare(callID: Int, session: RealtimeSessionConfiguration) {
        guard !state.withLockedValue({ $0.ended[callID] != nil || $0.shutDown }) else { return }
        let connector = connector
        let eventLoop = eventLoopGroup.next()
        let logger = logger
        let observer = observer
        let opening = Task<RealtimeSession?, Never> {
            do {
                return try await RealtimeSession.open(connector: connector, session: session, on: eventLoop, observer: observer)
            } catch {
                logger.warning("could not open the realtime session ahead of the answer", metadata: ["call_id": .stringConvertible(callID)])
                return nil
            }
        }
        let expiry = expiry
        let timer = Task { [weak self] in
            try? await Task.sleep(for: expiry)
            guard !Task.isCancelled else { return }
            self?.discard(callID: callID)
        }
        let added = state.withLockedValue { state -> Bool in
            guard !state.shutDown, state.prepared[callID] == nil, state.ended[callID] == nil else { return false }
            state.prepared[callID] = Prepared(opening: opening, expiry: timer)
            return true
        }
        if added {
            metrics.preparedSessionsChanged(by: 1)
        } else {
            timer.cancel()
            Task { await opening.value?.close() }
        }
    }

    /// The session prepared for `callID`, if any (and still open).
    func take(callID: Int) async -> RealtimeSession? {
        guard let prepared = state.withLockedValue({ $0.prepared.removeValue(forKey: callID) }) else { return nil }
        metrics.preparedSessionsChanged(by: -1)
        prepared.expiry.cancel()
        guard let session = await prepared.opening.value else { return nil }
        guard !session.isClosed else { return nil }
        return session
    }

    /// Closes the session prepared for `callID` (the call ended without a stream here).
    func discard(callID: Int) {
        let now = ContinuousClock.now
        let prepared = state.withLockedValue { state -> Prepared? in
            state.ended[callID] = now
            state.bridgeEnded[callID] = nil
            if state.ended.count > 1_000 { state.ended = state.ended.filter { now - $0.value < .seconds(300) } }
            return state.prepared.removeValue(forKey: callID)
        }
        guard let prepared else { return }
        metrics.preparedSessionsChanged(by: -1)
        prepared.expiry.cancel()
        Task { await prepared.opening.value?.close() }
    }

    func register(_ bridge: MediaStreamBridge) -> Bool {
        state.withLockedValue { state in
            guard !state.shutDown else { return false }
            state.bridges[ObjectIdentifier(bridge)] = bridge
            return true
        }
    }

    func unregister(_ bridge: MediaStreamBridge) {
        let now = ContinuousClock.now
        state.withLockedValue { state in
            state.bridges.removeValue(forKey: ObjectIdentifier(bridge))
            if let id = state.byCall.first(where: { $0.value === bridge })?.key {
                state.byCall[id] = nil
                state.bridgeEnded = state.bridgeEnded.filter { now - $0.value < .seconds(300) }
                state.bridgeEnded[id] = now
            }
        }
    }

    /// What a draining instance waits for: the bridges open, the calls placed here still ringing (their sessions
    /// prepared), and the calls whose bridge ended here in the last five minutes without their final status arriving
    /// here (``discard(callID:)`` or ``finalStatusStored(callID:)`` forgets them).
    func drainSnapshot() -> (bridges: Int, prepared: [Int], recentlyEnded: [Int]) {
        state.withLockedValue { state in
            (state.bridges.count, Array(state.prepared.keys), Array(state.bridgeEnded.keys))
        }
    }

    /// The call's final status is stored (another instance received it): a drain no longer waits for it.
    func finalStatusStored(callID: Int) {
        state.withLockedValue { _ = $0.bridgeEnded.removeValue(forKey: callID) }
    }

    /// Notes that `bridge` carries the call `callID` (its stream was accepted).
    func attach(_ bridge: MediaStreamBridge, callID: Int) {
        state.withLockedValue { state in
            guard state.bridges[ObjectIdentifier(bridge)] != nil else { return }
            state.byCall[callID] = bridge
        }
    }

    /// Hands a detection report to the call's bridge on this instance; `false` when it is not here.
    func machineDetected(callID: Int, answeredBy: AnsweredBy) -> Bool {
        guard let bridge = state.withLockedValue({ $0.byCall[callID] }) else { return false }
        return bridge.machineDetected(answeredBy)
    }

    /// Ends every bridge and closes every prepared session (server shutdown).
    func shutdown() async {
        let (prepared, bridges) = state.withLockedValue { state -> ([Prepared], [MediaStreamBridge]) in
            state.shutDown = true
            defer {
                state.prepared = [:]
                state.bridges = [:]
                state.byCall = [:]
            }
            return (Array(state.prepared.values), Array(state.bridges.values))
        }
        for bridge in bridges { bridge.shutdown() }
        for item in prepared {
            item.expiry.cancel()
            await item.opening.value?.close()
        }
    }
}
