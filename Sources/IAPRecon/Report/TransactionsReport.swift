/// `transactions.csv`: one row per verified transaction, the rows behind every revenue number.
///
/// Finance needs the list a total is made of, as subscription platforms export it: who bought
/// what, which order it matched and by which rule, where its price came from, whether and how it
/// was refunded, who received it, and which findings name it. The reporting-currency columns are
/// filled exactly where `revenue_daily.csv` counts the transaction (verified Production revenue,
/// converted at the purchase day's rate, its refund at that same rate), so their sums equal that
/// file's `gross_usd` and `refunds_usd` totals. Streamed from the store in purchase order; nothing
/// is held in memory but the catalog and the rates.
enum TransactionsReport {
    static let header = [
        "transaction_id", "original_transaction_id", "user_id", "order_id", "match_rule", "product_id", "product_type",
        "storefront", "environment", "ownership", "currency", "unit_price", "quantity", "price", "price_source",
        "purchase_time", "expires_time", "refund_time", "refund_type", "refund_amount", "revenue", "gross_usd", "refunds_usd",
        "net_usd", "deliveries", "delivered_to", "finding_ids",
    ]

    static func write(_ database: Database, zone: Zone, fx: FXRates, _ sink: inout TextSink) throws {
        var catalogTypes: [String: String] = [:]
        try database.forEach("SELECT product_id, type FROM raw_catalog__products WHERE type IS NOT NULL ORDER BY file_id, line") { row in
            catalogTypes[row.string(0)] = row.string(1)
        }
        var values = AmountReader(fx: fx, zone: zone)
        try sink.csvRecord(header)
        // Deliveries and findings come through their transaction indexes; a shared-subscription finding
        // names a chain, not a transaction, and is listed on every transaction of that chain.
        try database.forEach("""
            SELECT t.transaction_id, t.original_transaction_id, t.user_id, t.order_id, t.match_rule, t.product_id, s.type,
                   t.storefront, t.environment, t.ownership, t.currency, t.unit_price, t.quantity, t.price_source,
                   t.purchase_ms, t.expires_ms, t.refund_ms, t.refund_type, t.refund_amount, t.is_revenue, t.deliveries,
                   (SELECT group_concat(user_id, ';') FROM (
                      SELECT user_id, min(ts_ms) AS first_ms FROM stg_server__deliveries d
                      WHERE d.transaction_id = t.transaction_id GROUP BY user_id ORDER BY first_ms, user_id)),
                   (SELECT group_concat(finding_id, ';') FROM (
                      SELECT finding_id FROM fct_findings f WHERE f.transaction_id = t.transaction_id
                      UNION
                      SELECT finding_id FROM fct_findings f
                      WHERE f.transaction_id IS NULL AND f.original_transaction_id = t.original_transaction_id
                      ORDER BY 1))
            FROM int_transactions_resolved t LEFT JOIN stg_apple__transactions s USING (transaction_id)
            ORDER BY t.purchase_ms, t.transaction_id
            """) { row in
            let purchaseMs = row.int(14)
            let quantity = row.int(12)
            let unitPrice = values.amount(row, 11)
            let price = unitPrice.map { $0 * quantity }
            let refund = row.isNull(16) ? nil : values.amount(row, 18)
            let isRevenue = row.int(19) == 1
            var grossUSD = "", refundsUSD = "", netUSD = ""
            if isRevenue, let rate = values.rate(currency: values.currency(row, 10), atMs: purchaseMs) {
                let gross = (price ?? .zero) * rate
                let refunded = (refund ?? .zero) * rate
                (grossUSD, refundsUSD, netUSD) = (Money.format(gross), Money.format(refunded), Money.format(gross - refunded))
            }
            let productID = row.string(5)
            func text(_ column: Int) -> String { CSV.textCell(row.optionalString(column) ?? "") }
            func time(_ column: Int) -> String { row.optionalInt(column).map(Timestamp.iso8601) ?? "" }
            try sink.csvRecord([
                text(0), text(1), text(2), text(3), text(4), text(5), CSV.textCell(catalogTypes[productID] ?? row.optionalString(6) ?? ""),
                text(7), text(8), text(9), text(10), CSV.numberCell(row.optionalString(11) ?? ""), String(quantity),
                price.map(Money.format) ?? "", text(13), Timestamp.iso8601(purchaseMs), time(15), time(16), text(17),
                refund.map(Money.format) ?? "", isRevenue ? "true" : "false", grossUSD, refundsUSD, netUSD,
                String(row.int(20)), text(21), text(22),
            ])
        }
    }
}
