/// The report's store in SQLite (`ReportStore`): its queries are `StoredReportRows`',
/// `StoredSummaryCounts`', `StoredUserInstalls`', `StoredMMPSegments`' and the normalizing readers' (`MMPEvents`,
/// `FirstRegistrations`, `StoredDeliveries`, `AppleTransactions`), on one connection; another
/// thread opens its own (`opener`), and the users' installs are written on a second connection
/// (`BackgroundInserts`).
struct SQLiteReportStore: ReportStore {
    let database: Database

    init(_ database: Database) {
        self.database = database
    }

    var opener: @Sendable () throws -> SQLiteReportStore {
        { [path = database.path] in SQLiteReportStore(try Database(path: path, readOnly: true)) }
    }

    func readTransaction<T>(_ body: () throws -> T) throws -> T {
        try database.readTransaction(body)
    }

    func reconciliation() throws -> Reconciliation {
        guard try StoredJoinResults.exist(database) else { return .none }
        guard try StoredJoinResults.areCurrent(database) else { return .older }
        guard let settings = try StoredJoinResults.settings(database) else { return .none }
        return .current(settings)
    }

    func fxRates() throws -> [FXRow] {
        try StoredReportRows.fxRates(database)
    }

    func summaryCounts(asOfMs: Int64, graceMs: Int64) throws -> SummaryCounts {
        try StoredSummaryCounts.counts(database: database, asOfMs: asOfMs, graceMs: graceMs)
    }

    func recordFirstSightings(asOfMs: Int64, earlierIn: String?) throws -> Set<String> {
        let earlierStore = try earlierIn.map { try Database(path: $0, readOnly: true) }
        let earlier = try earlierStore.map { try StoredReportRows.publishedSightings(before: asOfMs, in: $0) }
        try StoredReportRows.recordFirstSightings(asOfMs: asOfMs, earlier: earlier ?? [], in: database)
        return try earlierStore.map { try StoredReportRows.publishedFindings(from: asOfMs, in: $0) } ?? []
    }

    func publishFirstSightings() throws {
        try StoredReportRows.publishFirstSightings(in: database)
    }

    func forEachFinding(shownAgainAt: Int64?, _ body: (Row) throws -> Void) throws {
        try StoredReportRows.forEachFinding(database, shownAgainAt: shownAgainAt, body)
    }

    func forEachReject(_ body: (Row) throws -> Void) throws {
        try StoredReportRows.forEachReject(database, body)
    }

    func forEachRevenueTransaction(_ body: (Row) throws -> Void) throws {
        try StoredReportRows.forEachRevenueTransaction(database, body)
    }

    func tieOutRows() throws -> [TieOutRow] {
        try StoredReportRows.tieOutRows(database)
    }

    func salesReportOverlaps() throws -> [SalesReportOverlap] {
        try StoredReportRows.salesReportOverlaps(database)
    }

    func salesReportMixedProceeds() throws -> [SalesReportMixedProceeds] {
        try StoredReportRows.salesReportMixedProceeds(database)
    }

    func forEachNotification(ofTypeOtherThan known: [String], _ body: (_ type: String, _ source: String) throws -> Void) throws {
        try StoredReportRows.forEachNotification(ofTypeOtherThan: known, in: database, body)
    }

    func catalogRows() throws -> [CatalogRow] {
        try StoredReportRows.catalogRows(database)
    }

    func forEachFindingSubject(_ body: (Row) throws -> Void) throws {
        try StoredReportRows.forEachFindingSubject(database, body)
    }

    func transactionsByID() throws -> any StoredCursor<Row> {
        try StoredReportRows.transactions(database)
    }

    func mergedTransactionsByID() throws -> any MergedTransactionCursor {
        try AppleTransactions.Cursor(database, where: "1")
    }

    func mergedTransaction(_ transactionID: String) throws -> AppleTransactions.Merged? {
        try AppleTransactions.merged(transactionID, in: database)
    }

    func transactionChanges(after joinNumber: Int64) throws -> (latest: Int64, changes: TransactionChanges?) {
        try StoredTransactionsFile.changes(after: joinNumber, in: database)
    }

    func withTransaction(_ transactionID: String, _ body: (Row) throws -> Void) throws -> Bool {
        try StoredTransactionsFile.transaction(transactionID, in: database, body)
    }

    func transactionsFile() throws -> TransactionsFileRecord? {
        try StoredTransactionsFile.record(database)
    }

    func saveTransactionsFile(_ record: TransactionsFileRecord) throws {
        try StoredTransactionsFile.save(record, in: database)
    }

