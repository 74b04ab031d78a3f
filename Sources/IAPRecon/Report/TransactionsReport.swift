/// `transactions.csv`: one row per verified transaction, the rows behind every revenue number.
///
/// Finance needs the list a total is made of, as subscription platforms export it: who bought
/// what, which order it matched and by which rule, where its price came from, whether and how it
/// was refunded, who received it, and which findings name it. The reporting-currency columns are
/// filled exactly where `revenue_daily.csv` counts the transaction (verified Production revenue,
/// converted at the purchase day's rate, its refund at that same rate), named for the reporting
/// currency and rounded to its minor unit row by row like every such column. Local amounts sum
/// to `revenue_daily.csv`'s exactly; reporting-currency sums to within half a minor unit per
/// row of either file, since both round their own rows.
///
/// Rows come in transaction id order (Apple's ids grow with time): the transactions are read
/// through their key index, each with who received it as the join listed it, so nothing is
/// sorted or held per transaction; only the findings, a few per thousand transactions, and the
/// catalog are kept in memory.
enum TransactionsReport {
    static func header(_ currency: ReportingCurrency) -> [String] {
        ["transaction_id", "original_transaction_id", "user_id", "order_id", "match_rule", "product_id", "product_type",
         "storefront", "environment", "ownership", "currency", "unit_price", "quantity", "price", "price_source",
         "purchase_time", "expires_time", "refund_time", "refund_type", "refund_amount", "revenue"]
            + ["gross", "refunds", "net"].map(currency.column)
            + ["deliveries", "delivered_to", "finding_ids"]
    }

    static func write(_ store: some ReportStore, zone: Zone, fx: FXRates, currency: ReportingCurrency, _ sink: inout TextSink) throws {
        var catalogTypes: [String: String] = [:]
        for (productID, type) in try store.catalogTypes() { catalogTypes[productID] = type }
        // A finding names its transaction; a chain's finding (a shared subscription) names no
        // transaction and is listed on every transaction of the chain. Both are looked up by the
        // fingerprint of the id's bytes, so a transaction row makes no string of its ids.
        var findingsOfTransaction: [RowFingerprint: [String]] = [:], findingsOfChain: [RowFingerprint: [String]] = [:]
        typealias Subject = FindingSubjectColumn
        try store.forEachFindingSubject { row in
            if let transaction = row.fingerprint(Subject.transactionID) {
                findingsOfTransaction[transaction, default: []].append(row.string(Subject.findingID))
            } else if let chain = row.fingerprint(Subject.originalTransactionID) {
                findingsOfChain[chain, default: []].append(row.string(Subject.findingID))
            }
        }
        // Apple's product type shows only where the catalog gives none: merged from the sightings of
        // every transaction, in the same order, when there is no catalog; else, rarely needed, one
        // transaction's sightings at a time.
        let appleTypes = catalogTypes.isEmpty ? try store.mergedTransactionsByID() : nil
        var appleType = try appleTypes?.next()
        // The product type is filled in here.
        typealias Column = ReportTransactionColumn
        let transactions = try store.transactionsByID()
        defer { transactions.reset() }
        var values = AmountReader(fx: fx, zone: zone)
        // The catalog's type of each product (its cell), looked up once per distinct product id.
        var products = TextIndex()
        var catalogTypeCells: [String?] = []
        try sink.csvRecord(header(currency))
        while try transactions.step() {
            let row = transactions.row
            let purchaseMs = row.int(Column.purchaseMs)
            let quantity = row.int(Column.quantity)
            let price = values.amount(row, Column.unitPrice).map { $0 * quantity }
            let refund = row.isNull(Column.refundMs) ? nil : values.amount(row, Column.refundAmount)
            let isRevenue = row.int(Column.isRevenue) == 1
            var grossUSD = "", refundsUSD = "", netUSD = ""
            if isRevenue, let rate = values.rate(currency: values.currency(row, Column.currency), atMs: purchaseMs) {
                let gross = currency.rounded((price ?? .zero) * rate)
                let refunded = currency.rounded((refund ?? .zero) * rate)
                (grossUSD, refundsUSD, netUSD) = (Money.format(gross), Money.format(refunded), Money.format(gross - refunded))
            }
            let product = Int(products.number(row, Column.productID))
            if product == catalogTypeCells.count { catalogTypeCells.append(catalogTypes[products[Int32(product)]].map(CSV.textCell)) }
            var typeCell = catalogTypeCells[product]
            if typeCell == nil {
                let id = row.string(Column.transactionID)
                var type: String?
                if let appleTypes {
                    while let merged = appleType, merged.transactionID.utf8.lexicographicallyPrecedes(id.utf8) { appleType = try appleTypes.next() }
                    if let merged = appleType, merged.transactionID == id { type = merged.type }
                } else {
                    type = try store.mergedTransaction(id)?.type
                }
                typeCell = CSV.textCell(type ?? "")
            }
            let findingIDs = (row.fingerprint(Column.transactionID).flatMap { findingsOfTransaction[$0] } ?? [])
                + (row.fingerprint(Column.originalTransactionID).flatMap { findingsOfChain[$0] } ?? [])
            func time(_ column: Column) -> String { row.optionalInt(column).map(Timestamp.iso8601) ?? "" }
            try sink.csvRecord { cells in
                for column in Column.allCases[Column.transactionID.rawValue...Column.productID.rawValue] { cells.text(row, column) }
                cells.escaped(typeCell ?? "")
                for column in Column.allCases[Column.storefront.rawValue...Column.currency.rawValue] { cells.text(row, column) }
                cells.number(row, Column.unitPrice)
                cells.escaped(String(quantity))
                cells.escaped(price.map(Money.format) ?? "")
                cells.text(row, Column.priceSource)
                cells.escaped(Timestamp.iso8601(purchaseMs))
                cells.escaped(time(Column.expiresMs))
                cells.escaped(time(Column.refundMs))
                cells.text(row, Column.refundType)
                cells.escaped(refund.map(Money.format) ?? "")
                cells.escaped(isRevenue ? "true" : "false")
                cells.escaped(grossUSD)
                cells.escaped(refundsUSD)
                cells.escaped(netUSD)
                cells.escaped(String(row.int(Column.deliveries)))
                cells.text(row, Column.deliveredTo)
                cells.escaped(findingIDs.isEmpty ? "" : CSV.textCell(findingIDs.sorted().joined(separator: ";")))
            }
        }
    }
}
