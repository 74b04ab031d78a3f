/// What attribution reads and keeps in the store: every verified purchase by user, each user's
/// install as the last report attributed it (`fct_user_installs`, for `history` and the next
/// night), and the spend rows.
enum StoredUserInstalls {
    /// Every verified purchase, by user: read straight through the table and sorted, not looked up
    /// row by row through the partial index on purchase time. In `PurchaseColumn`'s columns.
    static let purchasesByUser = """
        SELECT user_id, purchase_ms, unit_price, quantity, currency, refund_amount FROM int_transactions_resolved NOT INDEXED
        WHERE is_revenue = 1 ORDER BY user_id, purchase_ms, transaction_id
        """

    /// The columns of `purchasesByUser`'s rows.
    enum PurchaseColumn {
        static let userID = 0, purchaseMs = 1, unitPrice = 2, quantity = 3, currency = 4, refundAmount = 5
    }

    /// The columns of `stored`'s rows.
    enum InstallColumn {
        static let userID = 0, installMs = 1, mediaSource = 2, campaign = 3, matchedBy = 4, fileID = 5, line = 6
    }

    /// A statement over the users' installs the table holds now (none in a new store), by user id,
    /// in `InstallColumn`'s columns.
    static func stored(_ database: Database) throws -> Statement {
        let hasTable = try database.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'fct_user_installs'").integerValue > 0
        return try database.cached(hasTable
            ? "SELECT user_id, install_ms, media_source, campaign, matched_by, file_id, line FROM fct_user_installs ORDER BY user_id"
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

    /// The columns of `forEachSpendRow`'s rows.
    enum SpendColumn {
        static let day = 0, mediaSource = 1, campaign = 2, spend = 3, currency = 4
    }

    /// Every stored spend row, in `SpendColumn`'s columns.
    static func forEachSpendRow(_ database: Database, _ body: (Row) throws -> Void) throws {
        try database.forEach("SELECT day, media_source, campaign, spend, currency FROM raw_spend__days", [], body)
    }
}
