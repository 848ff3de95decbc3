import ChorusAPI
import Foundation

/// App Store purchases: `/mobile/purchase-subscription` and `/mobile/subscription-status`. Reached through
/// ``ChorusClient/purchases``; every method needs a signed-in user.
///
/// Buy with StoreKit, then hand the transaction to the server, which verifies it with Apple and grants the plan or
/// the add-on calls. Finish the StoreKit transaction only after the server accepted it:
///
/// ```swift
/// let result = try await product.purchase()
/// if case .success(let verification) = result, case .verified(let transaction) = verification {
///     _ = try await chorus.purchases.purchase(signedTransaction: verification.jwsRepresentation, productID: product.id)
///     await transaction.finish()
/// }
/// ```
public struct PurchasesClient: Sendable {
    let session: APISession

    /// Records a StoreKit 2 purchase (preferred): the server verifies the signed transaction offline (Apple's
    /// certificate chain, bundle id, environment) and applies it once.
    ///
    /// - Parameters:
    ///   - signedTransaction: the transaction's JWS, StoreKit's `VerificationResult.jwsRepresentation`.
    ///   - productID: the App Store product id bought, e.g. `speech_assistant_basic_weekly`.
    /// - Returns: the plan and allowance after the purchase.
    /// - Throws: ``ChorusError/api(status:detail:)`` (400) when the server refuses the purchase — an unknown
    ///   product, a transaction that does not verify, is for another product or account, was refunded, has expired,
    ///   or was already processed — with the server's reason; ``ChorusError/server(status:requestID:)`` (503) when the
    ///   App Store could not be reached (nothing changed: retry later).
    @discardableResult
    public func purchase(signedTransaction: String, productID: String) async throws -> PurchaseResult {
        try await send(PurchaseRequest(productID: productID, signedTransaction: signedTransaction))
    }

    /// Records a purchase with the app's legacy App Store receipt (StoreKit 1): the server sends it to Apple's
    /// `verifyReceipt` and applies the receipt's latest transaction of `productID`. Prefer
    /// ``purchase(signedTransaction:productID:)``.
    ///
    /// - Parameters:
    ///   - receipt: the contents of `Bundle.main.appStoreReceiptURL`.
    ///   - productID: the App Store product id bought.
    /// - Returns: the plan and allowance after the purchase.
    /// - Throws: as ``purchase(signedTransaction:productID:)``.
    @discardableResult
    public func purchase(receipt: Data, productID: String) async throws -> PurchaseResult {
        try await send(PurchaseRequest(receiptData: receipt.base64EncodedString(), productID: productID))
    }

    /// The user's subscription: plan, state (active, cancelled, in a grace period…), dates and renewal.
    public func subscriptionStatus() async throws -> SubscriptionStatus {
        SubscriptionStatus(try await session.send(API.Purchases.subscriptionStatus.request()))
    }

    private func send(_ body: PurchaseRequest) async throws -> PurchaseResult {
        PurchaseResult(try await session.send(try API.Purchases.purchase.request(json: body)))
    }
}
