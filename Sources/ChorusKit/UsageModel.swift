import Foundation

#if canImport(Observation)
import Observation
#endif
#if canImport(Combine)
import Combine
#endif

// Two front ends share one state and one loader:
// - `UsageModel`, `@Observable`, wherever the Observation module exists: iOS 17+/macOS 14+, and Linux (the Swift 5.9+
//   toolchains ship Observation there too, so the model builds and is tested on Linux; without SwiftUI nothing observes
//   it, and it is simply a main-actor class).
// - `UsageObservableObject`, an `ObservableObject` for SwiftUI on iOS 16/macOS 13, wherever Combine exists (Apple only).
// A platform with neither gets neither; the rest of ChorusKit does not depend on them.

/// What a call screen shows, and how it is derived from the last answers. Internal: the models expose it as properties.
struct UsageModelState: Sendable {
    var usage: Usage?
    var permission: CallPermission?
    var isLoading = false
    var error: (any Error)?

    var callsRemaining: Int { permission?.callsRemaining ?? 0 }
    var canMakeCall: Bool { permission?.canMakeCall ?? false }
    var upgradeOptions: [UpgradeOffer] { permission?.upgradeOptions ?? [] }
    var isUpgradeRecommended: Bool {
        guard let permission else { return usage?.upgradeRecommended ?? false }
        return !permission.canMakeCall || (usage?.upgradeRecommended ?? false)
    }

    /// Loads usage and permission together (two requests in parallel).
    static func load(_ calls: CallsClient) async -> Result<(Usage, CallPermission), any Error> {
        do {
            async let usage = calls.usageStats()
            async let permission = calls.callPermission()
            return .success(try await (usage, permission))
        } catch {
            return .failure(error)
        }
    }

    mutating func apply(_ result: Result<(Usage, CallPermission), any Error>) {
        isLoading = false
        switch result {
        case .success(let (usage, permission)):
            self.usage = usage
            self.permission = permission
            error = nil
        case .failure(let failure):
            error = failure
        }
    }

    /// Whether a refused call should refresh the screen: a 402 changes what the user can do and buy.
    static func isRefusal(_ error: any Error) -> Bool {
        if case .paymentRequired = error as? ChorusError { return true }
        return false
    }
}

#if canImport(Observation)
/// The user's allowance for a SwiftUI call screen: usage, whether a call may be placed now, how many are left, and
/// what to offer when the allowance is used up. `@Observable`: views that read a property update when it changes.
///
/// ```swift
/// @State private var usage = UsageModel(client: chorus)
///
/// var body: some View {
///     Text("\(usage.callsRemaining) calls left")
///         .task { await usage.refresh() }
/// }
/// ```
///
/// Available where the Observation module is (iOS 17+, macOS 14+, and Linux, where nothing observes it but it works
/// the same). On iOS 16 and macOS 13 use ``UsageObservableObject``.
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
@MainActor
@Observable
public final class UsageModel {
    @ObservationIgnored private let calls: CallsClient
    private var state = UsageModelState()

    /// A model that loads nothing until ``refresh()``.
    ///
    /// - Parameter client: the app's client; the user must be signed in before ``refresh()``.
    public init(client: ChorusClient) {
        calls = client.calls
    }

    /// The plan, trial and usage counters, once loaded.
    public var usage: Usage? { state.usage }
    /// Whether a call may be placed now and why, once loaded.
    public var permission: CallPermission? { state.permission }
    /// Whether a refresh is under way.
    public var isLoading: Bool { state.isLoading }
    /// The error of the last refresh, `nil` after a successful one (a ``ChorusError`` as a rule: show its
    /// `localizedDescription`; ``ChorusError/signedOut`` means show the sign-in screen).
    public var error: (any Error)? { state.error }
    /// Calls the user can place now (plan or trial, plus add-on calls); 0 until loaded or when refused.
    public var callsRemaining: Int { state.callsRemaining }
    /// Whether to enable the call button: `false` until loaded and when the allowance is used up.
    public var canMakeCall: Bool { state.canMakeCall }
    /// What to offer when calls are refused (plans for an exhausted trial, Premium or a pack at the weekly limit,
    /// a pack at the monthly limit); empty while calls are allowed.
    public var upgradeOptions: [UpgradeOffer] { state.upgradeOptions }
    /// Whether to show an upgrade prompt: calls are refused, or the trial is nearly over.
    public var isUpgradeRecommended: Bool { state.isUpgradeRecommended }

    /// Reloads usage and permission. Never throws: a failure is kept in ``error`` and the last values stay.
    public func refresh() async {
        state.isLoading = true
        let result = await UsageModelState.load(calls)
        state.apply(result)
    }

    /// Places a call (see ``CallsClient/makeCall(to:scenario:idempotencyKey:)``), then refreshes the model; a
    /// refusal (``ChorusError/paymentRequired(_:)``) refreshes it too, so ``upgradeOptions`` fills in, and is rethrown.
    @discardableResult
    public func makeCall(to phoneNumber: String, scenario: String = "default", idempotencyKey: UUID = UUID()) async throws -> PlacedCall {
        do {
            let call = try await calls.makeCall(to: phoneNumber, scenario: scenario, idempotencyKey: idempotencyKey)
            await refresh()
            return call
        } catch {
            if UsageModelState.isRefusal(error) { await refresh() }
            throw error
        }
    }
}
#endif

#if canImport(Combine)
/// ``UsageModel`` as an `ObservableObject`, for SwiftUI on iOS 16 and macOS 13 (use it with `@StateObject`).
/// Same properties and methods; available on Apple platforms only.
@MainActor
public final class UsageObservableObject: ObservableObject {
    private let calls: CallsClient
    @Published private var state = UsageModelState()

    /// A model that loads nothing until ``refresh()``.
    ///
    /// - Parameter client: the app's client; the user must be signed in before ``refresh()``.
    public init(client: ChorusClient) {
        calls = client.calls
    }

    /// The plan, trial and usage counters, once loaded.
    public var usage: Usage? { state.usage }
    /// Whether a call may be placed now and why, once loaded.
    public var permission: CallPermission? { state.permission }
    /// Whether a refresh is under way.
    public var isLoading: Bool { state.isLoading }
    /// The error of the last refresh, `nil` after a successful one.
    public var error: (any Error)? { state.error }
    /// Calls the user can place now; 0 until loaded or when refused.
    public var callsRemaining: Int { state.callsRemaining }
    /// Whether to enable the call button.
    public var canMakeCall: Bool { state.canMakeCall }
    /// What to offer when calls are refused; empty while calls are allowed.
    public var upgradeOptions: [UpgradeOffer] { state.upgradeOptions }
    /// Whether to show an upgrade prompt: calls are refused, or the trial is nearly over.
    public var isUpgradeRecommended: Bool { state.isUpgradeRecommended }

    /// Reloads usage and permission. Never throws: a failure is kept in ``error`` and the last values stay.
    public func refresh() async {
        state.isLoading = true
        let result = await UsageModelState.load(calls)
        state.apply(result)
    }

    /// Places a call, then refreshes; a refusal refreshes too and is rethrown.
    @discardableResult
    public func makeCall(to phoneNumber: String, scenario: String = "default", idempotencyKey: UUID = UUID()) async throws -> PlacedCall {
        do {
            let call = try await calls.makeCall(to: phoneNumber, scenario: scenario, idempotencyKey: idempotencyKey)
            await refresh()
            return call
        } catch {
            if UsageModelState.isRefusal(error) { await refresh() }
            throw error
        }
    }
}
#endif
