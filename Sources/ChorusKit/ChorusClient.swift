// The DTOs the clients return are part of this SDK's API: `import ChorusKit` is enough to use them.
@_exported import ChorusAPI
import Foundation

/// The entry point of the Chorus SDK: one per app, shared freely between tasks.
///
/// ```swift
/// let chorus = ChorusClient(environment: .production(url), tokenStore: FileTokenStore(fileURL: sessionFile))
/// try await chorus.auth.login(email: email, password: password)
/// let usage = try await chorus.calls.usageStats()
/// let call = try await chorus.calls.makeCall(to: "+14155550123", scenario: "default")
/// ```
///
/// Authentication is handled for you: every request carries the stored access token (and `X-App-Type: mobile`);
/// when the server refuses it, the session is refreshed once — a single refresh shared by all requests refused at
/// the same time — and the request replayed. If the server ends the session, the token store is cleared and the
/// call throws ``ChorusError/signedOut``: show the sign-in screen.
///
/// Every method throws ``ChorusError`` (or `CancellationError` when its task is cancelled, or the token store's
/// own error when it cannot be read or written).
public final class ChorusClient: Sendable {
    /// The server this client talks to.
    public let environment: ChorusEnvironment
    /// Register, sign in, refresh and sign out.
    public let auth: AuthClient
    /// Usage, plans, the catalog, placing and scheduling calls, the call history and custom scenarios.
    public let calls: CallsClient
    /// Spoken samples of the AI voices (no sign-in needed).
    public let voices: VoicesClient
    /// App Store purchases and the subscription status.
    public let purchases: PurchasesClient
    /// Voice messages: the user's conversations and their members.
    public let conversations: ConversationsClient
    /// Voice messages: reading, sending, editing and searching messages.
    public let messages: MessagesClient
    /// Voice messages: recordings, transcripts, the messaging profile and realtime events.
    public let voice: VoiceClient
    /// The account across products: what its AI work consumed and cost.
    public let account: AccountClient
    /// Story heroes and their avatars.
    public let heroes: HeroesClient
    /// Bedtime stories: events, the assistant, stories and their progress.
    public let stories: StoriesClient
    /// Content reports about scenarios and calls.
    public let reports: ReportsClient

    /// Creates a client of the server `environment`. Create one per app and share it.
    ///
    /// - Parameters:
    ///   - environment: the server.
    ///   - tokenStore: where the session is kept; the default forgets it when the process ends.
    ///   - transport: how requests are sent; the default uses `URLSession.shared`.
    ///   - options: timeouts and retries.
    public init(
        environment: ChorusEnvironment,
        tokenStore: any TokenStore = InMemoryTokenStore(),
        transport: any HTTPTransport = URLSessionTransport(),
        options: ChorusClientOptions = ChorusClientOptions()
    ) {
        self.environment = environment
        let session = APISession(baseURL: environment.baseURL, tokenStore: tokenStore, transport: transport, options: options)
        self.auth = AuthClient(session: session)
        self.calls = CallsClient(session: session)
        self.voices = VoicesClient(session: session)
        self.purchases = PurchasesClient(session: session)
        self.conversations = ConversationsClient(session: session)
        self.messages = MessagesClient(session: session)
        self.voice = VoiceClient(session: session)
        self.account = AccountClient(session: session)
        self.heroes = HeroesClient(session: session)
        self.stories = StoriesClient(session: session)
        self.reports = ReportsClient(session: session)
    }

    /// Creates a client of the server at `baseURL` (the same as `environment: .custom(baseURL)`).
    ///
    /// - Parameters:
    ///   - baseURL: the URL every API path is appended to.
    ///   - tokenStore: where the session is kept; the default forgets it when the process ends.
    ///   - transport: how requests are sent; the default uses `URLSession.shared`.
    ///   - options: timeouts and retries.
    public convenience init(
        baseURL: URL,
        tokenStore: any TokenStore = InMemoryTokenStore(),
        transport: any HTTPTransport = URLSessionTransport(),
        options: ChorusClientOptions = ChorusClientOptions()
    ) {
        self.init(environment: .custom(baseURL), tokenStore: tokenStore, transport: transport, options: options)
    }
}
