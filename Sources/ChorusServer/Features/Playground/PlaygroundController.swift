import ChorusAPI
import Foundation
import Vapor

/// `GET /playground`: a browser page to try Chorus without an iPhone — sign up or in, see usage and plan, buy a plan
/// through the sandbox App Store, place a call and watch it live, record and send voice messages, make a story.
///
/// The page is static HTML; its module (`/assets/playground.js`) uses the same public API as the apps, with the
/// mobile bearer tokens kept in the tab's `sessionStorage`. Served outside production by default; production opts
/// in with `CHORUS_PLAYGROUND=true` (its sandbox-only parts — buying through the sandbox App Store, the call's
/// recording — are then hidden, since the emulators are not mounted there).
struct PlaygroundController: RouteCollection {
    let services: ChorusServices

    func boot(routes: any RoutesBuilder) throws {
        guard services.configuration.playgroundEnabled else { return }
        routes.on(API.Operations.playground, use: page)
    }

    @Sendable
    func page(_ req: Request) async throws -> Response {
        let sandbox = !services.configuration.isProduction
        return ConsoleController.html(
            PlaygroundPages.page(
                sandbox: sandbox, sandboxTelephony: sandbox && services.configuration.twilio == nil, providers: services.providerNames))
    }
}
