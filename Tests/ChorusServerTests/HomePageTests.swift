import ChorusAPI
import Foundation
import Testing
import Vapor

@testable import ChorusServer

@Suite("HomePage")
struct HomePageTests {
    @Test("GET / outside production: what the server is, that it runs the sandbox, and links to the playground, console, contract and docs",
          arguments: TestDatabase.all)
    func homePage(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let page = try await server.request(.GET, "/")
            #expect(page.status == 200)
            #expect(page.headers.first(name: "Content-Type") == "text/html; charset=utf-8")
            #expect(page.headers.first(name: "Content-Security-Policy")?.contains("script-src 'self'") == true)
            let html = page.text
            #expect(html.contains("<h1>Chorus</h1>"))
            #expect(html.contains("version \(SystemController.version) · development"))
            #expect(html.contains("Everything runs against the built-in sandbox"))
            for link in [#"href="/playground""#, #"href="/console""#, #"href="/openapi.json""#, #"href="/health""#] {
                #expect(html.contains(link), "\(link)")
            }
            for doc in ["README.md", "docs/configuration.md", "docs/operations.md", "docs/voice-messages.md", "docs/decisions.md"] {
                #expect(html.contains("<code>\(doc)</code>"), "\(doc)")
            }
            #expect(html.contains(#"<link rel="icon" href="/favicon.svg""#))
            // Every link of the page leads somewhere (the console to its sign-in page).
            for path in ["/playground", "/openapi.json", "/health", "/favicon.svg"] {
                #expect(try await server.request(.GET, path).status == 200, "\(path)")
            }
            let console = try await server.request(.GET, "/console")  // redirected to the sign-in page (the client follows)
            #expect(console.status == 200 && console.text.contains(#"<form method="post" action="/console/login">"#))
        }
    }

    @Test("the docs the home page names exist in the repository")
    func namedDocsExist() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let html = HomeController.page(version: "1", environment: "development", providers: [:], playground: true)
        let named = html.components(separatedBy: "<code>").dropFirst().compactMap { $0.components(separatedBy: "</code>").first }
            .filter { $0.hasSuffix(".md") }
        #expect(named.count == 5)
        for name in named {
            #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent(name).path), "\(name)")
        }
    }

    @Test("GET / says which providers are real, and leaves the playground out when it is off")
    func realProviders() async throws {
        let partly = HomeController.page(
            version: "1", environment: "development", providers: ["telephony": "twilio", "realtime": "sandbox", "app_store": "sandbox"],
            playground: false)
        #expect(partly.contains("Partly real:</strong> app_store, realtime run against the sandbox; telephony uses twilio"))
        #expect(!partly.contains("Everything runs against the built-in sandbox"))
        #expect(!partly.contains(#"href="/playground""#) && partly.contains(#"href="/console""#))
        let real = HomeController.page(version: "1", environment: "staging", providers: ["telephony": "twilio"], playground: true)
        #expect(real.contains("Real providers:") && real.contains("version 1 · staging"))
        // Storage is the server's own: local files or S3 are no outside service.
        for storage in ["filesystem", "s3"] {
            let sandbox = HomeController.page(
                version: "1", environment: "development", providers: ["telephony": "sandbox", "storage": storage], playground: true)
            #expect(sandbox.contains("Everything runs against the built-in sandbox") && sandbox.contains("<dt>storage</dt><dd>\(storage)</dd>"))
        }
        // Names are escaped.
        let odd = HomeController.page(version: "<b>", environment: "development", providers: ["a&b": "<x>"], playground: true)
        #expect(odd.contains("version &lt;b&gt;") && odd.contains("<dt>a&amp;b</dt><dd>&lt;x&gt;</dd>") && !odd.contains("<x>"))
        try await TestServer.run(on: .sqlite, environment: ["CHORUS_PLAYGROUND": "false"]) { server in
            let page = try await server.request(.GET, "/")
            #expect(page.status == 200 && !page.text.contains(#"href="/playground""#))
        }
    }

    @Test("GET / in production does not exist (404 as before); the favicon does")
    func production() async throws {
        try await TestServer.run(on: .sqlite, environment: ["CHORUS_ENVIRONMENT": "production"]) { server in
            let page = try await server.request(.GET, "/")
            #expect(page.status == 404)
            #expect(page.headers.first(name: "Content-Type")?.hasPrefix("application/json") == true)
            #expect(try await server.request(.GET, "/favicon.ico").status == 200)
            let login = try await server.request(.GET, "/console/login")
            #expect(login.status == 200 && login.text.contains(#"<link rel="icon" href="/favicon.svg""#))
        }
    }

    @Test("the favicon: ICO and SVG with caching headers, 304 on a matching ETag, linked from every HTML page")
    func favicon() async throws {
        try await TestServer.run(on: .sqlite) { server in
            let ico = try await server.request(.GET, "/favicon.ico")
            #expect(ico.status == 200 && ico.headers.first(name: "Content-Type") == "image/x-icon")
            #expect(ico.headers.first(name: "Cache-Control") == "public, max-age=86400")
            // An ICO header (reserved 0, type 1, one image) whose image is a 32×32 PNG.
            #expect(Array(ico.body.prefix(6)) == [0, 0, 1, 0, 1, 0])
            #expect(ico.body.count > 22 && Array(ico.body[22..<26]) == [0x89, 0x50, 0x4E, 0x47])
            #expect(ico.body[6] == 32 && ico.body[7] == 32)
            let etag = try #require(ico.headers.first(name: "ETag"))
            let again = try await server.request(.GET, "/favicon.ico", headers: [("If-None-Match", etag)])
            #expect(again.status == 304 && again.body.isEmpty && again.headers.first(name: "ETag") == etag)

            let svg = try await server.request(.GET, "/favicon.svg")
            #expect(svg.status == 200 && svg.headers.first(name: "Content-Type") == "image/svg+xml")
            #expect(svg.headers.first(name: "Cache-Control") == "public, max-age=86400")
            #expect(svg.text.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
            #expect(svg.headers.first(name: "ETag") != etag)

            for path in ["/", "/playground", "/console/login"] {
                let page = try await server.request(.GET, path)
                #expect(page.status == 200 && page.text.contains(#"<link rel="icon" href="/favicon.svg" type="image/svg+xml">"#), "\(path)")
            }
        }
    }
}
