import Foundation
import Testing
@testable import IAPRecon

/// An incremental join writes only the rows its decisions changed (`ScopeRows`), and names for
/// the tie-out with Apple only the days whose purchases or refunds it wrote differently.
@Suite("A night's changed rows")
struct ScopeRowsTests {
    static let day1 = Timestamp.startOfDay("2026-10-01").map { $0 + 20 * 3_600_000 } ?? 0
    static let day5 = day1 + 4 * 86_400_000
    static let day9 = day1 + 8 * 86_400_000

    /// A resolved transaction as the join writes it; the tie-out reads purchase and refund columns.
    static func transaction(_ id: String, user: String = "u1", purchaseMs: Int64 = day1, refundMs: Int64? = nil,
                            deliveries: Int64 = 1, isSale: Int64 = 1) -> [SQLValue] {
        [.text(id), .text(id), .text("gems"), .integer(purchaseMs), .null, .text("Production"), .text(user), .null, .null,
         .text("0.99"), .text("USD"), .text("apple"), .integer(1), .text("USA"), .integer(isSale), SQLValue(refundMs),
         refundMs == nil ? .null : .text("0.99"), .null, .integer(deliveries), .null, .text(user), .integer(isSale)]
    }

    static func finding(_ id: String, transaction: String, detail: String = "never delivered") -> [SQLValue] {
        [.text(id), .text("lost_delivery"), .text("critical"), .text("u1"), .null, .text(transaction), .text(transaction),
         .text("gems"), .text("0.99"), .text("USD"), .integer(day1), .text(detail), .text("server.jsonl:1")]
    }

    /// A finding about a whole chain, which names no transaction of it.
    static func chainFinding(_ id: String, chain: String, detail: String = "shared") -> [SQLValue] {
        [.text(id), .text("shared_apple_id_subscription"), .text("warning"), .null, .null, .null, .text(chain),
         .text("gems"), .null, .null, .integer(day1), .text(detail), .text("server.jsonl:1")]
    }

    /// A finding's link to a chain it is about.
    static func link(_ id: String, chain: String) -> [SQLValue] {
        [.text(id), .text(chain)]
    }

    /// A store holding `transactions` and `findings` as the last join left them, the scope being
    /// every transaction in it (`temp.join_*`).
    func store(_ transactions: [[SQLValue]], findings: [[SQLValue]], links: [[SQLValue]] = [], chains: [String] = []) throws -> (Scenario, Database) {
        let scenario = try Scenario()
        let database = try scenario.open()
        try database.execute(StoredJoinResults.tables.dropAndCreate)
        try database.execute(StoredJoinResults.tables.createMissingIndexes(existing: []))
        for row in transactions { try database.run("INSERT INTO int_transactions_resolved VALUES (\(marks(22)))", row) }
        for row in findings { try database.run("INSERT INTO fct_findings VALUES (\(marks(13)))", row) }
        for row in links { try database.run("INSERT INTO fct_finding_chains VALUES (\(marks(2)))", row) }
        var scope = JoinScope()
        for row in transactions { if case .text(let id) = row[0] { scope.insert(id, as: .transaction) } }
        for chain in chains { scope.insert(chain, as: .chain) }
        try StoredScopeFacts.fill(scope, prefix: "join", in: database)
        return (scenario, database)
    }

    func marks(_ count: Int) -> String { Array(repeating: "?", count: count).joined(separator: ", ") }

    func packed(_ table: Int, _ rows: [[SQLValue]]) -> PackedRows {
        var packed = PackedRows(table: table)
        for row in rows { packed.append(row) }
        return packed
    }

    func ids(_ rows: PackedRows, columns: Int) -> [String] {
        var ids: [String] = []
        rows.forEachRow(columns: columns) { row in
            if case .bytes(let bytes) = row.value(0) { ids.append(String(decoding: bytes, as: UTF8.self)) }
        }
        return ids
    }

    func stored(_ database: Database, _ table: String) throws -> [String] {
        var ids: [String] = []
        try database.forEach("SELECT * FROM \(table) ORDER BY 1") { ids.append($0.string(0)) }
        return ids
    }

