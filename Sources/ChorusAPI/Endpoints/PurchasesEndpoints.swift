extension API.Purchases {
    /// `POST /mobile/purchase-subscription`: records a verified App Store purchase (a plan or an add-on pack).
    public static let purchase = Endpoint<PurchaseRequest, PurchaseResponse>(.post, "/mobile/purchase-subscription")
    /// `POST /mobile/upgrade-subscription`: the legacy upgrade by subscription tier with a receipt.
    public static let upgrade = Endpoint<UpgradeSubscriptionRequest, UpgradeSubscriptionResponse>(.post, "/mobile/upgrade-subscription")
    /// `GET /mobile/subscription-status`: the user's subscription, its state, dates and renewal.
    public static let subscriptionStatus = Endpoint<NoContent, SubscriptionStatusResponse>(.get, "/mobile/subscription-status")
    /// `POST /mobile/app-store/webhook`: App Store Server Notifications V2 (signed by Apple, not by a user).
    public static let appStoreNotification = Endpoint<AppStoreNotificationRequest, AppStoreNotificationResponse>(
        .post, "/mobile/app-store/webhook")

    /// Every endpoint of this area, for the table API/all.
    public static let endpoints: [AnyEndpoint] = [
        purchase.erased, upgrade.erased, subscriptionStatus.erased, appStoreNotification.erased,
    ]
}
