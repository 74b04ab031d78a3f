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

    /// Sightings of one transaction, one per origin, each with a user (a notification never names
    /// one; the row is made so here), with known and unknown values.
    private static func store(_ scenario: Scenario, rows: [AppleTransaction]) throws -> Database {
        let database = try scenario.open()
        try database.transaction {
            try database.execute("""
                INSERT INTO files (file_id, path, source, content_hash, bytes, lines_read, accepted, rejected, blank, ignored, ingested_ms)
                VALUES (1, 'receipts/r.jsonl', 'receipts', '', 0, 9, 9, 0, 0, 0, 0)
                """)
            let insert = try database.cached(RawTable.appleTransactions.insertSQL())
            for (index, transaction) in rows.enumerated() {
                let row = transaction.rawRow(item: 1)
                try insert.insert([.integer(1), .integer(0), .integer(Int64(index + 1)), .integer(Int64(row.item))] + row.values)
            }
        }
        return database
    }

    private static func sighting(_ origin: TransactionOrigin, user: String, environment: String?, type: String? = nil,
                                 ownership: String? = nil, notificationType: String? = nil) -> AppleTransaction {
        var transaction = AppleTransaction(origin: origin, transactionID: "2000000000000001", productID: "p", purchaseMs: 1_764_324_901_000)
        transaction.userID = user
        transaction.environment = environment
        transaction.type = type
        transaction.ownership = ownership
        transaction.notificationType = notificationType
        return transaction
    }

    @Test("the sightings' columns round-trip through the store: known values as codes, unknown ones as the very text")
    func roundTrip() throws {
        let scenario = try Scenario()
        let database = try Self.store(scenario, rows: [
            Self.sighting(.notification, user: "u3", environment: "Staging", type: "2", ownership: "SOMETHING_NEW", notificationType: "NEW_TYPE_2027"),
            Self.sighting(.receipt, user: "u1", environment: "Sandbox", type: "Consumable", ownership: "FAMILY_SHARED", notificationType: "REFUND"),
        ])
        var stored: [[String]] = []
        try database.forEach("""
            SELECT typeof(origin), typeof(environment), environment, typeof(type), type, typeof(ownership), typeof(notification_type)
            FROM raw_apple__transactions ORDER BY line
            """) { row in stored.append((0..<7).map { row.string($0) }) }
        #expect(stored == [
            ["integer", "text", "Staging", "text", "2", "text", "text"],
            ["integer", "integer", "2", "integer", "3", "integer", "integer"],
        ])
        // The first sighting in file order gives each field.
        let merged = try #require(try AppleTransactions.Cursor(database, where: "a.transaction_id = ?1", [.text("2000000000000001")]).next())
        #expect(merged.environment == "Staging")
        #expect(merged.type == "2")
        #expect(merged.ownership == "SOMETHING_NEW")
        // A query finds a value by the literal its home gives, known or not.
        for (column, codes, value) in [
            ("environment", AppleEnvironment.codes, "Staging"), ("environment", AppleEnvironment.codes, "Sandbox"),
            ("type", AppleProductType.codes, "2"), ("type", AppleProductType.codes, "Consumable"),
            ("notification_type", AppleNotificationType.codes, "REFUND"),
        ] {
            let count = try database.scalar("SELECT count(*) FROM raw_apple__transactions WHERE \(column) = \(codes.sqlLiteral(value))")
            #expect(count == .integer(1), "\(column) = \(value)")
        }
    }

    @Test("near miss: only receipt and V2 sightings name who sent a transaction, never a notification's")
    func sentByUser() throws {
        let scenario = try Scenario()
        let database = try Self.store(scenario, rows: [
            Self.sighting(.notification, user: "u3", environment: "Production"),
            Self.sighting(.serverAPI, user: "u2", environment: "Production"),
            Self.sighting(.receipt, user: "u1", environment: "Production"),
        ])
        var users: [String] = []
        try database.forEach("""
            SELECT user_id FROM raw_apple__transactions WHERE user_id IS NOT NULL AND \(TransactionOrigin.sentByUserSQL) ORDER BY user_id
            """) { users.append($0.string(0)) }
        #expect(users == ["u1", "u2"])
        let merged = try #require(try AppleTransactions.Cursor(database, where: "a.transaction_id = ?1", [.text("2000000000000001")]).next())
        #expect(merged.senders.map(\.userID) == ["u1", "u2"])
    }

    @Test("a stored code this build does not know is an error, never a value made up")
    func unknownCode() throws {
        let scenario = try Scenario()
        let database = try Self.store(scenario, rows: [Self.sighting(.receipt, user: "u1", environment: "Production")])
        try database.execute("UPDATE raw_apple__transactions SET environment = 99")
        #expect(throws: UnknownStoredCode.self) {
            _ = try AppleTransactions.Cursor(database, where: "a.transaction_id = ?1", [.text("2000000000000001")]).next()
        }
    }

    @Test("Apple values this build does not know and reads (a product type, a notification type) reach transactions.csv and history exactly as Apple sent them")
    func unknownValuesReachOutputs() throws {
        let scenario = try Scenario()
        let unknown = #"{"transactionId":"2000000000000007","originalTransactionId":"2000000000000007","productId":"new.bundle","#
            + #""purchaseDate":\#(Line.ms("2026-11-10T10:00:00Z")),"quantity":1,"environment":"Sandbox","type":"7","#
            + #""inAppOwnershipType":"PURCHASED","price":990,"currency":"USD","storefront":"USA"}"#
        let known = #"{"transactionId":"2000000000000008","originalTransactionId":"2000000000000008","productId":"new.gems","#
            + #""purchaseDate":\#(Line.ms("2026-11-11T10:00:00Z")),"quantity":1,"environment":"Production","type":"Consumable","#
            + #""inAppOwnershipType":"FAMILY_SHARED","price":990,"currency":"USD","storefront":"USA"}"#
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-10T10:00:05Z", "u9", transaction: unknown),
            Line.v2Receipt("2026-11-11T10:00:05Z", "u9", transaction: known),
        ])
        try scenario.write("notifications/n.jsonl", [
            Line.notification("NEW_TYPE_2027", uuid: "n1", signed: "2026-11-12T06:00:01Z", transaction: unknown),
        ])
        _ = try scenario.run(asOf: "2026-11-30T00:00:00Z")

        let database = try scenario.open()
        #expect(try database.scalar("SELECT count(*) FROM raw_apple__transactions WHERE notification_type = 'NEW_TYPE_2027'") == .integer(1))
        let rows = RevenueReportTests.Fixture.table(try scenario.output("transactions.csv"))
        let byID = Dictionary(uniqueKeysWithValues: rows.map { ($0["transaction_id"] ?? "", $0) })
        let unknownRow = try #require(byID["2000000000000007"])
        #expect(unknownRow["environment"] == "Sandbox")
        #expect(unknownRow["ownership"] == "PURCHASED")
        // No catalog: the product type is Apple's, and "7" is a text, not the code 7.
        #expect(unknownRow["product_type"] == "7")
        let knownRow = try #require(byID["2000000000000008"])
        #expect((knownRow["environment"], knownRow["ownership"], knownRow["product_type"]) == ("Production", "FAMILY_SHARED", "Consumable"))

        let history = try UserHistory.load(database, .user("u9"))
        let purchases = history.events.filter { $0.event == "apple purchase" }.map(\.detail)
        #expect(purchases.contains { $0.hasPrefix("Sandbox") })
        #expect(purchases.contains { $0.hasPrefix("Production") && $0.contains("family shared") })
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

    /// Rewrites the store's sightings as an older iaprecon kept them: the table as migrations 1 and
    /// 5 made it (TEXT columns), every coded value its text.
    private static func uncode(_ database: Database) throws {
        let created = try #require(Schema.migrations.first { $0.id == 1 }).sql
        let start = try #require(created.range(of: "CREATE TABLE raw_apple__transactions ("))
        let end = try #require(created.range(of: "WITHOUT ROWID;", range: start.upperBound..<created.endIndex))
        var rows: [[SQLValue]] = []
        try database.forEach("SELECT * FROM raw_apple__transactions ORDER BY file_id, line, item") { row in
            rows.append((0..<(3 + RawTable.appleTransactions.columns.count)).map { row.value($0) })
        }
        let columns = ["file_id", "line", "item"] + RawTable.appleTransactions.columns
        func text(_ value: SQLValue, _ column: String) throws -> SQLValue {
            guard case .integer(let code) = value else { return value }
            let codes: AppleCodes? = switch column {
            case "environment": AppleEnvironment.codes
            case "type": AppleProductType.codes
            case "ownership": AppleOwnership.codes
            case "notification_type": AppleNotificationType.codes
            default: nil
            }
            if column == "origin" { return .text(try #require(TransactionOrigin(code: code)).rawValue) }
            return try codes.map { .text(try #require($0.text(code))) } ?? value
        }
        try database.transaction {
            try database.execute("DROP TABLE raw_apple__transactions")
            try database.execute(String(created[start.lowerBound..<end.upperBound]))
            try database.execute("ALTER TABLE raw_apple__transactions ADD COLUMN offer TEXT")
            let insert = try database.cached("INSERT INTO raw_apple__transactions (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))")
            for row in rows { try insert.insert(try zip(row, columns).map { try text($0, $1) }) }
            for index in RawIndexes.all where index.name.hasPrefix("raw_apple_by_") { try database.execute(index.sql) }
        }
    }

    @Test("a store from before the codes, migrated, holds the very rows a new store does and gives sample-data/expected again")
    func olderStoreMigrated() throws {
        let scenario = try Scenario()
        var options = RunOptions(
            input: SampleDataTests.sampleData, databasePath: scenario.databasePath, outFolder: scenario.out, jobs: 2,
            reconcile: ReconcileSettings(), report: ReportSettings(outFolder: scenario.out))
        options.lineRules = SampleDataTests.lineRules
        _ = try Pipeline.run(options, progress: nil)

        let database = try scenario.open()
        func sightings() throws -> [[SQLValue]] {
            var rows: [[SQLValue]] = []
            try database.forEach("SELECT * FROM raw_apple__transactions ORDER BY file_id, line, item") { row in
                rows.append((0..<(3 + RawTable.appleTransactions.columns.count)).map { row.value($0) })
            }
            return rows
        }
        let coded = try sightings()
        try Self.uncode(database)
        #expect(try database.scalar("SELECT count(*) FROM raw_apple__transactions WHERE typeof(origin) = 'text'") == .integer(Int64(coded.count)))
        #expect(try database.scalar("SELECT count(*) FROM raw_apple__transactions WHERE typeof(environment) = 'integer'") == .integer(0))
        try database.transaction { try database.execute(try Self.codesMigration().sql) }
        #expect(try sightings() == coded)

        // Everything is reconciled again from the migrated rows.
        try database.execute("INSERT OR IGNORE INTO dirty_keys VALUES ('all', '')")
        _ = try Pipeline.run(options, progress: nil)
        for name in SampleDataTests.outputs {
            let expected = try String(contentsOfFile: SampleDataTests.expected + "/" + name, encoding: .utf8)
            #expect(SampleDataTests.withoutHistory(name, try scenario.output(name)) == SampleDataTests.withoutHistory(name, expected),
                    "\(name) differs from sample-data/expected/\(name)")
        }
    }
}
