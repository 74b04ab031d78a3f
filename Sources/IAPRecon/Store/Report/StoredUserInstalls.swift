/// What attribution reads and keeps in the store: every verified purchase by user, each user's
/// install as the last report attributed it (`fct_user_installs`, for `history` and the next
/// night), and the spend rows.
enum StoredUserInstalls {
    /// Every verified purchase, by user: read straight through the table and sorted, not looked up
    /// row by row through the partial index on purchase time. In `PurchaseColumn`'s columns.
    static let purchasesByUser = """
        SELECT \(PurchaseColumn.selectList) FROM int_transactions_resolved NOT INDEXED
        WHERE is_revenue = 1 ORDER BY user_id, purchase_ms, transaction_id
        """

    typealias PurchaseColumn = PurchaseByUserColumn

    typealias InstallColumn = UserInstallColumn

    /// A statement over the users' installs the table holds now (none in a new store), by user id,
    /// in `InstallColumn`'s columns.
    static func stored(_ database: Database) throws -> Statement {
        let hasTable = try database.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'fct_user_installs'").integerValue > 0
        return try database.cached(hasTable
            ? "SELECT \(InstallColumn.selectList) FROM fct_user_installs ORDER BY user_id"
            : "SELECT NULL WHERE 0")
    }

    /// Table 0 writes a user's install (user, ms, media source, campaign, matched by, the install's
    /// file id and line), which the caller sends only when it differs from the stored one
    /// (`AttributionReport.UserInstall`); table 1 removes a user no longer reported.
    static let writes = [
        """
        INSERT OR REPLACE INTO fct_user_installs VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
        """,
        "DELETE FROM fct_user_installs WHERE user_id = ?1",
    ]

    /// Every stored spend row, in `SpendColumn`'s columns.
    static func forEachSpendRow(_ database: Database, _ body: (Row) throws -> Void) throws {
        try database.forEach("SELECT \(SpendColumn.selectList) FROM raw_spend__days JOIN files USING (file_id)", [], body)
    }
}

extension PurchaseByUserColumn: SelectedColumn {
    var sql: String { ["user_id", "purchase_ms", "unit_price", "quantity", "currency", "refund_amount"][rawValue] }
}

extension UserInstallColumn: SelectedColumn {
    var sql: String { ["user_id", "install_ms", "media_source", "campaign", "matched_by", "file_id", "line"][rawValue] }
}

extension SpendColumn: SelectedColumn {
    var sql: String { ["day", "media_source", "campaign", "spend", "currency", "path", "line"][rawValue] }
}
