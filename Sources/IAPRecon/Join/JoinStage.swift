import Foundation

/// The settings a reconciliation depends on.
public struct ReconcileSettings: Sendable {
    /// `--as-of`; nil for the latest event time in the inputs.
    public var asOfMs: Int64?
    public var graceMs: Int64 = 86_400_000
    public var mmpZone: Zone = .utc

    public init(asOfMs: Int64? = nil, graceMs: Int64 = 86_400_000, mmpZone: Zone = .utc) {
        self.asOfMs = asOfMs
        self.graceMs = graceMs
        self.mmpZone = mmpZone
    }
}

/// What the join decided, in numbers.
public struct JoinSummary: Sendable {
    public var asOfMs: Int64
    public var findings: Int
}

/// Stage 3, join: order ↔ transaction matching, refunds net of reversals,
/// subscription chains, and findings (`int_*` and `fct_findings`).
///
/// Reads the `stg_*` tables into memory grouped by transaction, decides in
/// Swift, and writes `int_transactions_resolved` (one row per verified
/// transaction with its user, order, price, refund and deliveries),
/// `int_orders_matched`, and `fct_findings`.
public enum JoinStage {
    public static func run(database: Database, settings: ReconcileSettings) throws -> JoinSummary {
        let asOfMs = try settings.asOfMs ?? latestEventMs(database, mmpZone: settings.mmpZone) ?? 0
        var input = try ReconciliationInput.load(database)
        let matching = OrderMatching(input)
        // What only matching needed goes before the rest is resolved.
        input.orderDeliveriesInTimeOrder = []
        input.receiptClaims = []
        let resolved = ResolvedTransaction.resolve(input, matching)
        input.senders = [:]
        input.refunds = [:]
        let findings = FindingRules(asOfMs: asOfMs, graceMs: settings.graceMs).findings(resolved, input)
        try database.transaction {
            try database.execute(dropAndCreate)
            let insertTransaction = try database.cached("INSERT INTO int_transactions_resolved VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
            for item in resolved {
                let transaction = item.transaction
                try insertTransaction.insert([
                    .text(transaction.transactionID), .text(transaction.originalTransactionID), .text(transaction.productID),
                    .integer(transaction.purchaseMs), SQLValue(transaction.expiresMs), SQLValue(transaction.environment),
                    SQLValue(item.userID), SQLValue(item.order?.orderID), SQLValue(item.matchRule?.rawValue),
                    SQLValue(item.unitPrice.map(Money.format)), SQLValue(item.currency), .text(item.priceSource.rawValue),
                    .integer(transaction.quantity), SQLValue(transaction.storefront ?? item.order?.storefront),
                    .integer(item.isRevenue ? 1 : 0), SQLValue(item.refund?.ms), SQLValue(item.refundAmount.map(Money.format)),
                    SQLValue(item.refund?.revocationType), .integer(Int64(item.deliveries.count)), SQLValue(transaction.ownership),
                ])
            }
            let insertMatch = try database.cached("INSERT INTO int_orders_matched VALUES (?, ?, ?)")
            for orderID in input.orderIDsInFileOrder {
                let transactionID = matching.transactionOf[orderID]
                try insertMatch.insert([.text(orderID), SQLValue(transactionID),
                                        SQLValue(transactionID.flatMap { matching.orderOf[$0]?.rule.rawValue })])
            }
            let insertFinding = try database.cached("INSERT INTO fct_findings VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
            for finding in findings {
                try insertFinding.insert([
                    .text(finding.findingID), .text(finding.kind.rawValue), .text(finding.kind.severity.rawValue),
                    SQLValue(finding.userID), SQLValue(finding.orderID), SQLValue(finding.transactionID),
                    SQLValue(finding.originalTransactionID), SQLValue(finding.productID), SQLValue(finding.amount.map(Money.format)),
                    SQLValue(finding.amount == nil ? nil : finding.currency), .integer(finding.eventMs), .text(finding.detail),
                    .text(orderedUnique(finding.sources).sorted(by: SourceOrder.less).joined(separator: ";")),
                ])
            }
            try database.run("INSERT INTO int_run_settings VALUES (?, ?, ?)",
                             [.integer(asOfMs), .integer(settings.graceMs), .text(settings.mmpZone.identifier)])
        }
        return JoinSummary(asOfMs: asOfMs, findings: findings.count)
    }

    /// The latest event time in the inputs (CONTRACT.md §2, "as-of"): server `ts`, receipt
    /// `received_at`, V2 notification `signedDate`, registration `ts`, MMP `Event Time`.
    static func latestEventMs(_ database: Database, mmpZone: Zone) throws -> Int64? {
        var latest: Int64?
        for sql in [
            "SELECT max(ts_ms) FROM raw_server__orders", "SELECT max(ts_ms) FROM raw_server__deliveries",
            "SELECT max(ts_ms) FROM raw_server__revocations", "SELECT max(received_ms) FROM raw_receipts__verifications",
            "SELECT max(signed_ms) FROM raw_notifications__notifications WHERE version = '2'",
            "SELECT max(ts_ms) FROM raw_registrations__users",
        ] {
            if case .integer(let value)? = try database.scalar(sql) { latest = max(latest ?? value, value) }
        }
        if case .integer(let wall)? = try database.scalar("SELECT max(event_wall_ms) FROM raw_mmp__events") {
            let value = mmpZone.utc(fromLocal: wall)
            latest = max(latest ?? value, value)
        }
        return latest
    }

    static let dropAndCreate = """
        DROP TABLE IF EXISTS int_transactions_resolved;
        DROP TABLE IF EXISTS int_orders_matched;
        DROP TABLE IF EXISTS fct_findings;
        DROP TABLE IF EXISTS int_run_settings;
        CREATE TABLE int_transactions_resolved (
          transaction_id TEXT PRIMARY KEY, original_transaction_id TEXT NOT NULL, product_id TEXT NOT NULL,
          purchase_ms INTEGER NOT NULL, expires_ms INTEGER, environment TEXT, user_id TEXT, order_id TEXT, match_rule TEXT,
          unit_price TEXT, currency TEXT, price_source TEXT NOT NULL, quantity INTEGER NOT NULL, storefront TEXT,
          is_revenue INTEGER NOT NULL, refund_ms INTEGER, refund_amount TEXT, refund_type TEXT, deliveries INTEGER NOT NULL,
          ownership TEXT
        );
        CREATE INDEX int_transactions_by_user ON int_transactions_resolved(user_id);
        CREATE INDEX int_transactions_by_order ON int_transactions_resolved(order_id);
        CREATE TABLE int_orders_matched (order_id TEXT PRIMARY KEY, transaction_id TEXT, match_rule TEXT);
        CREATE TABLE fct_findings (
          finding_id TEXT PRIMARY KEY, kind TEXT NOT NULL, severity TEXT NOT NULL, user_id TEXT, order_id TEXT,
          transaction_id TEXT, original_transaction_id TEXT, product_id TEXT, amount TEXT, currency TEXT,
          event_ms INTEGER NOT NULL, detail TEXT NOT NULL, sources TEXT NOT NULL
        );
        CREATE INDEX fct_findings_by_user ON fct_findings(user_id);
        CREATE INDEX fct_findings_by_transaction ON fct_findings(transaction_id);
        CREATE TABLE int_run_settings (as_of_ms INTEGER NOT NULL, grace_ms INTEGER NOT NULL, mmp_tz TEXT NOT NULL);
        """
}

/// Orders `file:line` references by file, then numerically by line.
enum SourceOrder {
    static func less(_ a: String, _ b: String) -> Bool {
        let (fileA, lineA) = split(a)
        let (fileB, lineB) = split(b)
        return fileA != fileB ? fileA < fileB : lineA < lineB
    }

    static func split(_ source: String) -> (String, Int) {
        guard let colon = source.lastIndex(of: ":") else { return (source, 0) }
        return (String(source[..<colon]), Int(source[source.index(after: colon)...]) ?? 0)
    }
}
