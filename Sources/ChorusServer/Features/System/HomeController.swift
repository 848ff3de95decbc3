import ChorusAPI
import Crypto
import Foundation
import Vapor

/// `GET /` outside production: a small page saying what this server is (Chorus, its version and environment, which
/// providers are the sandbox's) with links to the playground, the console, the contract and the documentation. In
/// production the route does not exist (404, as before). And `GET /favicon.ico` / `GET /favicon.svg` everywhere: the
/// icon every HTML page links (`Resources/web/favicon.*`), cached for a day and revalidated with an `ETag`.
struct HomeController: RouteCollection {
    /// One icon file, loaded once at start-up.
    struct Icon: Sendable {
        let body: ByteBuffer
        let contentType: String
        let etag: String
    }

    let services: ChorusServices
    let ico: Icon
    let svg: Icon

    init(services: ChorusServices) throws {
        self.services = services
        ico = try Self.icon("favicon.ico", type: "image/x-icon")
        svg = try Self.icon("favicon.svg", type: "image/svg+xml")
    }

    func boot(routes: any RoutesBuilder) throws {
        routes.on(API.Operations.favicon) { req in Self.serve(ico, req) }
        routes.on(API.Operations.faviconSVG) { req in Self.serve(svg, req) }
        if !services.configuration.isProduction {
            routes.on(API.Operations.home, use: home)
        }
    }

    @Sendable
    func home(_ req: Request) async throws -> Response {
        ConsoleController.html(
            Self.page(
                version: SystemController.version, environment: services.configuration.environment.rawValue,
                providers: services.providerNames, playground: services.configuration.playgroundEnabled))
    }

    /// The page: `providers` is `/health`'s role → provider map (`"sandbox"` for an emulator).
    static func page(version: String, environment: String, providers: [String: String], playground: Bool) -> String {
        let e = ConsolePages.escape
        let note = Self.sandboxNote(providers: providers, id: "sandbox-note")
        let providerRows = providers.sorted { $0.key < $1.key }.map { "<dt>\(e($0.key))</dt><dd>\(e($0.value))</dd>" }.joined()
        let playgroundItem =
            playground
            ? """
            <li><a href="/playground" id="link-playground">The playground</a>: sign up, place a call and watch it live, \
            send a voice message, make a bedtime story, all in the browser.</li>
            """ : ""
        let docs = [
            ("README.md", "start here: running the server, walkthroughs with curl"),
            ("docs/configuration.md", "every setting"),
            ("docs/operations.md", "running it in production"),
            ("docs/voice-messages.md", "the voice-messaging API"),
            ("docs/decisions.md", "why things are as they are"),
        ].map { "<li><code>\($0.0)</code>: \($0.1)</li>" }.joined()
        return ConsolePages.page(
            title: "Home",
            body: """
                <header><h1>Chorus</h1><span class="muted" id="server-facts">version \(e(version)) · \(e(environment))</span></header>
                <main class="narrow home">
                <section aria-labelledby="what-h">
                <h2 id="what-h">What this server is</h2>
                <p>Chorus is the backend of three voice-AI iPhone apps: <strong>AI phone calls</strong> with personas, \
                family <strong>voice messages</strong>, and narrated, illustrated <strong>bedtime stories</strong>. \
                The apps talk to it over the HTTP API below; this page is only shown outside production.</p>
                \(note)
                <h2 id="try-h">Try it</h2>
                <ul id="links">
                \(playgroundItem)
                <li><a href="/console" id="link-console">The operator console</a>: for admin accounts \
                (<code>chorus admin grant EMAIL</code>).</li>
                <li><a href="/openapi.json" id="link-openapi">/openapi.json</a>: the HTTP API's contract (OpenAPI 3.1).</li>
                <li><a href="/health" id="link-health">/health</a>: the server's state and providers.</li>
                </ul>
                <h2 id="docs-h">Documentation</h2>
                <p>In the repository this server was built from:</p>
                <ul id="docs">\(docs)</ul>
                <h2 id="providers-h">Providers</h2>
                <dl id="providers">\(providerRows)</dl>
                </section>
                </main>
                """,
            product: environment)
    }

    /// Whether the outside services among `providers` (role → provider, `"sandbox"` for an emulator) are the
    /// sandbox's, as one paragraph: all of them (no real calls, money or AI requests), none, or which ones. Storage
    /// (local files or S3) is the server's own and is left out. The home page and the playground show it.
    static func sandboxNote(providers: [String: String], id: String) -> String {
        let e = ConsolePages.escape
        let services = providers.filter { $0.key != "storage" }
        let sandboxed = services.filter { $0.value == "sandbox" }.keys.sorted()
        let real = services.filter { $0.value != "sandbox" }.sorted { $0.key < $1.key }
        if real.isEmpty {
            return """
                <p class="good" id="\(id)"><strong>Everything runs against the built-in sandbox:</strong> no real phone calls, \
                no real money, no real OpenAI, Twilio or ElevenLabs. Emulators of those services answer instead.</p>
                """
        }
        if sandboxed.isEmpty {
            return """
                <p class="warn" id="\(id)"><strong>Real providers:</strong> calls, payments and AI requests here are real and \
                may cost money.</p>
                """
        }
        return """
            <p class="warn" id="\(id)"><strong>Partly real:</strong> \(e(sandboxed.joined(separator: ", "))) \
            \(sandboxed.count == 1 ? "runs" : "run") against the sandbox; \
            \(e(real.map { "\($0.key) uses \($0.value)" }.joined(separator: ", "))), which may cost money.</p>
            """
    }

    /// The icon: 304 when `If-None-Match` matches, otherwise the file, cached for a day.
    static func serve(_ icon: Icon, _ req: Request) -> Response {
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .eTag, value: icon.etag)
        headers.replaceOrAdd(name: .cacheControl, value: "public, max-age=86400")
        if req.headers.first(name: .ifNoneMatch) == icon.etag { return Response(status: .notModified, headers: headers) }
        headers.replaceOrAdd(name: .contentType, value: icon.contentType)
        return Response(status: .ok, headers: headers, body: .init(buffer: icon.body))
    }

    private static func icon(_ name: String, type: String) throws -> Icon {
        guard let url = Bundle.module.url(forResource: "web", withExtension: nil)?.appendingPathComponent(name) else {
            throw Abort(.internalServerError, reason: "the web assets are missing from the bundle")
        }
        let data = try Data(contentsOf: url)
        let digest = SHA256.hash(data: data).prefix(8).map { String(format: "%02x", $0) }.joined()
        return Icon(body: ByteBuffer(data: data), contentType: type, etag: "\"\(digest)\"")
    }
}