    @Test("the columns the tie-out's days and a finding's subject are read from are where the tables declare them")
    func resolvedColumnsAreTheDeclaredOnes() throws {
        let (scenario, database) = try store([], findings: [])
        var names: [String] = []
        try database.forEach("SELECT name FROM pragma_table_info('int_transactions_resolved') ORDER BY cid") { names.append($0.string(0)) }
        typealias R = ScopeRows.Resolved
        let read = [R.productID, R.purchaseMs, R.quantity, R.storefront, R.isAppleSale, R.refundMs, R.refundType].map { names[$0] }
        #expect(read == ["product_id", "purchase_ms", "quantity", "storefront", "is_apple_sale", "refund_ms", "refund_type"])
        var findingNames: [String] = []
        try database.forEach("SELECT name FROM pragma_table_info('fct_findings') ORDER BY cid") { findingNames.append($0.string(0)) }
        #expect([ScopeRows.Finding.transactionID, ScopeRows.Finding.originalTransactionID].map { findingNames[$0] }
                == ["transaction_id", "original_transaction_id"])
        for table in ScopeRows.tables {
            let columns = try database.scalar("SELECT count(*) FROM pragma_table_info('\(table.name)')")
            #expect(columns == .integer(Int64(table.columns)), "\(table.name)")
        }
        withExtendedLifetime(scenario) {}
    }

    @Test("a decided row equal to its current one is not written; a changed one replaces it, a new one is added, a gone one is deleted")
    func onlyChangedRowsAreWritten() throws {
        let (scenario, database) = try store(
            [Self.transaction("t1"), Self.transaction("t2"), Self.transaction("t3")],
            findings: [Self.finding("f1", transaction: "t1"), Self.finding("f3", transaction: "t3")])
        var rows = try ScopeRows(database)
        try database.transaction {
            // t1 as it was, t2 delivered once more, t3 not decided again, t4 new.
            let decided = [Self.transaction("t1"), Self.transaction("t2", deliveries: 2), Self.transaction("t4")]
            let kept = try rows.changed(packed(0, decided))
            #expect(ids(kept, columns: 22) == ["t2", "t4"])
            try kept.insert(with: database.cached("INSERT INTO int_transactions_resolved VALUES (\(marks(22)))"))
            // f1 as it was; f3 gone with t3.
            let findings = try rows.changed(packed(1, [Self.finding("f1", transaction: "t1")]))
            #expect(findings.count == 0)
            try rows.deleteUnwritten()
        }
        #expect(try stored(database, "int_transactions_resolved") == ["t1", "t2", "t4"])
        #expect(try database.scalar("SELECT deliveries FROM int_transactions_resolved WHERE transaction_id = 't2'") == .integer(2))
        #expect(try stored(database, "fct_findings") == ["f1"])
        withExtendedLifetime(scenario) {}
    }

    @Test("the tie-out hears of a refunded row as it was and as it is, of a new row and of a gone one; not of a row changed elsewhere or of one Apple does not count as a sale")
    func tieOutChangesAreTheRowsItReads() throws {
        let (scenario, database) = try store(
            [Self.transaction("t1"), Self.transaction("t2"), Self.transaction("t3", purchaseMs: Self.day5)], findings: [])
        var rows = try ScopeRows(database)
        try database.transaction {
            // t1 refunded on day 9; t2 delivered again (nothing the tie-out reads); t3 gone; t4 new; t5 new, no sale (a sandbox purchase, say).
            let decided = [Self.transaction("t1", refundMs: Self.day9), Self.transaction("t2", deliveries: 3),
                           Self.transaction("t4", purchaseMs: Self.day9), Self.transaction("t5", isSale: 0)]
            try rows.changed(packed(0, decided)).insert(with: database.cached("INSERT INTO int_transactions_resolved VALUES (\(marks(22)))"))
            try rows.deleteUnwritten()
        }
        func revenue(purchaseMs: Int64, refundMs: Int64? = nil) -> AppleSale {
            AppleSale(productID: "gems", storefront: "USA", quantity: 1, purchaseMs: purchaseMs, refundMs: refundMs, refundType: nil)
        }
        #expect(rows.tieOutChanges.removed == [revenue(purchaseMs: Self.day1), revenue(purchaseMs: Self.day5)])
        #expect(rows.tieOutChanges.added == [revenue(purchaseMs: Self.day1, refundMs: Self.day9), revenue(purchaseMs: Self.day9)])
        withExtendedLifetime(scenario) {}
    }

    @Test("transactions.csv hears of each row it shows differently: a changed, new or gone transaction, a changed, new or gone finding's transaction, the chain of a new or gone link of a finding; never of an unchanged one")
    func transactionsFileChangesAreTheRowsItShows() throws {
        let (scenario, database) = try store(
            [Self.transaction("t1"), Self.transaction("t2"), Self.transaction("t3"), Self.transaction("t6")],
            findings: [Self.finding("f1", transaction: "t1"), Self.finding("f3", transaction: "t3"), Self.finding("f6", transaction: "t6"),
                       Self.chainFinding("fc", chain: "c9"), Self.chainFinding("fe", chain: "c7")],
            links: [Self.link("fc", chain: "c9"), Self.link("fe", chain: "c7")],
            chains: ["c7", "c8", "c9"])
        var rows = try ScopeRows(database)
        try database.transaction {
            // t1 and t6 as they were; t2 delivered again; t3 gone; t4 new.
            let decided = [Self.transaction("t1"), Self.transaction("t2", deliveries: 2), Self.transaction("t4"), Self.transaction("t6")]
            try rows.changed(packed(0, decided)).insert(with: database.cached("INSERT INTO int_transactions_resolved VALUES (\(marks(22)))"))
            // f1 says something else; f6 as it was; f3 and the chain finding fc gone; fd new, about chain c8.
            // fe says something else of chain c7, to which it stays linked: the lines of c7 list the same id.
            let findings = [Self.finding("f1", transaction: "t1", detail: "delivered late"), Self.finding("f6", transaction: "t6"),
                            Self.chainFinding("fd", chain: "c8"), Self.chainFinding("fe", chain: "c7", detail: "shared by 3")]
            try rows.changed(packed(1, findings)).insert(with: database.cached("INSERT INTO fct_findings VALUES (\(marks(13)))"))
            let links = [Self.link("fd", chain: "c8"), Self.link("fe", chain: "c7")]
            let kept = try rows.changed(packed(ScopeRows.findingChainsTable, links))
            #expect(ids(kept, columns: 2) == ["fd"], "a link as it was is not written again")
            try kept.insert(with: database.cached("INSERT INTO fct_finding_chains VALUES (\(marks(2)))"))
            try rows.deleteUnwritten()
        }
        #expect(rows.transactionChanges.transactions == ["t1", "t2", "t3", "t4"])
        #expect(rows.transactionChanges.chains == ["c8", "c9"])
        var stored: [String] = []
        try database.forEach("SELECT finding_id || '>' || original_transaction_id FROM fct_finding_chains ORDER BY 1") { stored.append($0.string(0)) }
        #expect(stored == ["fd>c8", "fe>c7"])
        withExtendedLifetime(scenario) {}
    }
}
