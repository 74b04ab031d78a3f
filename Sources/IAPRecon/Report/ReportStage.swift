import Foundation

/// The settings of the report stage.
public struct ReportSettings: Sendable {
    public var outFolder: String
    public var zone: Zone = .utc
    public var currency: String = "USD"
    /// How ingest checked JWS signatures, for `summary.json`; nil (a report run on its own) takes
    /// what the stored receipts and notifications were read with.
    public var signatures: SignatureCheck?
    /// A store whose published first sightings before this report's as-of count as earlier
    /// reports: the store a replayed night was taken from, so the night's `new` and `first_seen`
    /// are what that night said, not a fresh store's.
    public var earlierSightings: String?
    /// The night this report is for was reported before by the store (a night run again, or
    /// reported again because the next one has not landed): findings that night showed first are
    /// new again, as that night saw them, though its alert named them already. A night stopped
    /// before its alert never counts as reported, so the next one alerts in its place.
    public var nightReportedBefore = false
    /// What the command says of the night itself, worded as on stderr: its partition had not landed,
    /// so it reports the newest one again; a backfill skipped the days before it. Cron's mail has
    /// them, but the page is what finance opens in the morning, and it must not pass for a new night.
    public var nightWarnings: [String] = []

    public var reportingCurrency: ReportingCurrency { ReportingCurrency(currency) }

    public init(outFolder: String, zone: Zone = .utc, currency: String = "USD", signatures: SignatureCheck? = nil) {
        self.outFolder = outFolder
        self.zone = zone
        self.currency = currency
        self.signatures = signatures
    }
}

/// What the report stage wrote, for the caller's exit code, alert line and log.
public struct ReportSummary: Sendable {
    public var findingsBySeverity: [Severity: Int]
    /// Per kind that has findings: how many, how many are new, and their money at risk in the
    /// reporting currency (the rounded rows summed), in `FindingKind` order.
    public var tallies: [FindingTally] = []
    public var currency = ReportingCurrency("USD")
    /// The app bundle ids the receipts and notifications named, sorted.
    public var bundleIDs: [String] = []
    /// How many rows of `transactions.csv` were written anew from the store when the report
    /// patched the file the last one wrote; nil when it wrote the file whole.
    public var transactionsPatched: Int?
    public var files: [String]
    /// What a person should know of the inputs the report read: fx.csv rates that disagree.
    public var warnings: [String] = []
    /// The revenue figures of days (and fiscal months) an earlier published report showed that this one changed, with
    /// their old and new values (`RestatedFigures`), as news for stderr; nil when none changed or none were published
    /// before. A report run again says only what changed of what it showed itself: the page keeps the rest.
    public var restatedRevenue: String?
}

/// The findings of one kind in a report, for the alert line.
public struct FindingTally: Sendable, Equatable {
    public var kind: FindingKind
    public var count: Int
    /// The findings first reported by this run that no report has announced yet (a replayed
    /// night's new findings less those the store's own nights showed): what `--fail-on-new` counts.
    public var new: Int
    /// Money at risk in the reporting currency, all and new only.
    public var atRisk: Decimal
    public var newAtRisk: Decimal
}

/// The store holds no join by this iaprecon: nothing to report until the earlier stages run.
public struct NotReconciled: Error, CustomStringConvertible, Sendable {
    public var reason: String
    public var description: String { "\(reason); run 'iaprecon normalize' and 'iaprecon join' on it first (or 'iaprecon run')" }
}

/// Stage 4, report: the only code that writes output files (CONTRACT.md §3).
///
/// All files of a run are written into one `OutputSet` and switched in at
/// once. Every file is sorted, so the same store writes the same bytes.
public enum ReportStage {
    /// Refuses a store the join has not reconciled, or whose results an older iaprecon wrote (the
    /// next join rebuilds them): never a report of tables read as they are not.
    static func checkReconciled(_ store: some ReportStore) throws -> JoinSettings {
        switch try store.reconciliation() {
        case .none: throw NotReconciled(reason: "the store holds no reconciliation")
        case .older: throw NotReconciled(reason: "the store's results were written by an older iaprecon")
        case .current(let settings): return settings
        }
    }

