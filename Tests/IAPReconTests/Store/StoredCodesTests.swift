import Foundation
import Testing
@testable import IAPRecon

/// Apple sightings keep origin and Apple's enumerations as small integer codes (`AppleCodes`,
/// `TransactionOrigin.code`): what users rely on is that every value reads back exactly as Apple
/// sent it, known or not, and that a store from before the codes means the same after its migration.
@Suite("Stored codes")
struct StoredCodesTests {
    /// The codes are part of the stored format: a store in the field holds these numbers, so none may change.
    @Test("every stored code keeps its number")
    func pinned() {
        #expect(TransactionOrigin.allCases.map { "\($0.code) \($0.rawValue)" } == ["1 receipt", "2 v2", "3 notification"])
        func listed(_ codes: AppleCodes) -> [String] { codes.values.map { "\($0.code) \($0.text)" } }
        #expect(listed(AppleEnvironment.codes) == ["1 Production", "2 Sandbox", "3 PROD", "4 Xcode", "5 LocalTesting"])
        #expect(listed(AppleProductType.codes) == [
            "1 Auto-Renewable Subscription", "2 Non-Consumable", "3 Consumable", "4 Non-Renewing Subscription",
        ])
        #expect(listed(AppleOwnership.codes) == ["1 PURCHASED", "2 FAMILY_SHARED"])
        #expect(listed(AppleNotificationType.codes) == [
            "1 CONSUMPTION_REQUEST", "2 DID_CHANGE_RENEWAL_PREF", "3 DID_CHANGE_RENEWAL_STATUS", "4 DID_FAIL_TO_RENEW", "5 DID_RENEW",
            "6 EXPIRED", "7 EXTERNAL_PURCHASE_TOKEN", "8 GRACE_PERIOD_EXPIRED", "9 OFFER_REDEEMED", "10 ONE_TIME_CHARGE",
            "11 PRICE_INCREASE", "12 REFUND", "13 REFUND_DECLINED", "14 REFUND_REVERSED", "15 RENEWAL_EXTENDED",
            "16 RENEWAL_EXTENSION", "17 REVOKE", "18 SUBSCRIBED", "19 TEST", "20 CANCEL", "21 DID_RECOVER", "22 INITIAL_BUY",
            "23 INTERACTIVE_RENEWAL", "24 PRICE_INCREASE_CONSENT", "25 RENEWAL",
        ])
        #expect(TransactionOrigin.sentByUserSQL == "origin IN (1, 2)")
    }

    @Test("a known value is its code, any other its text; each reads back as it was, and SQL finds each by its own literal")
    func codec() {
        let codes = AppleEnvironment.codes
        #expect(codes.stored("Sandbox") == .integer(2))
        #expect(codes.stored("Staging") == .text("Staging"))
        // A text that looks like a code is a text: it never reads back as the value of that code.
        #expect(codes.stored("2") == .text("2"))
        #expect(codes.stored(nil) == .null)
        #expect(codes.text(2) == "Sandbox")
        #expect(codes.text(0) == nil && codes.text(6) == nil)
        #expect(codes.sqlLiteral("Sandbox") == "2")
        #expect(codes.sqlLiteral("it's new") == "'it''s new'")
        #expect(UnknownStoredCode(column: "environment", stored: .integer(9)).description
            == "the store has environment code 9, which this iaprecon does not know; use the iaprecon that wrote it, or a newer one")
    }

    /// The migration that codes a store's sightings, whatever number it ships as.
    static func codesMigration() throws -> (id: Int, sql: String) {
        try #require(Schema.migrations.first { $0.sql.contains("RENAME TO raw_apple__transactions_text") })
    }

    @Test("the migration's mapping is the codes', column by column, so the two never drift apart")
    func migrationMatchesCodes() throws {
        let sql = try Self.codesMigration().sql
        func mapping(_ column: String) throws -> [String] {
            let pattern = try NSRegularExpression(pattern: "CASE \(column)\\s(.*?)\\sELSE \(column) END", options: [.dotMatchesLineSeparators])
            let match = try #require(pattern.firstMatch(in: sql, range: NSRange(sql.startIndex..., in: sql)))
            let body = String(sql[try #require(Range(match.range(at: 1), in: sql))])
            let when = try NSRegularExpression(pattern: "WHEN '([^']*)' THEN ([0-9]+)")
            return when.matches(in: body, range: NSRange(body.startIndex..., in: body)).compactMap { match in
                guard let text = Range(match.range(at: 1), in: body), let code = Range(match.range(at: 2), in: body) else { return nil }
                return "\(body[code]) \(body[text])"
            }
        }
        func listed(_ codes: AppleCodes) -> [String] { codes.values.map { "\($0.code) \($0.text)" } }
        #expect(try mapping("origin") == TransactionOrigin.allCases.map { "\($0.code) \($0.rawValue)" })
        #expect(try mapping("environment") == listed(AppleEnvironment.codes))
        #expect(try mapping("type") == listed(AppleProductType.codes))
        #expect(try mapping("ownership") == listed(AppleOwnership.codes))
        #expect(try mapping("notification_type") == listed(AppleNotificationType.codes))
    }

    /// Every value of each coded column, known or not, as text: what an older iaprecon stored.
    private static let textValues: [(column: String, codes: AppleCodes?, values: [String])] = [
        ("origin", nil, TransactionOrigin.allCases.map(\.rawValue)),
        ("environment", AppleEnvironment.codes, AppleEnvironment.codes.values.map(\.text) + ["Staging", "7", "production"]),
        ("type", AppleProductType.codes, AppleProductType.codes.values.map(\.text) + ["Brand-New Type", "3"]),
        ("ownership", AppleOwnership.codes, AppleOwnership.codes.values.map(\.text) + ["SOMETHING_NEW"]),
        ("notification_type", AppleNotificationType.codes, AppleNotificationType.codes.values.map(\.text) + ["NEW_TYPE_2027", ""]),
    ]

    @Test("migrating a store of text values stores each known one as its code and keeps every other text as it was")
    func migrationConvertsInPlace() throws {
        let scenario = try Scenario()
        let migration = try Self.codesMigration()
        let database = try Database(path: scenario.databasePath)
        try database.execute("CREATE TABLE schema_migrations (id INTEGER PRIMARY KEY)")
        for earlier in Schema.migrations where earlier.id < migration.id {
            try database.transaction {
                try database.execute(earlier.sql)
                try database.run("INSERT INTO schema_migrations (id) VALUES (?)", [.integer(Int64(earlier.id))])
            }
        }
        try database.execute("""
            INSERT INTO files (file_id, path, source, content_hash, bytes, lines_read, accepted, rejected, blank, ignored, ingested_ms)
            VALUES (1, 'receipts/r.jsonl', 'receipts', '', 0, 1, 1, 0, 0, 0, 0)
            """)
        var line = 0
        for (column, _, values) in Self.textValues {
            for value in values {
                line += 1
                let columns = column == "origin" ? "origin" : "origin, \(column)"
                let values: [SQLValue] = column == "origin" ? [.text(value)] : [.text("receipt"), .text(value)]
                try database.run("""
                    INSERT INTO raw_apple__transactions (file_id, line, item, transaction_id, \(columns))
                    VALUES (1, ?1, 1, 't' || ?1, \(column == "origin" ? "?2" : "?2, ?3"))
                    """, [.integer(Int64(line))] + values)
            }
        }
        try Schema.migrate(database)

        line = 0
        for (column, codes, values) in Self.textValues {
            for value in values {
                line += 1
                let stored = try database.scalar("SELECT \(column) FROM raw_apple__transactions WHERE line = ?", [.integer(Int64(line))])
                let expected = codes?.stored(value) ?? TransactionOrigin(rawValue: value).map { .integer($0.code) }
                #expect(stored == expected, "\(column) '\(value)'")
            }
        }
        #expect(try database.scalar("SELECT count(*) FROM raw_apple__transactions WHERE typeof(origin) != 'integer'") == .integer(0))
        // The raw indexes are there again, so `join` and `history` read it as before.
        let indexes = try database.indexNames()
        #expect(["raw_apple_by_transaction", "raw_apple_by_original", "raw_apple_by_token", "raw_apple_by_user"].allSatisfy(indexes.contains))
    }
}
