/// The revenue figures the last published report showed (`fct_published_revenue`, `fct_published_report`), so the
/// next report names the days it restates (`RestatedFigures`).
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

    static func published(_ database: Database, switchedIn: (_ setPath: String) -> Bool) throws -> PublishedRevenue? {
        if let left = try report(database, state: pending) {
            let wasSwitchedIn = switchedIn(left.setPath)
            try database.transaction {
                if wasSwitchedIn { try promote(database) } else { try clear(database, state: pending) }
            }
        }
        return try report(database, state: published)
    }

    static func savePending(_ figures: PublishedRevenue, in database: Database) throws {
        try database.transaction {
            try clear(database, state: pending)
            try database.run("INSERT INTO fct_published_report VALUES (?, ?, ?, ?, ?)", [
                .integer(Int64(pending)), .text(figures.setPath), .text(figures.zone), .text(figures.reportingCurrency),
                .integer(figures.throughDay),
            ])
            for figure in figures.figures {
                try database.run("INSERT INTO fct_published_revenue VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [
                    .integer(Int64(pending)), .integer(figure.day), .integer(figure.reporting ? 1 : 0), .text(figure.currency),
                    .text(figure.date), .text(figure.gross), .text(figure.refunds), .text(figure.net),
                ])
            }
        }
    }

    static func publishPending(_ database: Database) throws {
        try database.transaction { try promote(database) }
    }

    /// The pending figures in place of the published ones, inside the caller's transaction; nothing when none are pending.
    private static func promote(_ database: Database) throws {
        guard try database.scalar("SELECT count(*) FROM fct_published_report WHERE state = ?", [.integer(Int64(pending))]).integerValue > 0
        else { return }
        try clear(database, state: published)
        try database.run("UPDATE fct_published_report SET state = ? WHERE state = ?", [.integer(Int64(published)), .integer(Int64(pending))])
        try database.run("UPDATE fct_published_revenue SET state = ? WHERE state = ?", [.integer(Int64(published)), .integer(Int64(pending))])
    }

    private static func clear(_ database: Database, state: Int) throws {
        try database.run("DELETE FROM fct_published_report WHERE state = ?", [.integer(Int64(state))])
        try database.run("DELETE FROM fct_published_revenue WHERE state = ?", [.integer(Int64(state))])
    }

    private static func report(_ database: Database, state: Int) throws -> PublishedRevenue? {
        var report: PublishedRevenue?
        try database.forEach("SELECT set_path, zone, currency, through_day FROM fct_published_report WHERE state = ?", [.integer(Int64(state))]) { row in
            report = PublishedRevenue(setPath: row.string(0), zone: row.string(1), reportingCurrency: row.string(2), throughDay: row.int(3), figures: [])
        }
        guard var found = report else { return nil }
        try database.forEach("""
            SELECT day, date, reporting, currency, gross, refunds, net FROM fct_published_revenue WHERE state = ?
            ORDER BY day, reporting, currency
            """, [.integer(Int64(state))]) { row in
            found.figures.append(PublishedRevenue.Figure(day: row.int(0), date: row.string(1), reporting: row.int(2) != 0, currency: row.string(3),
                                                         gross: row.string(4), refunds: row.string(5), net: row.string(6)))
        }
        return found
    }
}
