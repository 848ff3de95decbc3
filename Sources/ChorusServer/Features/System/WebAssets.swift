import ChorusAPI
import Crypto
import Foundation
import Vapor

/// The console's and playground's static files (`Resources/web`): one stylesheet and plain ES modules, loaded once
/// at start-up and served from memory at `GET /assets/{file}` with an `ETag` — no build step, no framework, nothing
/// fetched from elsewhere.
struct WebAssets: Sendable {
    struct Asset: Sendable {
        let body: ByteBuffer
        let contentType: String
        let etag: String
    }

    let files: [String: Asset]

    /// The files bundled with the server.
    static func load() throws -> WebAssets {
        guard let directory = Bundle.module.url(forResource: "web", withExtension: nil) else {
            throw Abort(.internalServerError, reason: "the web assets are missing from the bundle")
        }
        var files: [String: Asset] = [:]
        for url in try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil) {
            let type: String
            switch url.pathExtension {
            case "js": type = "text/javascript; charset=utf-8"
            case "css": type = "text/css; charset=utf-8"
            default: continue
            }
            let data = try Data(contentsOf: url)
            let digest = SHA256.hash(data: data).prefix(8).map { String(format: "%02x", $0) }.joined()
            files[url.lastPathComponent] = Asset(body: ByteBuffer(data: data), contentType: type, etag: "\"\(digest)\"")
        }
        return WebAssets(files: files)
    }
}

/// `GET /assets/{file}`: the web assets, revalidated with `ETag` / `If-None-Match`.
struct WebAssetsController: RouteCollection {
    let assets: WebAssets

    func boot(routes: any RoutesBuilder) throws {
        routes.on(API.Operations.asset, use: file)
    }

    @Sendable
    func file(_ req: Request) async throws -> Response {
        guard let name = req.parameters.get("file"), let asset = assets.files[name] else { throw APIError.notFound("File not found") }
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .eTag, value: asset.etag)
        headers.replaceOrAdd(name: .cacheControl, value: "no-cache")
        if req.headers.first(name: .ifNoneMatch) == asset.etag { return Response(status: .notModified, headers: headers) }
        headers.replaceOrAdd(name: .contentType, value: asset.contentType)
        return Response(status: .ok, headers: headers, body: .init(buffer: asset.body))
    }
}
