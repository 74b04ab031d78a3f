/// An incremental join writes only the rows its decisions changed.
///
/// Its scope is the closure of what changed, many times what actually changes: most of the rows it
/// decides come out as they were. Before the scope is decided, each of its current rows is read
/// and kept as a fingerprint of its values. As the decided rows reach the writer, a row equal to
/// its current one is dropped; a changed row replaces its current one, and a new row is added. A
/// current row that no decision wrote again is deleted at the end. Fewer rows rewritten means
/// fewer index pages dirtied, and a smaller checkpoint after the commit.
///
/// The tie-out with Apple counts a resolved transaction's units on the day of its purchase and
/// on the day of its refund (`AppleTieOutStore.verified`). A row whose purchase or refund, as
/// the tie-out reads them, changed is listed as it was and as it is (`TieOutChanges`), a new
/// one as it is, a gone one as it was; only Apple's sales count, and a row changed elsewhere
/// (its deliveries, say) is not listed: a refund on a night changes the night's day, not the purchase's.
///
/// What `transactions.csv` shows of the rows that changed is listed too (`transactionChanges`): a
/// changed, new or gone resolved transaction, the transaction of a changed, new or gone finding,
/// and the chain of a new or gone link of a finding to a chain.
struct ScopeRows {
    /// The scope's rows were asked for before they were read (a defect, never the input's).
    struct NotRead: Error, CustomStringConvertible {
        var description: String { "the join's scope rows were used before they were read" }
    }

    /// A table the scope covers: its key (its first columns), its columns, and which of its rows the scope holds.
    struct Table {
        var name: String
        var key: [String]
        var columns: Int
        var condition: String
    }

    /// Which findings a scope holds: those about its transactions, and the chain and
    /// multi-Apple-ID findings of its chains and users. A shared subscription's finding names a
    /// transaction of its chain too, and is the chain's.
    private static let findingsCondition = """
        transaction_id IN temp.join_transactions
          OR (kind = 'shared_apple_id_subscription' AND original_transaction_id IN temp.join_chains)
          OR (kind = 'multi_apple_id_subscription' AND user_id IN temp.join_users)
        """

    /// Tables 0, 1, 2 of the join's reader jobs: resolved transactions, findings, and the chains of
    /// findings about chains. A scope holds its transactions (with the orders matched to them), its
    /// findings, and their links to chains. A link row is all key: it is there or it is not.
    static let tables = [
        Table(name: "int_transactions_resolved", key: ["transaction_id"], columns: 22, condition: "transaction_id IN temp.join_transactions"),
        Table(name: "fct_findings", key: ["finding_id"], columns: 13, condition: findingsCondition),
        Table(name: "fct_finding_chains", key: ["finding_id", "original_transaction_id"], columns: 2,
              condition: "finding_id IN (SELECT finding_id FROM main.fct_findings WHERE \(findingsCondition))"),
    ]

    /// The table number of the findings' links to their chains.
    static let findingChainsTable = 2

    /// Where a resolved transaction's columns the tie-out reads are, as `Tables.joinResults`
    /// declares them (the tests hold the two together).
    enum Resolved {
        static let productID = 2, purchaseMs = 3, quantity = 12, storefront = 13, refundMs = 15, refundType = 17, isAppleSale = 21
    }

    /// What the tie-out reads of a purchase: whether Apple counts it as a sale, its product,
    /// storefront, quantity and time; of a refund, the same with the refund's time and kind.
    private static let purchaseColumns = [Resolved.isAppleSale, Resolved.productID, Resolved.storefront, Resolved.quantity, Resolved.purchaseMs]
    private static let refundColumns = [Resolved.isAppleSale, Resolved.productID, Resolved.storefront, Resolved.quantity, Resolved.refundMs,
                                        Resolved.refundType]

    /// Where a finding's subject is, as `Tables.joinResults` declares it.
    enum Finding {
        static let transactionID = 5, originalTransactionID = 6
    }

    /// A current row: its key's texts, the fingerprint of its values, and, for a resolved transaction,
    /// what the tie-out reads of it; for a finding, its subject.
    private struct Current {
        var key: [String]
        var values: RowFingerprint
        var units: Units
        /// A resolved transaction's, if Apple counts it as a sale.
        var sale: AppleSale?
        /// A finding's subject; nil for a resolved transaction.
        var subject: (transactionID: String?, originalTransactionID: String?)?
        var written = false
    }

    /// What the tie-out reads of a resolved transaction: its purchase and its refund, each as a fingerprint.
    private struct Units {
        var purchase = RowFingerprint(), refund = RowFingerprint()

        init() {}

        init(_ row: PackedRow) {
            for column in ScopeRows.purchaseColumns { purchase.add(row.packed(column)) }
            for column in ScopeRows.refundColumns { refund.add(row.packed(column)) }
        }
    }

    /// Each table's current rows in the scope, by the fingerprint of their key.
    private var current: [[RowFingerprint: Current]]
    /// What the changed rows change of the tie-out with Apple.
    private(set) var tieOutChanges = TieOutChanges()
    /// What the changed rows change of `transactions.csv`.
    private(set) var transactionChanges = TransactionChanges()
    private let deletes: [Statement]

