/// The raw layer: one table per source entity, one row per accepted line
/// (or per transaction inside a receipt or notification line), each keeping
/// the `file_id` and `line` it came from.
///
/// Values are already cast (times in UTC epoch ms, money as exact decimal
/// text) because a line whose time or amount does not parse is a reject
/// (CONTRACT.md §1), and that must be decided while the line is at hand.
public enum RawTable: Int, CaseIterable, Sendable {
    case orders
    case deliveries
    case revocations
    case verifications
    case appleTransactions
    case notifications
    case registrations
    case mmpEvents
    case spend
    case catalog
    case fx
    case appleSales
    case transactionBundles
    case salesApps
    case transactionUpgrades

    public var name: String {
        switch self {
        case .orders: "raw_server__orders"
        case .deliveries: "raw_server__deliveries"
        case .revocations: "raw_server__revocations"
        case .verifications: "raw_receipts__verifications"
        case .appleTransactions: "raw_apple__transactions"
        case .notifications: "raw_notifications__notifications"
        case .registrations: "raw_registrations__users"
        case .mmpEvents: "raw_mmp__events"
        case .spend: "raw_spend__days"
        case .catalog: "raw_catalog__products"
        case .fx: "raw_fx__rates"
        case .appleSales: "raw_apple__sales"
        case .transactionBundles: "raw_apple__transaction_bundles"
        case .salesApps: "raw_apple__sales_apps"
        case .transactionUpgrades: "raw_apple__transaction_upgrades"
        }
    }

    /// Columns after `file_id, line, item`; `_ms` and `_n` columns are INTEGER, device ids and an MMP
    /// row's event value BLOB, the rest TEXT, but for the sightings' coded columns (`origin` and
    /// Apple's enumerations: `AppleCodes`).
    public var columns: [String] { createdColumns + addedColumns }

    /// `columns.count`, counted once per table rather than for every row a parser makes.
    var columnCount: Int { Self.columnCounts[rawValue] }
    private static let columnCounts = allCases.map(\.columns.count)

    /// Columns a later migration added (`Schema`), after those the table was created with: the
    /// order of the insert's values.
    var addedColumns: [String] {
        switch self {
        case .appleTransactions: ["offer"]
        default: []
        }
    }

    /// The columns the table's migration created it with.
    private var createdColumns: [String] {
        switch self {
        case .orders: ["ts_ms", "order_id", "user_id", "product_id", "price", "currency", "storefront"]
        case .deliveries: ["ts_ms", "user_id", "transaction_id", "product_id", "order_id", "quantity_n", "delivery_id"]
        case .revocations: ["ts_ms", "user_id", "transaction_id", "reason"]
        case .verifications: ["received_ms", "user_id", "order_id", "transaction_id", "status_n", "environment", "bundle_id", "shape"]
        case .appleTransactions:
            [
                "origin", "event_ms", "user_id", "claimed_order_id", "transaction_id", "original_transaction_id",
                "product_id", "purchase_ms", "expires_ms", "revocation_ms", "revocation_reason", "revocation_type",
                "revocation_percentage_n", "price_milli_n", "currency", "storefront", "environment", "app_account_token",
                "type", "quantity_n", "ownership", "subscription_group", "notification_uuid", "notification_type",
            ]
        case .notifications: ["notification_uuid", "notification_type", "subtype", "signed_ms", "environment", "version", "transaction_id", "bundle_id"]
        case .registrations: ["ts_ms", "user_id", "method", "idfv", "idfa", "appsflyer_id", "country"]
        // Only what attribution reads (`MMPEvents`; migrations 8 and 11).
        case .mmpEvents:
            [
                "event_wall_ms", "install_wall_ms", "event_name", "media_source", "campaign", "customer_user_id", "idfv", "idfa",
                "appsflyer_id", "revenue", "revenue_currency", "revenue_usd", "is_retargeting_n", "event_value_key",
            ]
        case .spend: ["day", "media_source", "campaign", "spend", "currency"]
        case .catalog: ["product_id", "type", "subscription_group", "price", "currency"]
        case .fx: ["day", "currency", "rate"]
        case .appleSales:
            ["day", "product_id", "product_type", "units_n", "country", "customer_price", "customer_currency", "proceeds", "proceeds_currency"]
        // Keyed as the sighting it belongs to (`AppleTransaction.bundleApartFromLine`).
        case .transactionBundles: ["bundle_id"]
        // Keyed as the Sales Report row it belongs to.
        case .salesApps: ["parent_sku"]
        // Keyed as the sighting it belongs to (`AppleTransaction.upgradedMs`).
        case .transactionUpgrades: ["upgraded_ms"]
        }
    }