    /// `filesDone` hears, on the calling thread, of files as they are known to be written (a progress
    /// line), each file once, so its counts add up to the files of the set.
    ///
    /// The findings it shows first stay new to the store until `markReported`, which its caller
    /// calls once it said them (the findings line, the alert).
    static func run(store: some ReportStore, settings: ReportSettings, filesDone: ((Int) -> Void)? = nil) throws -> ReportSummary {
        Trace.mark("report start")
        let settingsJoinedWith = try checkReconciled(store)
        let (asOfMs, graceMs) = (settingsJoinedWith.asOfMs, settingsJoinedWith.graceMs)
        let rates = try store.fxRates()
        let fx = FXRates(rows: rates, reportingCurrency: settings.currency)
        try fx.checkStored(rates)
        let catalogConflicts = CatalogConflicts(rows: try store.catalogRows())
        // Attribution's installs next: the matching on this thread waits for them, while the
        // files below can wait for a core.
        let installs = try AttributionReport.readInstalls(store: store, zone: settings.zone, fx: fx)
        let announced: Set<String>, output: OutputSet, published: ComparedRevenue
        let reportFolder = OutputSet.canonicalFolder(settings.outFolder)
        do {
            // The report's one write before attribution's: the findings are read on another
            // connection once the sightings they are judged by are committed.
            announced = try store.recordFirstSightings(asOfMs: asOfMs, earlierIn: settings.earlierSightings)
            Trace.mark("report first sightings recorded")
            // What the reports published before this one showed, and what this one showed if it is run again: it names
            // what it restates. A report in another zone compares nothing, and leaves them be.
            published = try store.publishedRevenue(zone: settings.zone.identifier, folder: reportFolder,
                                                   throughDay: DayNames(settings.zone).number(asOfMs), earlierIn: settings.earlierSightings,
                                                   switchedIn: OutputSet.isCurrent(setPath:))
            output = try OutputSet(folder: settings.outFolder)
        } catch {
            installs.wait()
            throw error
        }
        var files: [String] = []
        var bundleIDs: [String] = []
        var transactionsPatched: Int?
        var restatedRevenue: String?
        /// What the inputs disagree on: said on stderr and on the page.
        var inputWarnings: [String] = []
        // Each file is written (and fsynced) as soon as what it shows is known, on the thread that
        // knows it: transactions streamed on a connection of their own from the start; revenue (daily,
        // then by fiscal month) beside the summary's counts; the findings, rejects and consumption
        // requests on a third; here attribution, the longest, whose matching waits for the installs.
        // The report page and the summary need all but the transactions and come last.
        let transactionsFile = Background { [open = store.opener, zone = settings.zone, currency = settings.reportingCurrency] in
            let reader = try open()
            var written: TransactionsReport.Written?
            try output.write("transactions.csv") {
                written = try TransactionsReport.write(reader, zone: zone, fx: fx, currency: currency, &$0)
            }
            if let patched = written?.patchedRows { Trace.mark("report transactions.csv patched (\(patched) rows anew)") }
            return written
        }
        // Revenue and the summary's counts read on their own connection while attribution runs here.
        let revenueWork = Background { [open = store.opener, zone = settings.zone, currency = settings.reportingCurrency, asOfMs, graceMs] in
            let reader = try open()
            let revenue = try RevenueReport(store: reader, zone: zone, fx: fx)
            Trace.mark("report revenue (background)")
            try output.write("revenue_daily.csv") { try revenue.write(&$0) }
            try output.write("revenue_monthly.csv") { try RevenueMonthlyReport(daily: revenue).write(&$0, currency: currency) }
            let tieOut = try AppleTieOutReport(store: reader, fx: fx, reportingCurrency: currency)
            let counts = try reader.summaryCounts(asOfMs: asOfMs, graceMs: graceMs)
            // Written whenever apple/ has reports (CONTRACT.md §3), even ones without an in-app row.
            let writesTieOut = !tieOut.rows.isEmpty || counts.files.contains(where: { $0.source == SourceKind.apple.rawValue })
            if writesTieOut {
                try output.write("apple_tieout.csv") { try tieOut.write(&$0) }
            }
            // Notifications of types Apple does not document, which the ingest named on the night it read
            // them: the page names them while they are stored (stderr has had them once).
            let undocumentedTypes = try Self.undocumentedNotificationTypes(reader)
            Trace.mark("report summary counts (background)")
            return (revenue, tieOut, counts, writesTieOut, undocumentedTypes)
        }
        // The findings on a third connection; the files of rows read as they are stored on a fourth, so
        // that no one worker is left with both when attribution is done.
        let findingsWork = Background { [open = store.opener, zone = settings.zone] in
            let reader = try open()
            let findings = try FindingsReport(reading: reader, fx: fx, zone: zone, shownAgainAt: settings.nightReportedBefore ? asOfMs : nil,
                                              announced: announced)
            Trace.mark("report findings and fx (background)")
            try output.write("findings.csv") { try findings.writeCSV(&$0) }
            try output.write("findings.json") { try findings.writeJSON(&$0) }
            return findings
        }
        let rowFiles = Background { [open = store.opener, zone = settings.zone, currency = settings.currency] in
            let reader = try open()
            try output.write("rejects.csv") { try RejectsReport.write(reader, &$0) }
            let answers = try ConsumptionRequestsReport.answers(store: reader, zone: zone, currency: currency)
            try output.write("consumption_requests.jsonl") { try ConsumptionRequestsReport.write(answers, &$0) }
            Trace.mark("report consumption requests (background)")
        }
        let findings: FindingsReport
        do {
            let attribution: AttributionReport
            do {
                // Reads in one snapshot; fct_user_installs is written on another connection meanwhile.
                attribution = try store.readTransaction {
                    try AttributionReport(store: store, zone: settings.zone, fx: fx, asOfMs: asOfMs, installs: installs)
                }
                Trace.mark("report attribution")
                findings = try findingsWork.value()
                try rowFiles.value()
                Trace.mark("report waited for findings")
                filesDone?(4)
                inputWarnings = fx.warnings + catalogConflicts.warnings + attribution.spendOverlaps.warnings
                    + attribution.spendFXWarnings(settings.reportingCurrency) + attribution.claimFXWarnings(settings.reportingCurrency)
                    + findings.fxWarnings
            } catch {
                installs.wait()
                findingsWork.wait()
                rowFiles.wait()
                revenueWork.wait()
                transactionsFile.wait()
                throw error
            }
            // Written beside the page and the summary, which need every report but transactions.csv,
            // which may still be streaming.
            let attributionFile = Background { [attribution, currency = settings.reportingCurrency] in
                try output.write("attribution.csv") { try attribution.write(&$0, currency: currency) }
            }
            let tieOut: AppleTieOutReport, counts: SummaryReport.Counts, wroteTieOut: Bool, figures: PublishedRevenue
            do {
                let revenue: RevenueReport, undocumentedTypes: [String]
                (revenue, tieOut, counts, wroteTieOut, undocumentedTypes) = try revenueWork.value()
                Trace.mark("report waited for revenue")
                figures = RestatedFigures.figures(revenue, zone: settings.zone, asOfMs: asOfMs, setPath: output.committedSetPath,
                                                  folder: reportFolder)
                // The page says what this report restates of the one before it, on every run of it alike: a night run
                // again writes its folder as its first run did. Stderr says only what is news: all of it the first
                // time, then what changed of what this report itself showed (a late file), nothing when nothing did.
                let restated = RestatedFigures(published: published.earlier, now: figures).line()
                restatedRevenue = published.rewritten.map { RestatedFigures(published: $0, now: figures).line() } ?? restated
                filesDone?(wroteTieOut ? 3 : 2)
                inputWarnings += revenue.fxWarnings + tieOut.fxWarnings
                inputWarnings += Self.salesReportAppsWarnings(counts.salesReportApps)
                inputWarnings += Self.salesReportGapWarnings(counts.salesReportDays)
                inputWarnings += Self.ordersOfSeveralUsersWarnings(counts.ordersOfSeveralUsers)
                inputWarnings += Self.filesNotReadAgainWarnings(counts.files)
                let summary = SummaryReport.build(counts: counts, asOfMs: asOfMs, graceMs: graceMs, settings: settings,
                                                  findings: findings, revenue: revenue, tieOut: tieOut, attribution: attribution)
                var page = ReportPage(asOfMs: asOfMs, settings: settings, counts: counts, findings: findings, revenue: revenue,
                                      attribution: attribution)
                page.tieout = ReportPage.TieOut(tieOut.rows, overlaps: tieOut.overlaps, mixedProceeds: tieOut.mixedProceeds)
                page.warnings = inputWarnings + undocumentedTypes
                page.nightWarnings = settings.nightWarnings
                page.restatedRevenue = restated
                try output.write("report.html") { try $0.write(page.html()) }
                try output.write("summary.json") { try $0.write(JSONWriter.pretty(summary)) }
                filesDone?(2)
                try attributionFile.value()
                Trace.mark("report waited for attribution.csv")
                filesDone?(1)
            } catch {
                attributionFile.wait()
                transactionsFile.wait()
                throw error
            }
            let transactions = try transactionsFile.value()
            Trace.mark("report waited for transactions.csv")
            filesDone?(1)
            // Recorded before the set is switched in: a run killed between the two leaves a record
            // that names no current file, and the next report writes the file whole.
            if let transactions, let file = output.identity(of: "transactions.csv") {
                try store.saveTransactionsFile(TransactionsFileRecord(
                    joinNumber: transactions.joinNumber, settings: transactions.settings, path: output.committedPath(of: "transactions.csv"), file: file))
            }
            // Pending until the set is switched in: a run killed in between leaves them to the next report, which takes
            // them as published only if this set is its folder's current one (`StoredPublishedRevenue`).
            try store.savePendingRevenue(figures)
            try output.commit()
            transactionsPatched = transactions?.patchedRows
            bundleIDs = counts.bundleIDs
            Trace.mark("report files written")
            files = ["findings.csv", "findings.json", "revenue_daily.csv", "revenue_monthly.csv", "transactions.csv"]
                + (wroteTieOut ? ["apple_tieout.csv"] : [])
                + ["attribution.csv", "consumption_requests.jsonl", "rejects.csv", "report.html", "summary.json"]
        } catch {
            output.discard()
            throw error
        }
        try recordingShown(in: settings.outFolder) { try store.publishPendingRevenue() }
        var summary = ReportSummary(findingsBySeverity: [:], files: files)
        summary.warnings = inputWarnings
        summary.restatedRevenue = restatedRevenue
        var byKind: [FindingKind: (count: Int, new: Int, atRisk: Amount, newAtRisk: Amount)] = [:]
        for row in findings.rows {
            guard let severity = Severity(rawValue: row.severity) else { continue }
            summary.findingsBySeverity[severity, default: 0] += 1
            guard let kind = FindingKind(rawValue: row.kind) else { continue }
            var tally = byKind[kind] ?? (0, 0, .zero, .zero)
            tally.count += 1
            tally.atRisk += row.reportingAmount ?? .zero
            if row.isNew && !row.wasAnnounced {
                tally.new += 1
                tally.newAtRisk += row.reportingAmount ?? .zero
            }
            byKind[kind] = tally
        }
        summary.tallies = FindingKind.allCases.compactMap { kind in
            byKind[kind].map { FindingTally(kind: kind, count: $0.count, new: $0.new, atRisk: $0.atRisk.decimal, newAtRisk: $0.newAtRisk.decimal) }
        }
        summary.currency = settings.reportingCurrency
        summary.bundleIDs = bundleIDs
        summary.transactionsPatched = transactionsPatched
        return summary
    }