    /// Reads the scope's current rows; the scope is in `database`'s `temp.join_*` tables. The
    /// resolved transactions are `currentResolved` where the closure read them already (every
    /// column of each, as read here: `ClosureFacts.currentResolved`).
    init(_ database: Database, currentResolved: [PackedRows]? = nil) throws {
        current = try Self.tables.enumerated().map { number, table in
            var chunks: [PackedRows]
            if number == 0, let currentResolved {
                chunks = currentResolved
            } else {
                var rows = PackedRows(table: number)
                try database.forEach("SELECT * FROM main.\(table.name) WHERE \(table.condition)") { rows.append($0, columns: table.columns) }
                chunks = [rows]
            }
            var byKey: [RowFingerprint: Current] = [:]
            byKey.reserveCapacity(chunks.reduce(0) { $0 + $1.count })
            while let rows = chunks.popLast() {
                rows.forEachRow(columns: table.columns) { row in
                    byKey[Self.key(row, columns: table.key.count)] = Current(key: Self.keyTexts(row, columns: table.key.count),
                                                                            values: RowFingerprint(row.bytes),
                                                   units: number == 0 ? Units(row) : Units(), sale: number == 0 ? Self.sale(row) : nil,
                                                   subject: number == 1 ? Self.subject(row) : nil)
                }
            }
            return byKey
        }
        deletes = try Self.tables.map { table in
            try database.cached("DELETE FROM main.\(table.name) WHERE " + table.key.map { "\($0) = ?" }.joined(separator: " AND "))
        }
    }

    /// The rows of `rows` to insert: the new and the changed ones, each changed one's current
    /// row deleted first. Called on the writer, inside the join's transaction.
    mutating func changed(_ rows: PackedRows) throws -> PackedRows {
        let number = rows.table
        var kept = PackedRows(table: number)
        let table = Self.tables[number]
        try rows.forEachRow(columns: table.columns) { row in
            let key = Self.key(row, columns: table.key.count)
            if let index = current[number].index(forKey: key) {
                current[number].values[index].written = true
                let was = current[number].values[index]
                guard was.values != RowFingerprint(row.bytes) else { return }
                try deletes[number].insert(was.key.map(SQLValue.text))
                if number == 0 { noteChange(from: was, to: row) }
                noteShown(was, table: number)
            } else if number == 0, let added = Self.sale(row) {
                tieOutChanges.added.append(added)
            }
            noteShown(row, table: number)
            kept.append(row)
        }
        return kept
    }

    /// Deletes the current rows no decision wrote again.
    mutating func deleteUnwritten() throws {
        for (number, rows) in current.enumerated() {
            for row in rows.values where !row.written {
                try deletes[number].insert(row.key.map(SQLValue.text))
                if number == 0, let removed = row.sale { tieOutChanges.removed.append(removed) }
                noteShown(row, table: number)
            }
        }
        current = current.map { _ in [:] }
    }

    /// Lists what `transactions.csv` shows of a current row of table `number` that changes or goes:
    /// a resolved transaction's line, the line of a finding's transaction, or the lines of a
    /// finding's chain.
    private mutating func noteShown(_ row: Current, table number: Int) {
        switch number {
        case 0: transactionChanges.transactions.insert(row.key[0])
        case 1: transactionChanges.noteFinding(transactionID: row.subject?.transactionID)
        default: transactionChanges.chains.insert(row.key[1])
        }
    }

    /// The same of a decided row of table `number`.
    private mutating func noteShown(_ row: PackedRow, table number: Int) {
        switch number {
        case 0: transactionChanges.transactions.insert(Self.keyTexts(row, columns: 1)[0])
        case 1: transactionChanges.noteFinding(transactionID: Self.subject(row).transactionID)
        default: transactionChanges.chains.insert(Self.keyTexts(row, columns: 2)[1])
        }
    }

    /// A finding's subject: its transaction and its chain, as decided.
    private static func subject(_ row: PackedRow) -> (transactionID: String?, originalTransactionID: String?) {
        func text(_ column: Int) -> String? {
            guard case .bytes(let bytes) = row.value(column) else { return nil }
            return String(decoding: bytes, as: UTF8.self)
        }
        return (text(Finding.transactionID), text(Finding.originalTransactionID))
    }

    /// The fingerprint of a row's key, its first `columns` columns.
    private static func key(_ row: PackedRow, columns: Int) -> RowFingerprint {
        var key = RowFingerprint(row.packed(0))
        for column in 1..<max(1, columns) { key.add(row.packed(column)) }
        return key
    }

    /// The texts of a row's key, its first `columns` columns.
    private static func keyTexts(_ row: PackedRow, columns: Int) -> [String] {
        (0..<columns).map { column in
            guard case .bytes(let bytes) = row.value(column) else { return "" }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// Lists a changed resolved transaction as it was and as it is, if the tie-out reads its
    /// purchase or its refund differently.
    private mutating func noteChange(from was: Current, to now: PackedRow) {
        let units = Units(now)
        guard was.units.purchase != units.purchase || was.units.refund != units.refund else { return }
        if let removed = was.sale { tieOutChanges.removed.append(removed) }
        if let added = Self.sale(now) { tieOutChanges.added.append(added) }
    }

    /// What the tie-out reads of a decided row, if Apple counts it as a sale (values as SQLite stores them in
    /// the columns `Tables.joinResults` declares: integers in INTEGER columns, text in TEXT ones).
    static func sale(_ row: PackedRow) -> AppleSale? {
        func integer(_ column: Int) -> Int64? {
            switch row.value(column) {
            case .integer(let value): value
            case .bytes(let bytes): Int64(String(decoding: bytes, as: UTF8.self))
            case .null: nil
            }
        }
        func text(_ column: Int) -> String? {
            switch row.value(column) {
            case .integer(let value): String(value)
            case .bytes(let bytes): String(decoding: bytes, as: UTF8.self)
            case .null: nil
            }
        }
        guard integer(Resolved.isAppleSale) == 1 else { return nil }
        return AppleSale(productID: text(Resolved.productID) ?? "", storefront: text(Resolved.storefront),
                                  quantity: integer(Resolved.quantity) ?? 0, purchaseMs: integer(Resolved.purchaseMs) ?? 0,
                                  refundMs: integer(Resolved.refundMs), refundType: text(Resolved.refundType))
    }
}
