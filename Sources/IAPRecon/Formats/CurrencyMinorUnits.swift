/// ISO 4217's minor unit of every active currency: how many decimal places its amounts have.
///
/// The one table of them (CONTRACT.md §3, "Reporting currency"): `--currency` must name one of
/// these codes, and every reporting-currency cell is rounded half-even to its places. Codes ISO
/// lists without a minor unit (gold and other metals, the SDR, bond market units, `XTS`, `XXX`)
/// are not money a report can be kept in, and are left out, as are withdrawn codes (`HRK`, `BGN`).
/// Source: ISO 4217 list one as published on 2026-01-01.
public enum CurrencyMinorUnits {
    /// The decimal places of `code`'s minor unit (0, 2, 3 or 4), or nil when `code` is no active
    /// ISO 4217 currency with a minor unit. `code` is matched as written: `JPY`, not `jpy`.
    public static func places(_ code: String) -> Int? {
        if none.contains(code) { return 0 }
        if thousandths.contains(code) { return 3 }
        if tenThousandths.contains(code) { return 4 }
        return hundredths.contains(code) ? 2 : nil
    }

    private static let none: Set<String> = [
        "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI", "VND", "VUV", "XAF", "XOF", "XPF",
    ]
    private static let thousandths: Set<String> = ["BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"]
    private static let tenThousandths: Set<String> = ["CLF", "UYW"]
    private static let hundredths: Set<String> = [
        "AED", "AFN", "ALL", "AMD", "AOA", "ARS", "AUD", "AWG", "AZN", "BAM", "BBD", "BDT", "BMD", "BND", "BOB", "BOV", "BRL",
        "BSD", "BTN", "BWP", "BYN", "BZD", "CAD", "CDF", "CHE", "CHF", "CHW", "CNY", "COP", "COU", "CRC", "CUP", "CVE", "CZK",
        "DKK", "DOP", "DZD", "EGP", "ERN", "ETB", "EUR", "FJD", "FKP", "GBP", "GEL", "GHS", "GIP", "GMD", "GTQ", "GYD", "HKD",
        "HNL", "HTG", "HUF", "IDR", "ILS", "INR", "IRR", "JMD", "KES", "KGS", "KHR", "KPW", "KYD", "KZT", "LAK", "LBP", "LKR",
        "LRD", "LSL", "MAD", "MDL", "MGA", "MKD", "MMK", "MNT", "MOP", "MRU", "MUR", "MVR", "MWK", "MXN", "MXV", "MYR", "MZN",
        "NAD", "NGN", "NIO", "NOK", "NPR", "NZD", "PAB", "PEN", "PGK", "PHP", "PKR", "PLN", "QAR", "RON", "RSD", "RUB", "SAR",
        "SBD", "SCR", "SDG", "SEK", "SGD", "SHP", "SLE", "SOS", "SRD", "SSP", "STN", "SVC", "SYP", "SZL", "THB", "TJS", "TMT",
        "TOP", "TRY", "TTD", "TWD", "TZS", "UAH", "USD", "USN", "UYU", "UZS", "VED", "VES", "WST", "XAD", "XCD", "XCG", "YER",
        "ZAR", "ZMW", "ZWG",
    ]
}
