/// A currency and how many fraction digits its prices carry.
struct Currency {
    let code: String
    let decimals: Int
}

/// A country the app sells in: its App Store storefront and currency.
final class Country: Sendable {
    let code: String          // ISO 3166 alpha-2, for registrations and the MMP
    let storefront: String    // Apple's alpha-3 storefront
    let storefrontId: String
    let currency: Int         // index into `Catalog.currencies`
    let language: String
    let region: String
    let carrier: String
    let weight: Int

    init(code: String, storefront: String, storefrontId: String, currency: Int, language: String,
         region: String, carrier: String, weight: Int) {
        self.code = code
        self.storefront = storefront
        self.storefrontId = storefrontId
        self.currency = currency
        self.language = language
        self.region = region
        self.carrier = carrier
        self.weight = weight
    }
}

enum ProductType: String {
    case consumable
    case nonConsumable = "non_consumable"
    case autoRenewable = "auto_renewable"
    case nonRenewing = "non_renewing"

    /// Apple's V2 `type` value.
    var appleName: String {
        switch self {
        case .consumable: "Consumable"
        case .nonConsumable: "Non-Consumable"
        case .autoRenewable: "Auto-Renewable Subscription"
        case .nonRenewing: "Non-Renewing Subscription"
        }
    }
}

/// One in-app product; prices are milliunits per currency of `Catalog.currencies`.
final class Product: Sendable {
    let id: String
    let short: String
    let type: ProductType
    let group: String          // the catalog's subscription group
    let appleGroup: String     // Apple's subscriptionGroupIdentifier
    let period: Millis         // auto-renewable period; 0 otherwise
    let prices: [Int64]
    let inCatalog: Bool
    let isSubscription: Bool

    init(id: String, short: String, type: ProductType, group: String, appleGroup: String, period: Millis,
         prices: [Int64], inCatalog: Bool) {
        self.id = id
        self.short = short
        self.type = type
        self.group = group
        self.appleGroup = appleGroup
        self.period = period
        self.prices = prices
        self.inCatalog = inCatalog
        isSubscription = type == .autoRenewable
    }

    var usdMilli: Int64 { prices[0] }
}

/// The app's products, storefronts and currencies (CONTRACT.md §1.6 `catalog.csv`).
enum Catalog {
    static let bundleId = "com.example.game"
    static let appAppleId: Int64 = 1_460_000_000
    static let bundleVersion = "412"

    static let currencies: [Currency] = [
        Currency(code: "USD", decimals: 2), Currency(code: "EUR", decimals: 2), Currency(code: "GBP", decimals: 2),
        Currency(code: "JPY", decimals: 0), Currency(code: "KRW", decimals: 0),
    ]

    static let countries: [Country] = [
        Country(code: "US", storefront: "USA", storefrontId: "143441", currency: 0, language: "en-US",
                region: "NA", carrier: "T-Mobile", weight: 38),
        Country(code: "KR", storefront: "KOR", storefrontId: "143466", currency: 4, language: "ko-KR",
                region: "AS", carrier: "SK Telecom", weight: 18),
        Country(code: "JP", storefront: "JPN", storefrontId: "143462", currency: 3, language: "ja-JP",
                region: "AS", carrier: "NTT DOCOMO", weight: 16),
        Country(code: "DE", storefront: "DEU", storefrontId: "143443", currency: 1, language: "de-DE",
                region: "EU", carrier: "Telekom.de", weight: 10),
        Country(code: "FR", storefront: "FRA", storefrontId: "143442", currency: 1, language: "fr-FR",
                region: "EU", carrier: "Orange F", weight: 7),
        Country(code: "GB", storefront: "GBR", storefrontId: "143444", currency: 2, language: "en-GB",
                region: "EU", carrier: "EE", weight: 11),
    ]
    static let countryWeights = countries.map(\.weight)

    static let week: Millis = 7 * Clock.day
    static let month: Millis = 30 * Clock.day
    static let year: Millis = 365 * Clock.day

