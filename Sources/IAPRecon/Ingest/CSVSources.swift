import Foundation

/// A CSV header: column positions by name.
struct CSVHeader {
    let names: [String]
    private let positions: [String: Int]

    init(_ names: [String]) {
        self.names = names.map(trimmedSpaces)
        var positions: [String: Int] = [:]
        for (index, name) in self.names.enumerated() where positions[name] == nil { positions[name] = index }
        self.positions = positions
    }

    func has(_ name: String) -> Bool { positions[name] != nil }

    /// The cell of column `name`, trimmed; nil when the column is absent or the cell empty.
    func value(_ name: String, in row: CSVRow) -> String? {
        guard let position = positions[name], position < row.count else { return nil }
        let cell = trimmedSpaces(row[position])
        return cell.isEmpty ? nil : cell
    }
}

/// `text` without leading and trailing spaces and tabs (cheap: no Foundation bridging).
func trimmedSpaces(_ text: String) -> String {
    let utf8 = text.utf8
    guard let first = utf8.first, let last = utf8.last else { return text }
    if first != 0x20, first != 0x09, last != 0x20, last != 0x09 { return text }
    guard let start = utf8.firstIndex(where: { $0 != 0x20 && $0 != 0x09 }),
          let end = utf8.lastIndex(where: { $0 != 0x20 && $0 != 0x09 }) else { return "" }
    return String(text[start...end])
}

/// A parser for one CSV source: the columns it needs, and one row to raw rows.
protocol CSVRowParser {
    static var requiredColumns: [String] { get }
    static func parse(_ row: CSVRow, header: CSVHeader) throws(LineReject) -> LineOutcome
}

extension CSVRowParser {
    static func required(_ name: String, _ row: CSVRow, _ header: CSVHeader) throws(LineReject) -> String {
        guard let value = header.value(name, in: row) else { throw LineReject("missing required value '\(name)'") }
        return value
    }

    static func amount(_ name: String, _ text: String?) throws(LineReject) -> String? {
        guard let text else { return nil }
        guard let amount = Amount.parse(text) else { throw .badAmount(name, .string(text)) }
        return Money.format(amount)
    }

    static func day(_ name: String, _ row: CSVRow, _ header: CSVHeader) throws(LineReject) -> String {
        let text = try required(name, row, header)
        guard Timestamp.startOfDay(text) != nil else { throw LineReject("bad date in '\(name)': \"\(text.prefix(40))\"") }
        return text
    }
}

/// MMP cell conventions (CONTRACT.md §1.5): `""`, `null`, `NULL`, `N/A` are empty; an all-zero IDFA is empty.
enum MMPValue {
    static func clean(_ value: String?) -> String? {
        guard let value else { return nil }
        switch value {
        case "", "null", "NULL", "N/A", "None": return nil
        default: return value
        }
    }

    static func cleanIDFA(_ value: String?) -> String? {
        guard let value = clean(value) else { return nil }
        return value.allSatisfy({ $0 == "0" || $0 == "-" }) ? nil : value
    }
}

/// `attribution/*.csv`: AppsFlyer raw data, matched by header name (CONTRACT.md §1.5).
enum MMPEventParser: CSVRowParser {
    static let requiredColumns = ["Event Time", "Event Name"]