    /// Makes the findings the last report showed first reported: their alert was said. A run stopped
    /// between its outputs' switch and this (killed, or its `latest` link not moved) leaves them new,
    /// and the next report says them, and alerts, again.
    static func markReported(_ store: some ReportStore, outFolder: String) throws {
        try recordingShown(in: outFolder) { try store.publishFirstSightings() }
    }

    /// A store write after the outputs' switch (`NotRecorded`).
    static func recordingShown(in outFolder: String, _ write: () throws -> Void) throws {
        do {
            try write()
        } catch {
            throw NotRecorded(outFolder: outFolder, reason: error)
        }
    }

    /// The store could not record what the outputs just switched in show (a full disk, say). The
    /// reports are this run's and whole; the store is as if the run had been killed right after the
    /// switch, which the next report mends: it finds the switched-in revenue current, and says the
    /// findings it shows first as new again. Still an error: the store needs a person.
    public struct NotRecorded: Error, CustomStringConvertible {
        public var outFolder: String
        public var reason: any Error

        public var description: String {
            "the reports in \(outFolder)/ are this run's, but the store could not record them as shown: \(reason); "
                + "the next run records them, and says their new findings again"
        }
    }

    /// The ingest's warning of the stored notifications whose type Apple does not document (`UndocumentedTypes`),
    /// for those that carry a transaction: it counts as a purchase, and a new type may mean a refund that is not
    /// read as one, which finance must see on every page while they are stored, not only in the log of the night
    /// that read them. One without a transaction changes no money, and the store keeps no type for it.
    /// Sales Reports read without `--app-sku` whose in-app rows belong to more than one app: the
    /// tie-out counts every app's sales as this app's, and flags the others' as never verified.
    static func salesReportAppsWarnings(_ apps: [String]) -> [String] {
        guard apps.count > 1 else { return [] }
        return ["Sales Reports list the in-app sales of \(apps.count) apps (Parent Identifier \(apps.joined(separator: ", "))), "
                + "all tied out as this app's: name this app's SKU with --app-sku to leave the others out"]
    }

