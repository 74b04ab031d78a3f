import Foundation

/// A CSV header: column positions by name.
struct CSVHeader {
    let names: [String]
    private let positions: [String: Int]
    /// The position of each of a parser's `columns` (-1 when the header lacks it), looked up
    /// once per file instead of hashing a name for every cell of every row.
    private let slots: [Int]

    /// `aliases` maps another naming of a column (AppsFlyer's API names) to the one the parser reads.
    init(_ names: [String], columns: [String] = [], aliases: [String: String] = [:]) {
        self.names = names.map { aliases[trimmedSpaces($0)] ?? trimmedSpaces($0) }
        var positions: [String: Int] = [:]
        for (index, name) in self.names.enumerated() where positions[name] == nil { positions[name] = index }
        self.positions = positions
        slots = columns.map { positions[$0] ?? -1 }
    }

    func has(_ name: String) -> Bool { positions[name] != nil }

    /// The cell of column `name`, trimmed; nil when the column is absent or the cell empty.
    func value(_ name: String, in row: CSVRow) -> String? {
        value(at: positions[name] ?? -1, in: row)
    }

    /// The cell of the parser's column number `slot` (its place in the parser's `columns`), as `value(_:in:)`.
    func value(slot: Int, in row: CSVRow) -> String? {
        value(at: slot < slots.count ? slots[slot] : -1, in: row)
    }

    /// Calls `body` with the bytes `value(slot:in:)` makes its text of; nil, without calling it,
    /// where that is nil.
    func withValue<Result>(slot: Int, in row: CSVRow, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result? {
        let position = slot < slots.count ? slots[slot] : -1
        guard position >= 0, position < row.count else { return nil }
        return row.withTrimmedField(position) { cell in cell.isEmpty ? nil : body(cell) }
    }

    private func value(at position: Int, in row: CSVRow) -> String? {
        guard position >= 0, position < row.count else { return nil }
        let cell = row.trimmedField(position)
        return cell.isEmpty ? nil : cell
    }
}

/// `text` without leading and trailing spaces and tabs (cheap: no Foundation bridging).
func trimmedSpaces(_ text: String) -> String {
    var text = text
    let untouched = text.withUTF8 { bytes in
        guard let first = bytes.first, let last = bytes.last else { return true }
        return first != 0x20 && first != 0x09 && last != 0x20 && last != 0x09
    }
    if untouched { return text }
    let utf8 = text.utf8
    guard let start = utf8.firstIndex(where: { $0 != 0x20 && $0 != 0x09 }),
          let end = utf8.lastIndex(where: { $0 != 0x20 && $0 != 0x09 }) else { return "" }
    return String(text[start...end])
}

/// A parser for one CSV source: the columns it needs, and one row to raw rows.
protocol CSVRowParser {
    static var requiredColumns: [String] { get }
    /// The columns `parse` reads by slot (`CSVHeader.value(slot:in:)`), in slot order.
    static var columns: [String] { get }
    /// Other names of the columns, mapped to those `columns` and `requiredColumns` use.
    static var headerAliases: [String: String] { get }
    /// Every column `parse` reads: a cell of one of them must be valid UTF-8.
    static var readColumns: [String] { get }
    static func parse(_ row: CSVRow, header: CSVHeader, rules: LineRules) throws(LineReject) -> LineOutcome
}

extension CSVRowParser {
    static var columns: [String] { [] }
    static var headerAliases: [String: String] { [:] }
    static var readColumns: [String] { requiredColumns + columns }

    static func required(_ name: String, _ row: CSVRow, _ header: CSVHeader) throws(LineReject) -> String {
        guard let value = header.value(name, in: row) else { throw LineReject("missing required value '\(name)'") }
        return value
    }

    /// An amount cell: exact, within range, and not negative unless `negativeAllowed` (CONTRACT.md §1).
    static func amount(_ name: String, _ text: String?, negativeAllowed: Bool = false) throws(LineReject) -> String? {
        guard let text else { return nil }
        return Money.format(try AmountRange.amount(.string(text), field: name, negativeAllowed: negativeAllowed))
    }

