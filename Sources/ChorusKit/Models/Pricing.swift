import ChorusAPI
import Foundation

/// The plans and the add-on pack on sale (`GET /mobile/pricing`), from ``CallsClient/pricing()``.
public struct Pricing: Sendable, Hashable {
    /// The subscription plans, cheapest first.
    public var plans: [Plan]
    /// The pack of additional calls.
    public var addOnPack: AddOnPack

    /// The plan of `tier`, if on sale.
    public func plan(_ tier: PlanTier) -> Plan? {
        plans.first { $0.tier == tier }
    }

    /// Converts the wire format.
    public init(_ dto: PricingResponse) {
        plans = dto.plans.map(Plan.init)
        addOnPack = AddOnPack(dto.addon)
    }
}

/// A subscription plan on sale.
public struct Plan: Sendable, Hashable, Identifiable {
    /// Which plan.
    public var tier: PlanTier
    /// The display name, e.g. `Basic Plan`.
    public var name: String
    /// The display price, e.g. `$4.99`. Prefer StoreKit's localized `Product.displayPrice` when you have the product.
    public var price: String
    /// How often it is billed.
    public var billing: BillingCycle
    /// The calls included, for display, e.g. `5 calls per week`.
    public var calls: String
    /// How long each call may last, for display, e.g. `1 minute per call`.
    public var durationLimit: String
    /// Selling points, for display.
    public var features: [String]
    /// The App Store product id to buy with StoreKit.
    public var productID: String

    /// The App Store product id.
    public var id: String { productID }

    /// Converts the wire format.
    public init(_ dto: PricingPlan) {
        tier = PlanTier(rawValue: dto.id)
        name = dto.name
        price = dto.price
        billing = dto.billing
        calls = dto.calls
        durationLimit = dto.durationLimit
        features = dto.features
        productID = dto.productID
    }
}

/// The pack of additional calls on sale, usable on top of any plan (or none).
public struct AddOnPack: Sendable, Hashable, Identifiable {
    /// The display name.
    public var name: String
    /// The display price, e.g. `$4.99`.
    public var price: String
    /// The calls included, for display, e.g. `10 additional calls`.
    public var calls: String
    /// How long the calls stay usable, for display, e.g. `30 days`.
    public var expires: String
    /// A sentence describing the pack.
    public var description: String
    /// The App Store product id to buy with StoreKit (a consumable).
    public var productID: String

    /// The App Store product id.
    public var id: String { productID }

    /// Converts the wire format.
    public init(_ dto: AddonPricing) {
        name = dto.name
        price = dto.price
        calls = dto.calls
        expires = dto.expires
        description = dto.description
        productID = dto.productID
    }
}