    /// The days between the first and the last the Sales Reports cover that no report covers. The
    /// tie-out compares only the days reported, so a report never put in leaves its day's Apple
    /// units and verified units out of every total, unsaid; Apple writes no report of a day without
    /// any sale, so such a day may be one. Said on every report while the gap stays, at most `listed` days by name.
    static func salesReportGapWarnings(_ days: [String], listed: Int = 10) -> [String] {
        var missing: [String] = []
        for (day, next) in zip(days, days.dropFirst()) {
            guard var ms = Timestamp.startOfDay(day), let nextMs = Timestamp.startOfDay(next) else { continue }
            ms += 86_400_000
            while ms < nextMs {
                missing.append(Timestamp.day(ms))
                ms += 86_400_000
            }
        }
        guard let first = days.first, let last = days.last, !missing.isEmpty else { return [] }
        let named = missing.prefix(listed).joined(separator: ", ") + (missing.count > listed ? " and \(missing.count - listed) more" : "")
        let count = missing.count == 1 ? "1 day" : "\(missing.count) days"
        return ["Sales Reports cover \(first) to \(last) but no report of \(count) between them is in (\(named)): "
                + "the tie-out compares only the days reported, so those days' Apple and verified units are in no total "
                + "(a day Apple sold nothing on has no report)"]
    }