    static func day(_ name: String, _ row: CSVRow, _ header: CSVHeader) throws(LineReject) -> String {
        let text = try required(name, row, header)
        guard Timestamp.startOfDay(text) != nil else { throw LineReject("bad date in '\(name)': \(Redaction.quoted(.string(text)))") }
        return text
    }
}

/// MMP cell conventions (CONTRACT.md §1.5): `""`, `null`, `NULL`, `N/A` are empty; an all-zero IDFA is empty.
enum MMPValue {
    static func clean(_ value: String?) -> String? {
        // Most cells are ids and names: only one of 0, 3 or 4 bytes can be an empty marker.
        guard let value else { return nil }
        let length = value.utf8.count
        guard length == 0 || length == 3 || length == 4 else { return value }
        switch value {
        case "", "null", "NULL", "N/A", "None": return nil
        default: return value
        }
    }

    /// Whether a cell is the text `true` in any case (`TRUE`, `True`): compared as ASCII bytes,
    /// without lowercasing it into another string for every row (no other character lowercases
    /// to one of these letters).
    static func isTrue(_ value: String?) -> Bool {
        guard let value else { return false }
        var utf8 = value.utf8.makeIterator()
        for letter in "true".utf8 {
            guard let byte = utf8.next(), byte | 0x20 == letter else { return false }
        }
        return utf8.next() == nil
    }

    static func cleanIDFA(_ value: String?) -> String? {
        guard let value = clean(value) else { return nil }
        return value.utf8.allSatisfy({ $0 == UInt8(ascii: "0") || $0 == UInt8(ascii: "-") }) ? nil : uuidCase(value)
    }

    /// An IDFV cleaned as every MMP cell, in the one case `uuidCase` gives.
    static func cleanIDFV(_ value: String?) -> String? {
        clean(value).map(uuidCase)
    }

    /// A UUID (an IDFV or IDFA) in uppercase, as iOS and AppsFlyer write it: RFC 4122 reads its hex digits
    /// in either case, and an app server that keeps it in a `uuid` column gives it back lowercase, which
    /// would join no install. A value of other characters than hex digits and hyphens is no UUID, and
    /// is kept as it is.
    static func uuidCase(_ value: String) -> String {
        let utf8 = value.utf8
        guard utf8.contains(where: { $0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "f") }),
              utf8.allSatisfy({ ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "f"))
                  || ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "F")) || $0 == UInt8(ascii: "-") }) else { return value }
        return String(decoding: utf8.map { $0 >= UInt8(ascii: "a") ? $0 - 0x20 : $0 }, as: UTF8.self)
    }
}

/// `attribution/*.csv`: AppsFlyer raw data, matched by header name (CONTRACT.md §1.5).
enum MMPEventParser: CSVRowParser {
    static let requiredColumns = [Column.eventTime.name, Column.eventName.name]
    static let columns = Column.allCases.map(\.name)
    /// AppsFlyer's Pull API (with API headers), Push API and Data Locker name the same columns so.
    static let headerAliases = Dictionary(uniqueKeysWithValues: Column.allCases.map { ($0.apiName, $0.name) })

    /// The columns read, by slot: those attribution uses, over the largest input. The export's
    /// other columns (channel, ad set, country, platform…) are not read, and not kept.
    enum Column: Int, CaseIterable {
        case eventTime, eventName, installTime, customerUserID, idfv, idfa, appsflyerID, eventRevenue, eventRevenueCurrency
        case eventRevenueUSD, eventValue, isRetargeting, mediaSource, campaign

