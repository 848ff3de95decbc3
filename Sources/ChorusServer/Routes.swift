import Vapor

extension ChorusApp {
    /// Every controller of the server, in one list: the API, the web assets, the operations endpoints and (outside
    /// production) the development helpers.
    static func registerRoutes(_ app: Application, services: ChorusServices) throws {
        try app.register(collection: SystemController(services: services, openAPIDocument: try SystemController.loadDocument()))
        try app.register(collection: AuthController(services: services))
        try app.register(collection: CallsController(services: services))
        try app.register(collection: VoicePreviewController(services: services))
        try app.register(collection: ReportsController(services: services))
        try app.register(collection: PurchasesController(services: services))
        try app.register(collection: TwilioWebhookController(services: services))
        try app.register(collection: MediaStreamController(services: services))
        try app.register(collection: ConversationsController(services: services))
        try app.register(collection: InvitationsController(services: services))
        try app.register(collection: AudioController(services: services))
        try app.register(collection: RealtimeController(services: services))
        try app.register(collection: AudioStreamController(services: services))
        try app.register(collection: VoiceController(services: services))
        try app.register(collection: PrivacyController(services: services))
        try app.register(collection: UsageController(services: services))
        try app.register(collection: ConversationAudioController(services: services))
        try app.register(collection: StoriesController(services: services))
        try app.register(collection: WebAssetsController(assets: try WebAssets.load()))
        try app.register(collection: try HomeController(services: services))
        try app.register(collection: ConsoleController(services: services, modelLifecycle: services.modelLifecycle))
        try app.register(collection: MetricsController(services: services))
        try app.register(collection: PlaygroundController(services: services))
        if !services.configuration.isProduction {
            try app.register(collection: DevelopmentController(services: services))
        }
    }
}
