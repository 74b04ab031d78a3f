/// The one check of a currency's form, for every source that names one (CONTRACT.md §1).
///
/// Every amount is converted by its currency's rate in `fx.csv` and summed with amounts of the same
/// currency from other sources, matched by the code as written. A code written otherwise (`usd`,
/// `US`, `US$`, ` USD`) would match no rate and no other source, and its amounts would show up only
/// far from their line, as "no fx rate"; so such a line is rejected where it is read.
enum CurrencyCode {
    /// `text` when it is an ISO 4217 code: three ASCII capital letters (`USD`, `JPY`, `KRW`).
    /// Otherwise rejects as `bad currency in '<field>'`, quoting the value; `field` is worded only then.
    static func checked(_ text: String, field: @autoclosure () -> String) throws(LineReject) -> String {
        guard text.utf8.count == 3, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else {
            throw LineReject("bad currency in '\(field())': \(Redaction.quoted(.string(text)))")
        }
        return text
    }
}

extension Fields {
    /// An optional currency: a string (an empty one is none) that is an ISO 4217 code (`CurrencyCode`).
    /// Apple's V2 `currency` is read so too: Apple sends a string, and a number is no code.
    func currency(_ key: String) throws(LineReject) -> String? {
        guard let text = try string(key) else { return nil }
        return try CurrencyCode.checked(text, field: path + key)
    }
}

extension CSVRowParser {
    /// A required currency cell, checked as `CurrencyCode` checks every currency.
    static func currency(_ name: String, _ row: CSVRow, _ header: CSVHeader) throws(LineReject) -> String {
        try CurrencyCode.checked(try required(name, row, header), field: name)
    }
}