        var name: String {
            switch self {
            case .eventTime: "Event Time"
            case .eventName: "Event Name"
            case .installTime: "Install Time"
            case .customerUserID: "Customer User ID"
            case .idfv: "IDFV"
            case .idfa: "IDFA"
            case .appsflyerID: "AppsFlyer ID"
            case .eventRevenue: "Event Revenue"
            case .eventRevenueCurrency: "Event Revenue Currency"
            case .eventRevenueUSD: "Event Revenue USD"
            case .eventValue: "Event Value"
            case .isRetargeting: "Is Retargeting"
            case .mediaSource: "Media Source"
            case .campaign: "Campaign"
            }
        }

        /// The column's name in AppsFlyer's API exports (CONTRACT.md §1.5).
        var apiName: String {
            switch self {
            case .eventTime: "event_time"
            case .eventName: "event_name"
            case .installTime: "install_time"
            case .customerUserID: "customer_user_id"
            case .idfv: "idfv"
            case .idfa: "idfa"
            case .appsflyerID: "appsflyer_id"
            case .eventRevenue: "event_revenue"
            case .eventRevenueCurrency: "event_revenue_currency"
            case .eventRevenueUSD: "event_revenue_usd"
            case .eventValue: "event_value"
            case .isRetargeting: "is_retargeting"
            case .mediaSource: "media_source"
            case .campaign: "campaign"
            }
        }
    }

