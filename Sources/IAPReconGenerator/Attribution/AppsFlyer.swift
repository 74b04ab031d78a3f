/// AppsFlyer raw-data export rows (attribution.md §1.2–1.3, CONTRACT.md §1.5).
///
/// Rows use the real default 81-column header in its fixed order. Most columns of
/// one install's rows never change, so each install precomputes them once as an
/// `MMPProfile` and a row is those bytes around a few event cells.
enum AppsFlyer {
    static let header = [
        "Attributed Touch Type", "Attributed Touch Time", "Install Time", "Event Time", "Event Name", "Event Value",
        "Event Revenue", "Event Revenue Currency", "Event Revenue USD", "Event Source", "Is Receipt Validated",
        "Partner", "Media Source", "Channel", "Keywords", "Campaign", "Campaign ID", "Adset", "Adset ID", "Ad", "Ad ID",
        "Ad Type", "Site ID", "Sub Site ID", "Sub Param 1", "Sub Param 2", "Sub Param 3", "Sub Param 4", "Sub Param 5",
        "Cost Model", "Cost Value", "Cost Currency",
        "Contributor 1 Partner", "Contributor 1 Media Source", "Contributor 1 Campaign", "Contributor 1 Touch Type",
        "Contributor 1 Touch Time", "Contributor 2 Partner", "Contributor 2 Media Source", "Contributor 2 Campaign",
        "Contributor 2 Touch Type", "Contributor 2 Touch Time", "Contributor 3 Partner", "Contributor 3 Media Source",
        "Contributor 3 Campaign", "Contributor 3 Touch Type", "Contributor 3 Touch Time",
        "Region", "Country Code", "State", "City", "Postal Code", "DMA", "IP", "WIFI", "Operator", "Carrier", "Language",
        "AppsFlyer ID", "Advertising ID", "IDFA", "Android ID", "Customer User ID", "IMEI", "IDFV", "Platform",
        "Device Type", "OS Version", "App Version", "SDK Version", "App ID", "App Name", "Bundle ID", "Is Retargeting",
        "Retargeting Conversion Type", "Attribution Lookback", "Reengagement Window", "Is Primary Attribution",
        "User Agent", "HTTP Referrer", "Original URL",
    ].joined(separator: ",")

    static let zeroIDFA = "00000000-0000-0000-0000-000000000000"
    static let deviceTypes = ["iPhone15,2", "iPhone14,5", "iPhone16,1", "iPhone13,2", "iPhone15,4", "iPad13,18"]
    static let osVersions = ["17.6.1", "18.0", "18.0.1", "17.5.1", "16.7.10"]
    static let appVersions = ["4.12.0", "4.12.1", "4.13.0"]
}

/// A paid or organic media source and one of its campaigns.
struct Campaign {
    let mediaSource: String
    let partner: String
    let channel: String
    let name: String
    let id: String
    let adsets: [String]
    let touchType: String
    let costModel: String
    /// Cost per install in hundredths of `currency` (0 for organic and restricted).
    let cpi: Int64
    let currency: Int
    let weight: Int
    let retargeting: Bool
    /// The only country the campaign targets (ISO alpha-2), or empty for all.
    var country = ""

    var isPaid: Bool { cpi > 0 }
}