    func publishedRevenue(zone: String, folder: String, throughDay: Int64, earlierIn: String?,
                          switchedIn: (_ setPath: String) -> Bool) throws -> ComparedRevenue {
        try StoredPublishedRevenue.settle(database, switchedIn: switchedIn)
        let own = try StoredPublishedRevenue.compared(database, zone: zone, folder: folder, throughDay: throughDay)
        guard let earlierIn else { return own }
        let earlierStore = try Database(path: earlierIn, readOnly: true)
        // A store no iaprecon of per-report figures has written kept none: nothing of it to compare with.
        guard try Schema.appliedVersion(earlierStore) >= StoredPublishedRevenue.migration else { return own }
        let published = try StoredPublishedRevenue.compared(earlierStore, zone: zone, folder: folder, throughDay: throughDay)
        // The replay's own nights (a backfill's) come after that store's only where they are of a later day.
        let earlier = [published.earlier, own.earlier].compactMap { $0 }.max { $0.throughDay < $1.throughDay }
        return ComparedRevenue(rewritten: published.rewritten ?? own.rewritten, earlier: earlier)
    }

    func savePendingRevenue(_ figures: PublishedRevenue) throws {
        try StoredPublishedRevenue.savePending(figures, in: database)
    }

    func publishPendingRevenue() throws {
        try StoredPublishedRevenue.publishPending(database)
    }

    func consumptionRequests(about transactionID: String?) throws -> [(uuid: String, transactionID: String, ms: Int64)] {
        try StoredReportRows.consumptionRequests(database, about: transactionID)
    }

    func resolvedUser(of transactionID: String) throws -> String? {
        try StoredReportRows.resolvedUser(of: transactionID, in: database)
    }

    func deliveries(of transactionID: String) throws -> [(ms: Int64, userID: String, productID: String)] {
        typealias D = StoredDeliveries.Column
        var deliveries: [(ms: Int64, userID: String, productID: String)] = []
        try StoredDeliveries.withDeliveries(of: transactionID, in: database) { cursor in
            while cursor.hasDelivery {
                deliveries.append((cursor.row.int(D.ms), cursor.row.string(D.userID), cursor.row.string(D.productID)))
                _ = try cursor.advance()
            }
        }
        return deliveries
    }

    func revocations(of transactionID: String) throws -> [(ms: Int64, userID: String)] {
        try StoredReportRows.revocations(of: transactionID, in: database)
    }

    func firstRegistration(of user: String) throws -> (ms: Int64, hasIDFV: Bool)? {
        try FirstRegistrations.first(of: user, in: database)
    }

    func forEachPurchase(of user: String, through untilMs: Int64, _ body: (Row) throws -> Void) throws {
        try StoredReportRows.forEachPurchase(of: user, through: untilMs, in: database, body)
    }

    func forEachCountedMMPEvent(_ body: (MMPSegment.Row) throws -> Void) throws {
        try StoredMMPSegments.forEachCounted(in: database, body)
    }

    func firstRegistrationsByUser() throws -> any StoredCursor<Row> {
        try FirstRegistrations.Cursor(database)
    }

    func purchasesByUser() throws -> any StoredCursor<Row> {
        let statement = try database.cached(StoredUserInstalls.purchasesByUser)
        statement.reset()
        return statement
    }

    func storedUserInstalls() throws -> any StoredCursor<Row> {
        try StoredUserInstalls.stored(database)
    }

    func userInstallWriter() -> any UserInstallWriter {
        UserInstallInserts(path: database.path)
    }

    func forEachSpendRow(_ body: (Row) throws -> Void) throws {
        try StoredUserInstalls.forEachSpendRow(database, body)
    }
}

/// `fct_user_installs` written on a connection of its own on a worker thread (`BackgroundInserts`).
final class UserInstallInserts: UserInstallWriter {
    private let inserts: BackgroundInserts

    init(path: String) {
        inserts = BackgroundInserts(path: path, setup: Tables.userInstalls, inserts: StoredUserInstalls.writes)
    }

    func save(user: String, install: (ms: Int64, mediaSource: String, campaign: String, file: Int64, line: Int64)?, matchedBy: String) {
        if let install {
            inserts.insert(table: 0, [.text(user), .integer(install.ms), .text(install.mediaSource), .text(install.campaign), .text(matchedBy),
                                      .integer(install.file), .integer(install.line)])
        } else {
            inserts.insert(table: 0, [.text(user), .null, .null, .null, .text(matchedBy), .null, .null])
        }
    }

    func remove(user: String) {
        inserts.insert(table: 1, [.text(user)])
    }

    func finish() throws {
        try inserts.finish()
    }
}