    static func parse(_ row: CSVRow, header: CSVHeader, rules: LineRules) throws(LineReject) -> LineOutcome {
        func cell(_ column: Column) -> String? { MMPValue.clean(header.value(slot: column.rawValue, in: row)) }
        func required(_ column: Column) throws(LineReject) -> String {
            guard let value = header.value(slot: column.rawValue, in: row) else { throw LineReject("missing required value '\(column.name)'") }
            return value
        }
        // Read from the cell's bytes: its text is made only to name it in a reject.
        guard let readEventTime = header.withValue(slot: Column.eventTime.rawValue, in: row, { time(bytes: $0, zone: rules.mmpZone) }) else {
            throw LineReject("missing required value '\(Column.eventTime.name)'")
        }
        guard let eventTime = readEventTime else { throw .badTime("Event Time", .string(try required(.eventTime))) }
        let eventMs = eventTime.wallMs
        let eventName = try required(.eventName)
        let install = eventName == "install", purchase = eventName == "af_purchase"
        // Only an install's own time is kept, and only a purchase's revenue: a cell the row's event
        // does not use is not read, so whatever it holds cannot cost the row its ids and links.
        var installMs: Int64?
        if install, let text = cell(.installTime) {
            guard let installTime = time(text, zone: rules.mmpZone) else { throw .badTime("Install Time", .string(text)) }
            installMs = installTime.wallMs
        }
        let customerUserID = cell(.customerUserID)
        let appsflyerID = cell(.appsflyerID)
        // Only an install keeps its device ids: another row reads them only to learn whether it has an
        // id at all, when it has neither of the two it keeps.
        let readsDeviceIDs = install || (customerUserID == nil && appsflyerID == nil)
        let idfv = readsDeviceIDs ? MMPValue.cleanIDFV(header.value(slot: Column.idfv.rawValue, in: row)) : nil
        let idfa = readsDeviceIDs ? MMPValue.cleanIDFA(cell(.idfa)) : nil
        guard customerUserID != nil || idfv != nil || idfa != nil || appsflyerID != nil else {
            throw LineReject("none of 'Customer User ID', 'IDFV', 'IDFA', 'AppsFlyer ID' has a value")
        }
        // MMP revenue may be negative (a refund event); only its size is checked.
        var revenue = purchase ? try amount("Event Revenue", cell(.eventRevenue), negativeAllowed: true) : nil
        var revenueCurrency = cell(.eventRevenueCurrency)
        var revenueCurrencyField = Column.eventRevenueCurrency.name
        let revenueUSD = purchase ? try amount("Event Revenue USD", cell(.eventRevenueUSD), negativeAllowed: true) : nil
        // Only an install's or a purchase's Event Value is kept (as a hash), so only theirs is made text.
        let eventValue = install || purchase ? cell(.eventValue) : nil
        // Only a purchase's revenue is kept (`MMPEvents`): another event's Event Value is not read,
        // so it cannot cost the row. A purchase's is its revenue's to say when the revenue columns
        // are empty: one that cannot be read would lose it unseen.
        if purchase, revenue == nil, revenueUSD == nil, let eventValue {
            let bytes = Array(eventValue.utf8)
            let tape = JSONTape()
            try bytes.withUnsafeBufferPointer { bytes throws(LineReject) in
                do throws(JSONSyntaxError) { try tape.read(bytes) } catch { throw LineReject("bad JSON in 'Event Value': \(error)") }
                try tape.withRoot(in: bytes) { object throws(LineReject) in
                    guard object.kind == .object else { throw .wrongType("Event Value", expected: "an object", got: object) }
                    let fields = Fields(object, path: "Event Value.")
                    if let value = try fields.value("af_revenue") {
                        revenue = Money.format(try AmountRange.amount(value, field: "Event Value.af_revenue", negativeAllowed: true))
                        revenueCurrency = try fields.string("af_currency")
                        revenueCurrencyField = fields.path + "af_currency"
                    }
                }
            }
        }
        let retargeting = MMPValue.isTrue(cell(.isRetargeting))
        // The store keeps what attribution reads of each event (`MMPEvents`): an install's own
        // install time, campaign and device ids; a purchase's revenue in USD, else its revenue and
        // currency (converted at the report's fx rate, read only then); of an install or a purchase
        // what a repeat is told by (its name and the hash of its event value, none for an empty
        // one); of every row its time and the ids a user is linked by. Another event is never a
        // repeat of either: it keeps no name or event value.
        // A revenue's currency is read only with a purchase's revenue in it, and none in USD; only
        // then is it checked. A currency no revenue of the row uses (an install's, or beside a
        // figure in USD) is not read, so an odd one cannot cost an install its attribution.
        let localRevenue = revenueUSD == nil ? revenue : nil
        var localCurrency: String?
        if localRevenue != nil, let revenueCurrency {
            localCurrency = try CurrencyCode.checked(revenueCurrency, field: revenueCurrencyField)
        }
        try rules.checkEventTime(eventTime.utcMs, field: "Event Time")
        return .accepted([MMPEventLine(
            eventWallMs: eventMs, installWallMs: installMs, eventName: install || purchase ? eventName : nil,
            mediaSource: install ? cell(.mediaSource) : nil, campaign: install ? cell(.campaign) : nil, customerUserID: customerUserID,
            idfv: install ? idfv : nil, idfa: install ? idfa : nil, appsflyerID: appsflyerID,
            revenue: localRevenue, revenueCurrency: localCurrency,
            revenueUSD: revenueUSD,
            isRetargeting: retargeting, eventValueKey: install || purchase ? eventValue.map(StableID.bytes) : nil
        ).rawRow()])
    }
}

extension MMPEventParser {
    /// An MMP time as the instant it names and as the wall clock in `zone` (`--mmp-tz`) the store keeps.
    ///
    /// MMP exports write times without an offset, in `--mmp-tz` (CONTRACT.md §1.5); a time that
    /// carries its own (`Z`, `+09:00`, or epoch milliseconds) is that instant whatever the zone
    /// (CONTRACT.md, "Times"), kept as the wall clock `zone` shows then. The store keeps one wall
    /// clock per time, so a later run with another `--mmp-tz` shifts that instant as it shifts
    /// every MMP time of the files it does not read again.
    static func time(_ text: String, zone: Zone) -> (utcMs: Int64, wallMs: Int64)? {
        var text = text
        return text.withUTF8 { time(bytes: $0, zone: zone) }
    }

