import Foundation

/// The join's results as the store keeps them: the resolved transactions and findings
/// (`Tables.joinResults`), the settings they were decided with (`int_run_settings`), and what
/// the next join reads of them.
///
/// A full rebuild writes its tables beside the current ones and switches them in whole
/// (`RebuiltTables`); an incremental join updates the current ones in place (`ScopeRows`).
enum StoredJoinResults {
    static let tables = Tables.joinResults

    /// Whether the results have this iaprecon's shape: an older one's are rebuilt in full by the
    /// next join, never read or updated as they are. Those with no `delivered_to` predate it, those
    /// with no `is_apple_sale` tied out without free trials; those with no index of matched orders
    /// were written while an orders table held each match too; those with no `fct_finding_chains`
    /// listed a finding about several chains on the first only.
    static func areCurrent(_ database: Database) throws -> Bool {
        let index = Tables.matchedOrderIndex
        return try database.scalar("""
            SELECT (SELECT count(*) FROM pragma_table_info('int_transactions_resolved') WHERE name IN ('delivered_to', 'is_apple_sale'))
                 + (SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'int_transactions_resolved'
                      AND name IN ('\(index)', '\(index)\(RebuiltTables.indexTwinSuffix)'))
                 + (SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'fct_finding_chains')
            """) == .integer(4)
    }

    /// Whether a join has reconciled the store (its settings are kept), whatever the results' shape.
    static func exist(_ database: Database) throws -> Bool {
        try database.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'int_run_settings'").integerValue > 0
    }

    /// The as-of, grace and MMP zone the last join decided with; nil when no join kept them.
    static func settings(_ database: Database) throws -> JoinSettings? {
        guard try exist(database) else { return nil }
        var settings: JoinSettings?
        try database.forEach("SELECT as_of_ms, grace_ms, mmp_tz FROM int_run_settings") { row in
            settings = JoinSettings(asOfMs: row.int(0), graceMs: row.int(1), mmpZone: row.string(2))
        }
        return settings
    }

    /// The settings of the last join whose results the next one may update; nil when there was
    /// none or its results are an older iaprecon's.
    static func previousSettings(_ database: Database) throws -> JoinSettings? {
        try areCurrent(database) ? settings(database) : nil
    }

    /// Keeps the settings this join decided with, in place of the last one's.
    static func saveSettings(_ settings: JoinSettings, in database: Database) throws {
        try database.execute(Tables.runSettings)
        try database.run("DELETE FROM int_run_settings")
        try database.run("INSERT INTO int_run_settings VALUES (?, ?, ?)", [.integer(settings.asOfMs), .integer(settings.graceMs), .text(settings.mmpZone)])
    }

    /// About how many transactions the results hold (the table's highest row id: no count of its rows).
    static func transactionCountEstimate(_ database: Database) throws -> Int {
        Int(try database.scalar("SELECT max(rowid) FROM int_transactions_resolved").integerValue)
    }

    static func findingCount(_ database: Database) throws -> Int {
        Int(try database.scalar("SELECT count(*) FROM fct_findings").integerValue)
    }

    /// The latest event time of the stored inputs, and the latest MMP wall-clock time (in the MMP's
    /// zone, which the caller knows): ingest keeps each file's (`StoredFiles.latestTimesSQL`), so
    /// no table is scanned.
    static func latestEventTimes(_ database: Database) throws -> (ms: Int64?, mmpWallMs: Int64?) {
        var latest: (ms: Int64?, mmpWallMs: Int64?) = (nil, nil)
        try database.forEach("SELECT max(latest_ms), max(latest_mmp_wall_ms) FROM files") { row in
            latest = (row.optionalInt(0), row.optionalInt(1))
        }
        return latest
    }

    /// The latest day a spend row names (ingest keeps only `yyyy-MM-dd` days, which sort as text).
    static func latestSpendDay(_ database: Database) throws -> String? {
        guard case .text(let day)? = try database.scalar("SELECT max(day) FROM raw_spend__days") else { return nil }
        return day
    }

    /// A full rebuild starts: its tables are made beside the current ones, which readers keep seeing until `switchIn`.
    static func beginRebuild(_ database: Database) throws {
        try database.execute(tables.createBeside)
    }

