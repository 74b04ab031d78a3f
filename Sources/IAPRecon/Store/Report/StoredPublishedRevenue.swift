/// The revenue figures each published report showed (`fct_published_revenue`, `fct_published_report`), so a report
/// names the days it restates (`RestatedFigures`). A report is its zone, its folder and its as-of day: a run into the
/// same folder for the same day (a night run again, cron's retry) rewrites that report, and compares with the report
/// published before that report's first run, as its first run did, not with itself.
///
/// A report saves its figures as pending (state 1) before its outputs' switch and makes them published (state 0)
/// after it, each in one transaction. A run killed between the two leaves its figures pending with the set they
/// belong to: the next report takes them as published if that set is the current one of its folder, and drops them
/// if it is not (the switch never happened). So the published figures of a report are always those of its outputs
/// last switched in; once their folder is gone nothing tells, and its earlier figures stay published, so a
/// restatement may be said twice but is never missed.
enum StoredPublishedRevenue {
    static let published = 0
    static let pending = 1
    /// The migration that made the tables per report.
    static let migration = 42

    /// Settles what a killed run left pending: published if `switchedIn` says its set is its folder's current one,
    /// else dropped.
    static func settle(_ database: Database, switchedIn: (_ setPath: String) -> Bool) throws {
        guard let left = try report(database, state: pending, zone: nil) else { return }
        let wasSwitchedIn = switchedIn(left.setPath)
        try database.transaction {
            if wasSwitchedIn { try promote(database) } else { try clear(database, state: pending) }
        }
    }

    /// The published reports the report of `zone`, `folder` and `throughDay` is compared with; reads only.
    static func compared(_ database: Database, zone: String, folder: String, throughDay: Int64) throws -> ComparedRevenue {
        let rewritten = try report(database, state: published, zone: zone, folder: folder, throughDay: throughDay)
        // The latest report of a day up to this one's, published before this report was first: a report of a later
        // day (a backfill's night after the nights it precedes) saw partitions this one does not, and one first
        // published after this report's first run would hide what that run said.
        var earlier: PublishedRevenue?
        try database.forEach("""
            SELECT folder, through_day FROM fct_published_report
            WHERE state = ? AND zone = ? AND through_day <= ? AND NOT (folder = ? AND through_day = ?)
              AND first_published < coalesce((SELECT first_published FROM fct_published_report
                                               WHERE state = ? AND zone = ? AND folder = ? AND through_day = ?), ?)
            ORDER BY through_day DESC, first_published DESC LIMIT 1
            """, [
            .integer(Int64(published)), .text(zone), .integer(throughDay), .text(folder), .integer(throughDay),
            .integer(Int64(published)), .text(zone), .text(folder), .integer(throughDay), .integer(Int64.max),
        ]) { row in
            earlier = PublishedRevenue(setPath: "", folder: row.string(0), zone: zone, reportingCurrency: "", throughDay: row.int(1), figures: [])
        }
        if let found = earlier {
            earlier = try report(database, state: published, zone: zone, folder: found.folder, throughDay: found.throughDay)
        }
        return ComparedRevenue(rewritten: rewritten, earlier: earlier)
    }

    /// Keeps `figures` as pending, in place of any pending ones. A report published first keeps its place in the
    /// order of first publication; a new one comes after every other.
    static func savePending(_ figures: PublishedRevenue, in database: Database) throws {
        try database.transaction {
            try clear(database, state: pending)
            try database.run("""
                INSERT INTO fct_published_report (state, zone, folder, through_day, set_path, currency, first_published)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, coalesce(
                  (SELECT first_published FROM fct_published_report WHERE state = ?7 AND zone = ?2 AND folder = ?3 AND through_day = ?4),
                  (SELECT coalesce(max(first_published), 0) + 1 FROM fct_published_report)))
                """, [
                .integer(Int64(pending)), .text(figures.zone), .text(figures.folder), .integer(figures.throughDay), .text(figures.setPath),
                .text(figures.reportingCurrency), .integer(Int64(published)),
            ])
            for figure in figures.figures {
                try database.run("""
                    INSERT INTO fct_published_revenue (state, zone, folder, through_day, day, reporting, currency, date, gross, refunds, net)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, [
                    .integer(Int64(pending)), .text(figures.zone), .text(figures.folder), .integer(figures.throughDay), .integer(figure.day),
                    .integer(figure.reporting ? 1 : 0), .text(figure.currency), .text(figure.date), .text(figure.gross), .text(figure.refunds),
                    .text(figure.net),
                ])
            }
        }
    }

    static func publishPending(_ database: Database) throws {
        try database.transaction { try promote(database) }
    }

    /// The pending figures in place of the published ones of their report, inside the caller's transaction; nothing
    /// when none are pending. Other reports' figures stay.
    private static func promote(_ database: Database) throws {
        guard let report = try report(database, state: pending, zone: nil) else { return }
        let same: [SQLValue] = [.integer(Int64(published)), .text(report.zone), .text(report.folder), .integer(report.throughDay)]
        try database.run("DELETE FROM fct_published_report WHERE state = ? AND zone = ? AND folder = ? AND through_day = ?", same)
        try database.run("DELETE FROM fct_published_revenue WHERE state = ? AND zone = ? AND folder = ? AND through_day = ?", same)
        try database.run("UPDATE fct_published_report SET state = ? WHERE state = ?", [.integer(Int64(published)), .integer(Int64(pending))])
        try database.run("UPDATE fct_published_revenue SET state = ? WHERE state = ?", [.integer(Int64(published)), .integer(Int64(pending))])
    }

    private static func clear(_ database: Database, state: Int) throws {
        try database.run("DELETE FROM fct_published_report WHERE state = ?", [.integer(Int64(state))])
        try database.run("DELETE FROM fct_published_revenue WHERE state = ?", [.integer(Int64(state))])
    }

    /// The report of `state` in `zone`, `folder` and of `throughDay`; with no zone, the one pending report.
    private static func report(
        _ database: Database, state: Int, zone: String?, folder: String = "", throughDay: Int64 = 0
    ) throws -> PublishedRevenue? {
        var report: PublishedRevenue?
        let zoneValue: SQLValue = zone.map { .text($0) } ?? .null
        try database.forEach("""
            SELECT set_path, folder, zone, currency, through_day FROM fct_published_report
            WHERE state = ?1 AND (?2 IS NULL OR (zone = ?2 AND folder = ?3 AND through_day = ?4))
            LIMIT 1
            """, [.integer(Int64(state)), zoneValue, .text(folder), .integer(throughDay)]) { row in
            report = PublishedRevenue(setPath: row.string(0), folder: row.string(1), zone: row.string(2), reportingCurrency: row.string(3),
                                      throughDay: row.int(4), figures: [])
        }
        guard var found = report else { return nil }
        try database.forEach("""
            SELECT day, date, reporting, currency, gross, refunds, net FROM fct_published_revenue
            WHERE state = ? AND zone = ? AND folder = ? AND through_day = ?
            ORDER BY day, reporting, currency
            """, [.integer(Int64(state)), .text(found.zone), .text(found.folder), .integer(found.throughDay)]) { row in
            found.figures.append(PublishedRevenue.Figure(day: row.int(0), date: row.string(1), reporting: row.int(2) != 0, currency: row.string(3),
                                                         gross: row.string(4), refunds: row.string(5), net: row.string(6)))
        }
        return found
    }
}
