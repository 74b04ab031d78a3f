import Foundation
import Testing
@testable import IAPRecon

@Suite("Report row values: amounts parsed and rates looked up once per distinct text and day")
struct RowValuesTests {
    /// A store whose fx.csv changes the EUR rate on 2026-03-08 (the day New York's clocks go forward)
    /// and has no JPY rate before 2026-03-09; and rows repeating prices, a NULL, a non-number and
    /// currencies in several spellings, at instants either side of New York's and UTC's midnights.
    private func store() throws -> (Scenario, Database, FXRates) {
        let scenario = try Scenario()
        let database = try scenario.open()
        try database.transaction {
            try database.execute("""
                INSERT INTO files (file_id, path, source, content_hash, bytes, lines_read, accepted, rejected, blank, ignored, ingested_ms)
                VALUES (1, 'fx.csv', 'fx', '', 0, 3, 3, 0, 0, 0, 0);
                INSERT INTO raw_fx__rates (file_id, line, item, day, currency, rate) VALUES
                  (1, 2, 0, '2026-03-07', 'EUR', '1.08'), (1, 3, 0, '2026-03-08', 'EUR', '1.10'), (1, 4, 0, '2026-03-09', 'JPY', '0.0067');
                CREATE TABLE t (n INTEGER, ms INTEGER, currency TEXT, amount TEXT);
                """)
            let instants: [Int64] = [
                1_772_841_600_000,  // 2026-03-07T00:00Z: the 6th in New York
                1_772_928_000_000 - 1,  // 2026-03-07T23:59:59.999Z: the 7th in New York
                1_772_946_000_000,  // 2026-03-08T05:00Z: the 8th in New York
                1_773_014_400_000,  // 2026-03-09T00:00Z: the 8th in New York
                1_773_032_400_000,  // 2026-03-09T05:00Z: the 9th in New York
            ]
            let currencies: [String?] = ["EUR", "JPY", "USD", nil, "eur", ""]
            let amounts: [String?] = ["0.99", "0.99", "4.99", nil, "abc", "0.990", "-1.5", "1e2"]
            var n: Int64 = 0
            for ms in instants {
                for currency in currencies {
                    for amount in amounts {
                        try database.run("INSERT INTO t VALUES (?, ?, ?, ?)",
                                         [.integer(n), .integer(ms), currency.map(SQLValue.text) ?? .null, amount.map(SQLValue.text) ?? .null])
                        n += 1
                    }
                }
            }
        }
        return (scenario, database, FXRates(rows: try StoredReportRows.fxRates(database), reportingCurrency: "USD"))
    }

    /// What the test selects of a row of `t`.
    private enum Column: Int, SelectedColumn {
        case ms, currency, amount
        var sql: String { ["ms", "currency", "amount"][rawValue] }
    }

    @Test("every row gets what parsing its text and asking FXRates for its day would give", arguments: ["UTC", "America/New_York"])
    func sameAsDirect(zoneName: String) throws {
        let (scenario, database, fx) = try store()
        let zone = try #require(Zone(zoneName))
        var reader = AmountReader(fx: fx, zone: zone)
        var days = DayNames(zone)
        var rows = 0
        var rated = 0
        try database.forEach("SELECT \(Column.selectList) FROM t ORDER BY n") { row in
            let ms = row.int(Column.ms)
            let currency = row.optionalString(Column.currency) ?? ""
            #expect(reader.amount(row, Column.amount) == row.optionalString(Column.amount).flatMap(Amount.parse))
            let expectedRate = fx.rate(currency, on: days(ms))
            #expect(reader.rate(currency: reader.currency(row, Column.currency), atMs: ms) == expectedRate, "\(currency) at \(ms) in \(zoneName)")
            #expect(reader.day(ms) == days(ms))
            if expectedRate != nil { rated += 1 }
            rows += 1
        }
        #expect(rows == 5 * 6 * 8)
        // USD always; EUR from its first day; JPY only on the 9th: the lookups really differ by day.
        #expect(rated > 5 * 8 && rated < 5 * 6 * 8)
        #expect(reader.currencies.texts.count == 5)  // EUR, JPY, USD, "" (NULL and empty), eur
        withExtendedLifetime(scenario) {}
    }
}
