/// The revenue figures each published report showed (`fct_published_revenue`, `fct_published_report`), so a report
/// names the days it restates (`RestatedFigures`). A report is its zone, its folder and its as-of day: a run into the
/// same folder for the same day (a night run again, cron's retry) rewrites that report, and compares with the report
/// published before that report's first run, as its first run did, not with itself.
///
/// Each publication of a report has a number, in the order they were made. A figure (zone, day, reporting or local,
/// currency) is kept once per value it had, valid from the publication that made it until the one that changed it:
/// a report's figures are its zone's valid at its latest publication, up to its as-of day. So a night that changes
/// nothing adds only its new day, and the store grows with the figures that changed, not with reports × days. A
/// value no report is read as of any more (a night run again changed it again) is dropped.
///
/// A report saves its figures as pending (state 1, `fct_pending_revenue`) before its outputs' switch and makes them
/// published (state 0) after it, each in one transaction. A run killed between the two leaves its figures pending with the set they
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
        let rewritten = try publishedFigures(database, zone: zone, folder: folder, throughDay: throughDay)
        // The latest report of a day up to this one's, published before this report was first: a report of a later
        // day (a backfill's night after the nights it precedes) saw partitions this one does not, and one first
        // published after this report's first run would hide what that run said.
        var earlier: (folder: String, throughDay: Int64)?
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
            earlier = (row.string(0), row.int(1))
        }
        return ComparedRevenue(rewritten: rewritten,
                               earlier: try earlier.flatMap { try publishedFigures(database, zone: zone, folder: $0.folder, throughDay: $0.throughDay) })
    }

    /// Keeps `figures` as pending, in place of any pending ones, with the number of the publication they will be. A
    /// report published first keeps its place in the order of first publication; a new one comes after every other.
    /// Only the days up to its as-of day are kept: a report is compared on those alone (`RestatedFigures`).
    static func savePending(_ figures: PublishedRevenue, in database: Database) throws {
        try database.transaction {
            try clear(database, state: pending)
            try database.run("""
                INSERT INTO fct_published_report (state, zone, folder, through_day, set_path, currency, first_published, publication)
                SELECT ?1, ?2, ?3, ?4, ?5, ?6, coalesce(
                  (SELECT first_published FROM fct_published_report WHERE state = ?7 AND zone = ?2 AND folder = ?3 AND through_day = ?4),
                  next), next
                FROM (SELECT coalesce(max(publication), 0) + 1 AS next FROM fct_published_report)
                """, [
                .integer(Int64(pending)), .text(figures.zone), .text(figures.folder), .integer(figures.throughDay), .text(figures.setPath),
                .text(figures.reportingCurrency), .integer(Int64(published)),
            ])
            for figure in figures.figures where figure.day <= figures.throughDay {
                try database.run("""
                    INSERT INTO fct_pending_revenue (day, reporting, currency, date, gross, refunds, net) VALUES (?, ?, ?, ?, ?, ?, ?)
                    """, [
                    .integer(figure.day), .integer(figure.reporting ? 1 : 0), .text(figure.currency), .text(figure.date),
                    .text(figure.gross), .text(figure.refunds), .text(figure.net),
                ])
            }
        }
    }

    static func publishPending(_ database: Database) throws {
        try database.transaction { try promote(database) }
    }

    /// The pending report in place of the published one it rewrites, inside the caller's transaction; nothing when none
    /// is pending. Its zone's figures valid now, up to its as-of day, become its own: a value it changed or no longer
    /// has is valid until its publication, a value it changed or adds is valid from it, and a value it keeps stays as
    /// it is. Other reports' figures stay: they are read as of their own publications.
    private static func promote(_ database: Database) throws {
        guard let report = try report(database, state: pending, zone: nil) else { return }
        let same: [SQLValue] = [.integer(Int64(published)), .text(report.zone), .text(report.folder), .integer(report.throughDay)]
        let rewritten = try database.scalar(
            "SELECT publication FROM fct_published_report WHERE state = ? AND zone = ? AND folder = ? AND through_day = ?", same)
        try database.run("DELETE FROM fct_published_report WHERE state = ? AND zone = ? AND folder = ? AND through_day = ?", same)
        try database.run("UPDATE fct_published_report SET state = ? WHERE state = ?", [.integer(Int64(published)), .integer(Int64(pending))])
        let changed: [SQLValue] = [.text(report.zone), .integer(report.throughDay), .integer(report.publication)]
        try database.run("""
            UPDATE fct_published_revenue SET valid_to = ?3
            WHERE zone = ?1 AND day <= ?2 AND valid_to IS NULL AND NOT EXISTS (
              SELECT 1 FROM fct_pending_revenue AS now
              WHERE now.day = fct_published_revenue.day AND now.reporting = fct_published_revenue.reporting
                AND now.currency = fct_published_revenue.currency AND now.date = fct_published_revenue.date
                AND now.gross = fct_published_revenue.gross AND now.refunds = fct_published_revenue.refunds
                AND now.net = fct_published_revenue.net)
            """, changed)
        try database.run("""
            INSERT INTO fct_published_revenue (zone, day, reporting, currency, valid_from, valid_to, date, gross, refunds, net)
            SELECT ?1, day, reporting, currency, ?3, NULL, date, gross, refunds, net FROM fct_pending_revenue AS now
            WHERE day <= ?2 AND NOT EXISTS (
              SELECT 1 FROM fct_published_revenue AS kept
              WHERE kept.zone = ?1 AND kept.day = now.day AND kept.reporting = now.reporting AND kept.currency = now.currency
                AND kept.valid_to IS NULL)
            """, changed)
        try database.run("DELETE FROM fct_pending_revenue")
        // The values the rewritten report showed that no published report shows any more: no report is read as of a
        // publication they were valid at. Only the rewritten report stopped being read as of its earlier publication.
        guard case .integer(let earlier)? = rewritten else { return }
        try database.run("""
            DELETE FROM fct_published_revenue
            WHERE zone = ?1 AND day <= ?2 AND valid_from <= ?3 AND valid_to > ?3 AND NOT EXISTS (
              SELECT 1 FROM fct_published_report AS shown
              WHERE shown.state = ?4 AND shown.zone = ?1 AND shown.through_day >= fct_published_revenue.day
                AND shown.publication >= fct_published_revenue.valid_from AND shown.publication < fct_published_revenue.valid_to)
            """, [.text(report.zone), .integer(report.throughDay), .integer(earlier), .integer(Int64(published))])
    }

    private static func clear(_ database: Database, state: Int) throws {
        try database.run("DELETE FROM fct_published_report WHERE state = ?", [.integer(Int64(state))])
        if state == pending { try database.run("DELETE FROM fct_pending_revenue") }
    }

    /// A report as the store keeps it: which one it is, and the publication its figures are read as of.
    private struct Report {
        var setPath: String
        var folder: String
        var zone: String
        var reportingCurrency: String
        var throughDay: Int64
        var publication: Int64
    }

    /// The report of `state` in `zone`, `folder` and of `throughDay`; with no zone, the one pending report.
    private static func report(
        _ database: Database, state: Int, zone: String?, folder: String = "", throughDay: Int64 = 0
    ) throws -> Report? {
        var report: Report?
        let zoneValue: SQLValue = zone.map { .text($0) } ?? .null
        try database.forEach("""
            SELECT set_path, folder, zone, currency, through_day, publication FROM fct_published_report
            WHERE state = ?1 AND (?2 IS NULL OR (zone = ?2 AND folder = ?3 AND through_day = ?4))
            LIMIT 1
            """, [.integer(Int64(state)), zoneValue, .text(folder), .integer(throughDay)]) { row in
            report = Report(setPath: row.string(0), folder: row.string(1), zone: row.string(2), reportingCurrency: row.string(3),
                            throughDay: row.int(4), publication: row.int(5))
        }
        return report
    }

    /// The figures the published report of `zone`, `folder` and `throughDay` showed: its zone's valid at its
    /// publication, up to its as-of day.
    private static func publishedFigures(_ database: Database, zone: String, folder: String, throughDay: Int64) throws -> PublishedRevenue? {
        guard let found = try report(database, state: published, zone: zone, folder: folder, throughDay: throughDay) else { return nil }
        var figures = PublishedRevenue(setPath: found.setPath, folder: found.folder, zone: found.zone, reportingCurrency: found.reportingCurrency,
                                       throughDay: found.throughDay, figures: [])
        try database.forEach("""
            SELECT day, date, reporting, currency, gross, refunds, net FROM fct_published_revenue
            WHERE zone = ?1 AND day <= ?2 AND valid_from <= ?3 AND (valid_to IS NULL OR valid_to > ?3)
            ORDER BY day, reporting, currency
            """, [.text(found.zone), .integer(found.throughDay), .integer(found.publication)]) { row in
            figures.figures.append(PublishedRevenue.Figure(day: row.int(0), date: row.string(1), reporting: row.int(2) != 0, currency: row.string(3),
                                                           gross: row.string(4), refunds: row.string(5), net: row.string(6)))
        }
        return figures
    }
}