    /// The rebuilt tables' indexes, in one transaction, built on them beside the current ones under
    /// the names those do not hold (`RebuiltTables.createIndexes`): the switch then only renames.
    static func createIndexesBeside(_ database: Database) throws {
        try database.transaction {
            let existing = try database.indexNames()
            try database.execute(tables.tables.map { tables.createIndexes(of: $0.name, beside: true, existing: existing) }.joined(separator: "\n"))
        }
    }

    /// The rebuilt tables replace the current ones, with the indexes built beside them
    /// (`createIndexesBeside`); an index not built there is built here.
    static func switchIn(_ database: Database) throws {
        try database.execute(tables.switchIn)
        try createMissingIndexes(database)
    }

    /// An incremental join starts: a rebuild a killed run left beside the tables is dropped.
    static func beginUpdate(_ database: Database) throws {
        try database.execute(tables.dropBeside)
    }

    /// Indexes an older store's tables lack, made once the incremental join's rows are in.
    static func createMissingIndexes(_ database: Database) throws {
        try database.execute(tables.createMissingIndexes(existing: try database.indexNames()))
    }

    /// The inserts of tables 0, 1, 2 of a join's rows (resolved transactions, findings, their chains: `ScopeRows.tables`),
    /// each into the table `target` names for it (a full rebuild's `__next` twin, an incremental
    /// join's own table, which gets only the rows `ScopeRows` keeps).
    static func inserts(into target: (String) -> String) -> [String] {
        ScopeRows.tables.map { table in
            "INSERT INTO \(target(table.name)) VALUES (\(Array(repeating: "?", count: table.columns).joined(separator: ", ")))"
        }
    }

    /// A resolved transaction as a row of table 0 (`int_transactions_resolved`); `ids` holds its
    /// ids' texts, `amounts` the texts of amounts written before.
    static func row(of item: ResolvedTransaction, ids: IDTable, amounts: AmountTexts = AmountTexts()) -> [SQLValue] {
        let transaction = item.transaction
        return [
            .text(ids.text(transaction.transactionID)), .text(ids.text(transaction.originalTransactionID)),
            .text(ids.text(transaction.productID)),
            .integer(transaction.purchaseMs), SQLValue(transaction.expiresMs), SQLValue(transaction.environment),
            SQLValue(item.userID.map(ids.text)), SQLValue(item.order.map { ids.text($0.orderID) }), SQLValue(item.matchRule?.rawValue),
            SQLValue(item.unitPrice.map(amounts.text)), SQLValue(item.currency), .text(item.priceSource.rawValue),
            .integer(transaction.quantity), SQLValue(transaction.storefront ?? item.order?.storefront),
            .integer(item.isRevenue ? 1 : 0), SQLValue(item.refund?.ms), SQLValue(item.refundAmount.map(amounts.text)),
            SQLValue(item.refund?.revocationType), .integer(Int64(item.deliveries.count)), SQLValue(transaction.ownership),
            .text(item.deliveredTo(ids)), .integer(item.isAppleSale ? 1 : 0),
        ]
    }

    /// A finding's links to the chains it is about, as rows of table 2 (`fct_finding_chains`), each chain once.
    static func chainRows(of finding: Finding) -> [[SQLValue]] {
        let id = SQLValue.text(finding.findingID)
        var seen = Set<String>()
        return finding.chainIDs.filter { seen.insert($0).inserted }.map { [id, .text($0)] }
    }

    /// A finding as a row of table 1 (`fct_findings`); `files` names its sources.
    static func row(of finding: Finding, files: SourceFiles) -> [SQLValue] {
        [
            .text(finding.findingID), .text(finding.kind.rawValue), .text(finding.kind.severity.rawValue),
            SQLValue(finding.userID), SQLValue(finding.orderID), SQLValue(finding.transactionID),
            SQLValue(finding.originalTransactionID), SQLValue(finding.productID), SQLValue(finding.amount.map(Money.format)),
            SQLValue(finding.amount == nil ? nil : finding.currency), .integer(finding.eventMs), .text(finding.detail),
            .text(files.text(finding.sources)),
        ]
    }
}

/// Each distinct amount's text (`Money.format`), made once: the rows of a batch repeat a few
/// prices over and over, and a `Decimal`'s text takes far longer to make than to look up. Equal
/// amounts have one text, however they are held (`12.500` and `12.5` are both `12.5`). For one
/// thread: each batch of the join has its own.
final class AmountTexts {
    private var texts: [Decimal: String] = [:]

    func text(_ amount: Decimal) -> String {
        if let text = texts[amount] { return text }
        let text = Money.format(amount)
        texts[amount] = text
        return text
    }
}