    /// The indexes in `columns` of device and MMP ids, which the store keeps only as
    /// pseudonyms (`DeviceIDPseudonyms`).
    var deviceIDColumns: [Int] { Self.deviceIDColumnsByTable[rawValue] }

    /// Found once: every row of a batch asks.
    private static let deviceIDColumnsByTable: [[Int]] = allCases.map { table in
        switch table {
        case .registrations, .mmpEvents: ["idfv", "idfa", "appsflyer_id"].compactMap { table.columns.firstIndex(of: $0) }
        default: []
        }
    }

    /// Calls `body` with each value the store keeps of `values`, a row of this table as its parser
    /// read it, in column order, its device ids as their `pseudonyms` (`deviceIDColumns`).
    ///
    /// A notification beside the transactions it carries (kept as Apple's sightings) keeps its
    /// signing time and version, which date the input (CONTRACT.md §2's as-of); only a
    /// `CONSUMPTION_REQUEST` keeps what its answer in `consumption_requests.jsonl` names too: its
    /// uuid, type and transaction. Nothing reads another notification's uuid, type, subtype,
    /// environment or transaction here.
    ///
    /// Value by value, each lent where it lies: a changed copy of the row's values would retain
    /// and release every string in it, for every row ingest packs.
    func forEachKeptValue(of values: [SQLValue], pseudonyms: DeviceIDPseudonyms?, _ body: (SQLValue) -> Void) {
        let dropsUnread = self == .notifications && values[Self.notificationType] != .text("CONSUMPTION_REQUEST")
        let deviceIDs = pseudonyms == nil ? [] : deviceIDColumns
        values.withUnsafeBufferPointer { values in
            // Most rows keep every value as it is.
            guard dropsUnread || !deviceIDs.isEmpty else {
                for value in values { body(value) }
                return
            }
            let unread = dropsUnread ? Self.notificationUnread : []
            for column in values.indices {
                if unread.contains(column) {
                    body(.null)
                } else if let pseudonyms, deviceIDs.contains(column), case .text(let id) = values[column] {
                    body(.blob(pseudonyms.pseudonym(id)))
                } else {
                    body(values[column])
                }
            }
        }
    }

    private static let notificationType = RawTable.notifications.columns.firstIndex(of: "notification_type") ?? 0
    private static let notificationUnread = ["notification_uuid", "notification_type", "subtype", "environment", "transaction_id"]
        .compactMap { RawTable.notifications.columns.firstIndex(of: $0) }

}

/// One row for a raw table, made from a parser's typed line on the worker thread that parsed it
/// (`Store/Ingest/RawRows.swift`).
public struct RawRow: Sendable, Equatable {
    public var table: RawTable
    /// Which transaction of a multi-transaction line this is (0 for single-row lines).
    public var item: Int
    /// Values in `table.columns` order.
    public var values: [SQLValue]

    public init(_ table: RawTable, item: Int = 0, _ values: [SQLValue]) {
        precondition(values.count == table.columnCount, "\(table.name) takes \(table.columns.count) values")
        self.table = table
        self.item = item
        self.values = values
    }
}