enum Campaigns {
    /// Install attribution, with weights. Organic appears as `organic`, empty and `Organic`.
    static let acquisition: [Campaign] = [
        organic("organic", weight: 180), organic("", weight: 75), organic("Organic", weight: 45),
        paid("googleadwords_int", channel: "ACI_Youtube", "UAC_Install_US_iOS", "20816134512", ["ag_broad", "ag_gamers"], cpi: 310, weight: 60),
        paid("googleadwords_int", channel: "ACI_Search", "UAC_Install_JP_iOS", "20816134598", ["ag_jp_rpg"], cpi: 280, weight: 35, country: "JP"),
        paid("Facebook Ads", channel: "Facebook", "Summer Sale, \"Gems\" x2", "23851234567890123", ["lal_1pct_payers", "broad_18_34"], cpi: 350, weight: 45),
        paid("Facebook Ads", channel: "Instagram", "FB_AEO_Purchase_KR", "23851234567890456", ["kr_lookalike"], cpi: 420, weight: 30, country: "KR"),
        paid("Apple Search Ads", channel: "", "-Brand Search US", "1456789012", ["brand_exact"], touch: "click", cost: "CPT", cpi: 190, weight: 35),
        paid("Apple Search Ads", channel: "", "Generic RPG", "1456789099", ["generic_broad"], touch: "click", cost: "CPT", cpi: 260, weight: 20),
        paid("tiktokglobal_int", channel: "TikTok", "TT_Install_Q3", "1790123456789012", ["tt_interest_games"], touch: "impression", cpi: 240, weight: 40),
        paid("unityads_int", channel: "unity", "Unity_RV_Global", "5f3a9c1e2b", ["rv_tier1"], cpi: 180, weight: 25),
        paid("applovin_int", channel: "applovin", "AL_ROAS_D7", "al_8812", ["al_tier1"], cpi: 230, weight: 15),
        paid("kakao_int", channel: "Kakao", "KR_Moment_Install", "km_30021", ["kr_20s"], cpi: 450_000, currency: 4, weight: 60, country: "KR"),
        Campaign(mediaSource: "restricted", partner: "", channel: "", name: "", id: "", adsets: [""], touchType: "",
                 costModel: "", cpi: 0, currency: 0, weight: 25, retargeting: false),
    ]
    /// Campaign weights for installs in each country of `Catalog.countries`.
    static let weightsByCountry: [[Int]] = Catalog.countries.map { country in
        acquisition.map { $0.country.isEmpty || $0.country == country.code ? $0.weight : 0 }
    }

    /// Re-engagement campaigns: their rows have `Is Retargeting` = true.
    static let retargeting: [Campaign] = [
        Campaign(mediaSource: "Facebook Ads", partner: "", channel: "Facebook", name: "=Winback Q4 (lapsed payers)",
                 id: "23851234567899999", adsets: ["lapsed_30d"], touchType: "click", costModel: "CPM", cpi: 0,
                 currency: 0, weight: 1, retargeting: true),
        Campaign(mediaSource: "googleadwords_int", partner: "", channel: "ACE_Display", name: "ACE_Reengage_Global",
                 id: "20816139999", adsets: ["ace_all"], touchType: "click", costModel: "CPC", cpi: 0, currency: 0,
                 weight: 1, retargeting: true),
    ]

    /// A campaign that spends but brings no installs (CONTRACT.md §3: "spend with no installs still gets its row").
    static let spendOnly = (mediaSource: "kakao_int", campaign: "KR_Brand_Awareness_Oct", currency: 4, dailySpend: Int64(35_000_000))  // hundredths of KRW

    private static func organic(_ source: String, weight: Int) -> Campaign {
        Campaign(mediaSource: source, partner: "", channel: "", name: "", id: "", adsets: [""], touchType: "",
                 costModel: "", cpi: 0, currency: 0, weight: weight, retargeting: false)
    }

    private static func paid(_ source: String, channel: String, _ name: String, _ id: String, _ adsets: [String],
                             touch: String = "click", cost: String = "CPI", cpi: Int64, currency: Int = 0,
                             weight: Int, country: String = "") -> Campaign {
        Campaign(mediaSource: source, partner: "", channel: channel, name: name, id: id, adsets: adsets,
                 touchType: touch, costModel: cost, cpi: cpi, currency: currency, weight: weight, retargeting: false,
                 country: country)
    }
}

/// The bytes of an install's rows that do not change from event to event.
struct MMPProfile {
    /// Columns 1–3 (touch type, touch time, install time) and the comma after them.
    var prefix: [UInt8]
    /// Columns 12–62 (Partner … Android ID), each followed by a comma.
    var middle: [UInt8]
    /// Columns 64–78 (IMEI … Is Primary Attribution), each preceded by a comma, and the comma before User Agent.
    var tail: [UInt8]
    /// Column 79, User Agent: the SDK sends it with the install only.
    var userAgent: [UInt8]
}

/// The phone an account was used on, and its MMP install.
struct Device {
    var idfv: String
    var idfa: String?          // nil when App Tracking Transparency was not granted
    var appsflyerId: String
    var installAt: Millis
    var profile: MMPProfile?   // nil when the MMP never saw the install
}

