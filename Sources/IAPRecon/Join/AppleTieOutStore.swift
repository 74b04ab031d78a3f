import Foundation

/// Reads the tie-out's inputs from the store and writes `fct_apple_tieout` and the
/// `unverified_apple_sales` rows of `fct_findings`.
///
/// Called in the join's last transaction on every run, after the resolved transactions are
/// final: the Sales Report rows are few (one per day, product and country), and the verified
/// side reads only the transactions bought or refunded on the days the reports cover, so
/// recomputing the whole aggregation is cheap and never depends on what the night changed.
enum AppleTieOutStore {
    /// Recomputes the tie-out; returns how many rows it wrote (tie-out rows and findings).
    static func refresh(_ database: Database) throws -> Int {
        try database.execute(Tables.appleTieOut)
        var files = try SourceFiles(database)
        let tieOut = AppleTieOut(sales: try sales(database, files: &files), verified: try verified(database))
        try database.execute("DELETE FROM fct_apple_tieout")
        for row in tieOut.rows {
            try database.run("INSERT INTO fct_apple_tieout VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", [
                .text(row.key.day), .text(row.key.productID), .text(row.key.country), .integer(row.appleUnits),
                .integer(row.verifiedUnits), SQLValue(row.customerPrice.map(Money.format)), SQLValue(row.customerCurrency),
                SQLValue(row.proceeds.map(Money.format)), SQLValue(row.proceedsCurrency),
            ])
        }
        try database.run("DELETE FROM fct_findings WHERE kind = ?", [.text(FindingKind.unverifiedAppleSales.rawValue)])
        for finding in tieOut.findings {
            try database.run("INSERT INTO fct_findings VALUES (?, ?, ?, NULL, NULL, NULL, NULL, ?, ?, ?, ?, ?, ?)", [
                .text(finding.findingID), .text(finding.kind.rawValue), .text(finding.kind.severity.rawValue),
                SQLValue(finding.productID), SQLValue(finding.amount.map(Money.format)),
                SQLValue(finding.amount == nil ? nil : finding.currency), .integer(finding.eventMs), .text(finding.detail),
                .text(files.text(finding.sources)),
            ])
        }
        return tieOut.rows.count + tieOut.findings.count
    }

    static func sales(_ database: Database, files: inout SourceFiles) throws -> [AppleTieOut.SalesLine] {
        var lines: [AppleTieOut.SalesLine] = []
        try database.forEach("""
            SELECT s.day, s.product_id, s.country, s.units_n, s.customer_price, s.customer_currency, s.proceeds, s.proceeds_currency,
                   s.file_id, s.line
            FROM raw_apple__sales s JOIN files f USING (file_id) ORDER BY f.path, s.line
            """) { row in
            lines.append(AppleTieOut.SalesLine(
                day: row.string(0), productID: row.string(1), country: row.string(2), units: row.int(3),
                customerPrice: Money.parse(row.string(4)) ?? 0, customerCurrency: row.string(5),
                proceeds: Money.parse(row.string(6)) ?? 0, proceedsCurrency: row.string(7), source: files.line(row, at: 8)))
        }
        return lines
    }

    /// Verified Production, non-family-shared purchases (+quantity) and refunds (−quantity) on
    /// the Pacific days the reports span. A Family Sharing revocation refunds nothing.
    static func verified(_ database: Database) throws -> [AppleTieOut.VerifiedUnits] {
        var first: String?
        var last: String?
        try database.forEach("SELECT min(day), max(day) FROM raw_apple__sales") { row in
            first = row.optionalString(0)
            last = row.optionalString(1)
        }
        guard let first, let last, let firstStart = Timestamp.startOfDay(first), let lastStart = Timestamp.startOfDay(last) else { return [] }
        let zone = AppleTieOut.reportZone
        let from = zone.utc(fromLocal: firstStart)
        let until = zone.utc(fromLocal: lastStart + 86_400_000)
        var days = DayNames(zone)
        var changes: [AppleTieOut.VerifiedUnits] = []
        try database.forEach("""
            SELECT product_id, storefront, quantity, purchase_ms, refund_ms, refund_type FROM int_transactions_resolved
            WHERE is_revenue = 1 AND ((purchase_ms >= ?1 AND purchase_ms < ?2) OR (refund_ms >= ?1 AND refund_ms < ?2))
            """, [.integer(from), .integer(until)]) { row in
            let productID = row.string(0)
            let country = row.optionalString(1).flatMap(StorefrontCountry.alpha2(ofStorefront:))
            let quantity = row.int(2)
            let purchaseMs = row.int(3)
            if purchaseMs >= from, purchaseMs < until {
                changes.append(.init(day: days(purchaseMs), productID: productID, country: country, units: quantity))
            }
            if let refundMs = row.optionalInt(4), refundMs >= from, refundMs < until, row.optionalString(5) != "FAMILY_REVOKE" {
                changes.append(.init(day: days(refundMs), productID: productID, country: country, units: -quantity))
            }
        }
        return changes
    }
}