    /// `time(_:zone:)` of the UTF-8 `bytes` of a time.
    static func time(bytes: UnsafeBufferPointer<UInt8>, zone: Zone) -> (utcMs: Int64, wallMs: Int64)? {
        // The zone is applied here rather than in the closure: a closure holding it copies the zone
        // on every call, and a wall clock read with no offset is the same instant less the zone's.
        var written: Int64?
        guard let utcMs = Timestamp.parse(bytes: bytes, localOffsetMs: { local in
            written = local
            return 0
        }) else { return nil }
        if let written { return (written - zone.offsetMs(atLocal: written), written) }
        return (utcMs, utcMs + zone.offsetMs(atUTC: utcMs))
    }
}

/// `spend/*.csv`: `date,media_source,campaign,spend,currency` (CONTRACT.md §1.6).
enum SpendParser: CSVRowParser {
    static let requiredColumns = ["date", "media_source", "campaign", "spend", "currency"]

    /// How far ahead of UTC a day starts first: at UTC+14 (`Pacific/Kiritimati`), the zone furthest ahead.
    static let earliestZoneOffsetMs: Int64 = 14 * 3_600_000

    static func parse(_ row: CSVRow, header: CSVHeader, rules: LineRules) throws(LineReject) -> LineOutcome {
        let day = try day("date", row, header)
        // Spend always names who was paid. Attribution reads its media source as the MMP's, where
        // `None`, `N/A` and `null` are empty and empty is organic: read so, such a row would be
        // organic spend. It is rejected as the empty cell is.
        guard let mediaSource = MMPValue.clean(try required("media_source", row, header)) else {
            throw LineReject("missing required value 'media_source'")
        }
        let spend = SpendLine(
            day: day, mediaSource: mediaSource,
            campaign: header.value("campaign", in: row), spend: try amount("spend", try required("spend", row, header)),
            currency: try currency("currency", row, header))
        // The day is one of the report's `--tz`, which `ingest` and `validate` are not given, and which
        // a later run may change without reading the file again: it is judged by where it starts
        // first, so a row is rejected only when its day starts more than a day after the clock in every zone.
        if let dayStart = Timestamp.startOfDay(day) {
            try rules.checkDay(day, field: "date", dayMs: dayStart, startMs: dayStart - earliestZoneOffsetMs, where: "in no zone before")
        }
        return .accepted([spend.rawRow()])
    }
}

/// `catalog.csv`: `product_id,type,subscription_group,price,currency` (CONTRACT.md §1.6).
enum CatalogParser: CSVRowParser {
    static let requiredColumns = ["product_id", "type", "price", "currency"]
    static let readColumns = requiredColumns + ["subscription_group"]
    /// The contract's product types, spelled as it spells them: another spelling
    /// (`Auto-Renewable`, `subscription`) would read as a product that never renews.
    static let types: Set<String> = ["consumable", "non_consumable", "auto_renewable", "non_renewing"]

    static func parse(_ row: CSVRow, header: CSVHeader, rules: LineRules) throws(LineReject) -> LineOutcome {
        let productID = try required("product_id", row, header)
        let type = try required("type", row, header)
        guard types.contains(type) else { throw LineReject("bad type in 'type': \(Redaction.quoted(.string(type)))") }
        return .accepted([ScopeFacts.CatalogProduct(
            productID: productID, type: type,
            subscriptionGroup: header.value("subscription_group", in: row), price: try amount("price", try required("price", row, header)),
            currency: try currency("currency", row, header)
        ).rawRow()])
    }
}

/// `fx.csv`: `date,currency,rate`, where amount × rate is the amount in the reporting currency.
enum FXParser: CSVRowParser {
    static let requiredColumns = ["date", "currency", "rate"]

    static func parse(_ row: CSVRow, header: CSVHeader, rules: LineRules) throws(LineReject) -> LineOutcome {
        let rate = try amount("rate", try required("rate", row, header), negativeAllowed: true)
        guard let rate, let value = Money.parse(rate), value > 0 else { throw LineReject("bad amount in 'rate': must be positive") }
        return .accepted([FXRateLine(day: try day("date", row, header), currency: try currency("currency", row, header), rate: rate).rawRow()])
    }
}
