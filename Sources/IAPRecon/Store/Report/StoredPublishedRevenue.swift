/// The revenue figures the last published report of each zone showed (`fct_published_revenue`, `fct_published_report`),
/// so the next report in that zone names the days it restates (`RestatedFigures`). Kept per zone: a report in another
/// `--tz` compares nothing, and must not take the place of the figures the next report in the first zone compares with.
///
/// A report saves its figures as pending (state 1) before its outputs' switch and makes them published (state 0)
/// after it, each in one transaction. A run killed between the two leaves its figures pending with the set they
/// belong to: the next report takes them as published if that set is the current one of its folder, and drops them
/// if it is not (the switch never happened). So the published figures are always those of the outputs last switched
/// in, wherever they were written; once their folder is gone nothing tells, and the earlier figures stay published,
/// so a restatement may be said twice but is never missed.
enum StoredPublishedRevenue {
    static let published = 0
    static let pending = 1

    static func published(_ database: Database, zone: String, switchedIn: (_ setPath: String) -> Bool) throws -> PublishedRevenue? {
        if let left = try report(database, state: pending, zone: nil) {
            let wasSwitchedIn = switchedIn(left.setPath)
            try database.transaction {
                if wasSwitchedIn { try promote(database) } else { try clear(database, state: pending) }
            }
        }
        return try report(database, state: published, zone: zone)
    }

    static func savePending(_ figures: PublishedRevenue, in database: Database) throws {
        try database.transaction {
            try clear(database, state: pending)
            try database.run("""
                INSERT INTO fct_published_report (state, zone, set_path, currency, through_day) VALUES (?, ?, ?, ?, ?)
                """, [
                .integer(Int64(pending)), .text(figures.zone), .text(figures.setPath), .text(figures.reportingCurrency),
                .integer(figures.throughDay),
            ])
            for figure in figures.figures {
                try database.run("""
                    INSERT INTO fct_published_revenue (state, zone, day, reporting, currency, date, gross, refunds, net)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, [
                    .integer(Int64(pending)), .text(figures.zone), .integer(figure.day), .integer(figure.reporting ? 1 : 0),
                    .text(figure.currency), .text(figure.date), .text(figure.gross), .text(figure.refunds), .text(figure.net),
                ])
            }
        }
    }

    static func publishPending(_ database: Database) throws {
        try database.transaction { try promote(database) }
    }

    /// The pending figures in place of the published ones of their zone, inside the caller's transaction; nothing
    /// when none are pending. Other zones' figures stay.
    private static func promote(_ database: Database) throws {
        guard let zone = try report(database, state: pending, zone: nil)?.zone else { return }
        try database.run("DELETE FROM fct_published_report WHERE state = ? AND zone = ?", [.integer(Int64(published)), .text(zone)])
        try database.run("DELETE FROM fct_published_revenue WHERE state = ? AND zone = ?", [.integer(Int64(published)), .text(zone)])
        try database.run("UPDATE fct_published_report SET state = ? WHERE state = ?", [.integer(Int64(published)), .integer(Int64(pending))])
        try database.run("UPDATE fct_published_revenue SET state = ? WHERE state = ?", [.integer(Int64(published)), .integer(Int64(pending))])
    }

    private static func clear(_ database: Database, state: Int) throws {
        try database.run("DELETE FROM fct_published_report WHERE state = ?", [.integer(Int64(state))])
        try database.run("DELETE FROM fct_published_revenue WHERE state = ?", [.integer(Int64(state))])
    }

    /// The report of `state` in `zone`; with no zone, the one pending report, whatever its zone.
    private static func report(_ database: Database, state: Int, zone: String?) throws -> PublishedRevenue? {
        var report: PublishedRevenue?
        let zoneValue: SQLValue = zone.map { .text($0) } ?? .null
        try database.forEach("""
            SELECT set_path, zone, currency, through_day FROM fct_published_report WHERE state = ? AND (? IS NULL OR zone = ?)
            LIMIT 1
            """, [.integer(Int64(state)), zoneValue, zoneValue]) { row in
            report = PublishedRevenue(setPath: row.string(0), zone: row.string(1), reportingCurrency: row.string(2), throughDay: row.int(3), figures: [])
        }
        guard var found = report else { return nil }
        try database.forEach("""
            SELECT day, date, reporting, currency, gross, refunds, net FROM fct_published_revenue WHERE state = ? AND zone = ?
            ORDER BY day, reporting, currency
            """, [.integer(Int64(state)), .text(found.zone)]) { row in
            found.figures.append(PublishedRevenue.Figure(day: row.int(0), date: row.string(1), reporting: row.int(2) != 0, currency: row.string(3),
                                                         gross: row.string(4), refunds: row.string(5), net: row.string(6)))
        }
        return found
    }
}