extension LineBuffer {
    /// An `MMPProfile` for an install.
    static func mmpProfile(campaign: Campaign, adset: String, touchAt: Millis, installAt: Millis, country: Country,
                           device: Device, deviceType: String, osVersion: String, appVersion: String,
                           wifi: Bool, ipTail: Int, retargeting: Bool) -> MMPProfile {
        var prefix = LineBuffer(capacity: 64)
        let organic = !campaign.isPaid && campaign.mediaSource != "restricted" && !retargeting
        if !organic && campaign.mediaSource != "restricted" {
            prefix.text(campaign.touchType)
            prefix.byte(UInt8(ascii: ","))
            prefix.spacedTime(touchAt)
        } else {
            prefix.byte(UInt8(ascii: ","))
        }
        prefix.byte(UInt8(ascii: ","))
        prefix.spacedTime(installAt)
        prefix.byte(UInt8(ascii: ","))

        var middle = LineBuffer(capacity: 512)
        let detailed = !organic && campaign.mediaSource != "restricted"
        middle.csvCell(campaign.partner); middle.byte(UInt8(ascii: ","))
        middle.csvCell(campaign.mediaSource); middle.byte(UInt8(ascii: ","))
        middle.csvCell(detailed ? campaign.channel : ""); middle.byte(UInt8(ascii: ","))
        middle.byte(UInt8(ascii: ","))  // Keywords
        middle.csvCell(campaign.name); middle.byte(UInt8(ascii: ","))
        middle.csvCell(campaign.id); middle.byte(UInt8(ascii: ","))
        middle.csvCell(adset); middle.byte(UInt8(ascii: ","))
        middle.raw(detailed ? ",cr_v3,,," : ",,,,")  // Adset ID, Ad, Ad ID, Ad Type; Site ID follows
        middle.raw(",,,,,,,")  // Site ID done; Sub Site ID, Sub Param 1–5
        middle.csvCell(detailed ? campaign.costModel : ""); middle.raw(",,")  // Cost Model, Cost Value, Cost Currency
        middle.byte(UInt8(ascii: ","))
        middle.raw(",,,,,,,,,,,,,,,")  // 15 contributor columns
        // Region, Country Code, State, City, Postal Code, DMA, IP, WIFI, Operator, Carrier, Language:
        // privacy settings leave most of them empty.
        middle.text(country.region); middle.byte(UInt8(ascii: ","))
        middle.text(country.code); middle.raw(",,,,,,")
        middle.raw(wifi ? "true,," : "false,,")
        middle.csvCell(wifi ? "" : country.carrier); middle.byte(UInt8(ascii: ","))
        middle.text(country.language); middle.byte(UInt8(ascii: ","))
        middle.text(device.appsflyerId); middle.raw(",,")
        middle.text(device.idfa ?? (ipTail % 5 < 2 ? AppsFlyer.zeroIDFA : "")); middle.raw(",,")

        var tail = LineBuffer(capacity: 256)
        tail.raw(",,")  // IMEI
        tail.text(device.idfv)
        tail.raw(",ios,")
        tail.csvCell(deviceType); tail.byte(UInt8(ascii: ","))
        tail.text(osVersion); tail.byte(UInt8(ascii: ","))
        tail.text(appVersion)
        tail.raw(",,id1460000000,,com.example.game,")
        tail.raw(retargeting ? "true,re-engagement,7d,30d,true," : "false,,7d,,true,")
        var userAgent = LineBuffer(capacity: 64)
        userAgent.raw("Example%20Game/")
        userAgent.text(appVersion)
        userAgent.raw(" CFNetwork/1568.100.1 Darwin/24.0.0")
        return MMPProfile(prefix: prefix.bytes, middle: middle.bytes, tail: tail.bytes, userAgent: userAgent.bytes)
    }

    /// One AppsFlyer row.
    mutating func mmpRow(_ profile: MMPProfile, eventAt: Millis, name: String, value: String,
                         revenue: String, revenueCurrency: String, revenueUSD: String, customerUserId: String,
                         source: String = "SDK") {
        append(profile.prefix)
        spacedTime(eventAt)
        byte(UInt8(ascii: ","))
        text(name)
        byte(UInt8(ascii: ","))
        csvCell(value)
        byte(UInt8(ascii: ","))
        text(revenue)
        byte(UInt8(ascii: ","))
        text(revenueCurrency)
        byte(UInt8(ascii: ","))
        text(revenueUSD)
        byte(UInt8(ascii: ","))
        text(source)
        raw(name == "af_purchase" ? ",false," : ",,")
        append(profile.middle)
        text(customerUserId)
        append(profile.tail)
        if name == "install" { append(profile.userAgent) }
        raw(",,")
    }
}