    static func parse(_ row: CSVRow, header: CSVHeader) throws(LineReject) -> LineOutcome {
        func cell(_ name: String) -> String? { MMPValue.clean(header.value(name, in: row)) }
        let eventTimeText = try required("Event Time", row, header)
        guard let eventMs = Timestamp.parse(eventTimeText) else { throw .badTime("Event Time", .string(eventTimeText)) }
        var installMs: Int64?
        if let text = cell("Install Time") {
            guard let ms = Timestamp.parse(text) else { throw .badTime("Install Time", .string(text)) }
            installMs = ms
        }
        let customerUserID = cell("Customer User ID")
        let idfv = cell("IDFV")
        let idfa = MMPValue.cleanIDFA(cell("IDFA"))
        let appsflyerID = cell("AppsFlyer ID")
        guard customerUserID != nil || idfv != nil || idfa != nil || appsflyerID != nil else {
            throw LineReject("none of 'Customer User ID', 'IDFV', 'IDFA', 'AppsFlyer ID' has a value")
        }
        var revenue = try amount("Event Revenue", cell("Event Revenue"))
        var revenueCurrency = cell("Event Revenue Currency")
        let revenueUSD = try amount("Event Revenue USD", cell("Event Revenue USD"))
        let eventValue = cell("Event Value")
        if revenue == nil, revenueUSD == nil, let eventValue, let json = try? JSONParser.parse(eventValue), let object = json.objectValue {
            let fields = Fields(object, path: "Event Value.")
            if let value = fields.value("af_revenue") {
                guard let parsed = Amount.parse(value) else { throw .badAmount("Event Value.af_revenue", value) }
                revenue = Money.format(parsed)
                revenueCurrency = try? fields.appleString("af_currency")
            }
        }
        let retargeting = cell("Is Retargeting")?.lowercased() == "true"
        return .accepted([RawRow(.mmpEvents, [
            .integer(eventMs), SQLValue(installMs), .text(try required("Event Name", row, header)), SQLValue(cell("Media Source")),
            SQLValue(cell("Channel")), SQLValue(cell("Campaign")), SQLValue(cell("Campaign ID")), SQLValue(cell("Adset")),
            SQLValue(cell("Ad")), SQLValue(cell("Country Code")), SQLValue(customerUserID), SQLValue(idfv), SQLValue(idfa),
            SQLValue(appsflyerID), SQLValue(revenue), SQLValue(revenueCurrency), SQLValue(revenueUSD),
            .integer(retargeting ? 1 : 0), SQLValue(cell("Platform")), SQLValue(cell("Attributed Touch Type")),
            .text(StableID.hash(eventValue ?? "")),
        ])])
    }
}

/// `spend/*.csv`: `date,media_source,campaign,spend,currency` (CONTRACT.md §1.6).
enum SpendParser: CSVRowParser {
    static let requiredColumns = ["date", "media_source", "campaign", "spend", "currency"]

    static func parse(_ row: CSVRow, header: CSVHeader) throws(LineReject) -> LineOutcome {
        .accepted([RawRow(.spend, [
            .text(try day("date", row, header)), .text(try required("media_source", row, header)),
            SQLValue(header.value("campaign", in: row)), SQLValue(try amount("spend", try required("spend", row, header))),
            .text(try required("currency", row, header)),
        ])])
    }
}

/// `catalog.csv`: `product_id,type,subscription_group,price,currency` (CONTRACT.md §1.6).
enum CatalogParser: CSVRowParser {
    static let requiredColumns = ["product_id", "type", "price", "currency"]

    static func parse(_ row: CSVRow, header: CSVHeader) throws(LineReject) -> LineOutcome {
        .accepted([RawRow(.catalog, [
            .text(try required("product_id", row, header)), .text(try required("type", row, header)),
            SQLValue(header.value("subscription_group", in: row)), SQLValue(try amount("price", try required("price", row, header))),
            .text(try required("currency", row, header)),
        ])])
    }
}

/// `fx.csv`: `date,currency,rate`, where amount × rate is the amount in the reporting currency.
enum FXParser: CSVRowParser {
    static let requiredColumns = ["date", "currency", "rate"]

    static func parse(_ row: CSVRow, header: CSVHeader) throws(LineReject) -> LineOutcome {
        let rate = try amount("rate", try required("rate", row, header))
        guard let rate, let value = Money.parse(rate), value > 0 else { throw LineReject("bad amount in 'rate': must be positive") }
        return .accepted([RawRow(.fx, [.text(try day("date", row, header)), .text(try required("currency", row, header)), .text(rate)])])
    }
}