    /// Order ids more than one user logged. Orders are matched by id (CONTRACT.md §2), and the
    /// join takes an id's first line for its order: the other users' orders are counted nowhere,
    /// and their transactions are matched to no order of that id. Said on every report while the
    /// lines are stored, at most `listed` ids by name, each with the lookup that shows its users.
    static func ordersOfSeveralUsersWarnings(_ orders: [SummaryCounts.OrderOfSeveralUsers], listed: Int = 10) -> [String] {
        var warnings = orders.prefix(listed).map { order in
            let users = order.users.prefix(5).map { "\($0.userID) (\($0.source))" }
                + (order.users.count > 5 ? ["\(order.users.count - 5) more"] : [])
            let named = users.count > 1 ? users.dropLast().joined(separator: ", ") + " and " + (users.last ?? "") : users.joined()
            return "order id \(order.orderID) was logged by \(order.users.count) users, \(named): the reconciliation takes the first "
                + "line's order, and counts the others' nowhere (iaprecon history --order \(order.orderID))"
        }
        if orders.count > listed {
            let more = orders.count - listed
            warnings.append("\(more) more order \(more == 1 ? "id was" : "ids were") logged by more than one user each "
                            + "(iaprecon history --order ID names an id's users)")
        }
        return warnings
    }

    /// Files a store migration asked to read again (an older iaprecon misread what they hold) that the
    /// input folder no longer has: their lines stay as that iaprecon read them, and nothing else says so.
    /// Said on every report until the files are put back for one run, at most `listed` paths by name.
    static func filesNotReadAgainWarnings(_ files: [SummaryCounts.InputFile], listed: Int = 10) -> [String] {
        let unread = files.filter { !$0.present && $0.readAgainFor != nil }
        guard !unread.isEmpty else { return [] }
        let reasons = Set(unread.compactMap(\.readAgainFor)).sorted()
        let named = unread.prefix(listed).map(\.path).joined(separator: ", ") + (unread.count > listed ? " and \(unread.count - listed) more" : "")
        return ["\(unread.count) \(unread.count == 1 ? "file" : "files") an upgrade of this store asked to read again "
                + "(for \(reasons.joined(separator: "; for "))) \(unread.count == 1 ? "is" : "are") no longer in the input folder: \(named); "
                + "\(unread.count == 1 ? "its" : "their") lines stay as an older iaprecon read them until "
                + "\(unread.count == 1 ? "it is" : "they are") put back for one run"]
    }

    static func undocumentedNotificationTypes(_ store: some ReportStore) throws -> [String] {
        var undocumented = UndocumentedTypes(.notifications)
        try store.forEachNotification(ofTypeOtherThan: NotificationParser.knownV1Types.union(NotificationParser.knownV2Types).sorted()) {
            undocumented.add(type: $0, source: $1)
        }
        return undocumented.warnings
    }
}