    static let products: [Product] = [
        product("gems60", .consumable, prices: [990, 990, 990, 160_000, 1_500_000]),
        product("gems300", .consumable, prices: [4990, 5490, 4990, 800_000, 7_500_000]),
        product("gems980", .consumable, prices: [14990, 16990, 14990, 2_400_000, 22_000_000]),
        product("gems2000", .consumable, prices: [29990, 32990, 29990, 4_800_000, 44_000_000]),
        product("gems6480", .consumable, prices: [99990, 109_990, 99990, 16_000_000, 149_000_000]),
        product("starterpack", .consumable, prices: [1990, 2290, 1990, 300_000, 3_000_000]),
        product("removeads", .nonConsumable, prices: [2990, 3490, 2990, 480_000, 4_400_000]),
        product("seasonpass", .nonRenewing, prices: [4990, 5490, 4990, 800_000, 7_500_000]),
        product("premium.weekly", .autoRenewable, group: "premium", appleGroup: "21031001", period: week,
                prices: [2990, 3490, 2990, 480_000, 4_400_000]),
        product("premium.monthly", .autoRenewable, group: "premium", appleGroup: "21031001", period: month,
                prices: [9990, 10990, 9990, 1_600_000, 14_000_000]),
        product("premium.yearly", .autoRenewable, group: "premium", appleGroup: "21031001", period: year,
                prices: [59990, 64990, 59990, 9_800_000, 89_000_000]),
        product("vip.monthly", .autoRenewable, group: "vip", appleGroup: "21031002", period: month,
                prices: [19990, 21990, 19990, 3_200_000, 29_000_000]),
        product("halloween_bundle", .consumable, prices: [7990, 8990, 7990, 1_300_000, 12_000_000], inCatalog: false),
    ]

    static func index(_ short: String) -> Int {
        for (index, product) in products.enumerated() where product.short == short { return index }
        preconditionFailure("unknown product \(short)")
    }

    static let gems60 = index("gems60")
    static let gems300 = index("gems300")
    static let gems980 = index("gems980")
    static let gems2000 = index("gems2000")
    static let gems6480 = index("gems6480")
    static let starterPack = index("starterpack")
    static let removeAds = index("removeads")
    static let seasonPass = index("seasonpass")
    static let premiumWeekly = index("premium.weekly")
    static let premiumMonthly = index("premium.monthly")
    static let premiumYearly = index("premium.yearly")
    static let vipMonthly = index("vip.monthly")
    static let halloween = index("halloween_bundle")

    /// Consumables a normal payer buys, with how often.
    static let consumables = [gems60, gems300, gems980, gems2000, gems6480, starterPack, seasonPass, halloween]
    static let consumableWeights = [40, 28, 12, 6, 2, 8, 3, 1]

    private static func product(_ short: String, _ type: ProductType, group: String = "", appleGroup: String = "",
                                period: Millis = 0, prices: [Int64], inCatalog: Bool = true) -> Product {
        Product(id: bundleId + "." + short, short: short, type: type, group: group, appleGroup: appleGroup,
                period: period, prices: prices, inCatalog: inCatalog)
    }

    /// `catalog.csv`: every product except the ones deliberately left out.
    static func csv() -> [UInt8] {
        var out = LineBuffer()
        out.raw("product_id,type,subscription_group,price,currency\n")
        for product in products where product.inCatalog {
            out.text(product.id)
            out.byte(UInt8(ascii: ","))
            out.text(product.type.rawValue)
            out.byte(UInt8(ascii: ","))
            out.text(product.group)
            out.byte(UInt8(ascii: ","))
            out.decimal(product.usdMilli, scale: 3, minimumFraction: 2)
            out.raw(",USD\n")
        }
        return out.bytes
    }
}

extension LineBuffer {
    /// A price in its currency's major unit: `990` milliunits USD is `0.99`, JPY `160000` is `160`.
    mutating func money(_ milli: Int64, currency: Int) {
        decimal(milli, scale: 3, minimumFraction: Catalog.currencies[currency].decimals)
    }

    /// An exact amount with no trailing zeros (`0.495`, `1100`, `0`), the way iaprecon prints amounts.
    mutating func plainAmount(_ units: Int64, scale: Int) {
        decimal(units, scale: scale, minimumFraction: 0)
    }
}
