import Foundation

/// `transactions.csv`: one row per verified transaction, the rows behind every revenue number.
///
/// Finance needs the list a total is made of, as subscription platforms export it: who bought
/// what, which order it matched and by which rule, where its price came from, whether and how it
/// was refunded, who received it, and which findings name it. The reporting-currency columns are
/// filled exactly where `revenue_daily.csv` counts the transaction (verified Production revenue,
/// converted at the purchase day's rate, its refund at that same rate), named for the reporting
/// currency and rounded to its minor unit row by row like every such column. Local amounts sum
/// to `revenue_daily.csv`'s exactly; reporting-currency sums to within half a minor unit per
/// row of either file, since both round their own rows.
///
/// Rows come in transaction id order (Apple's ids grow with time): the transactions are read
/// through their key index, each with who received it as the join listed it, so nothing is
/// sorted or held per transaction; only the findings, a few per thousand transactions, and the
/// catalog are kept in memory.
///
/// A night changes few of the rows, so a report patches the file it wrote before when it can:
/// rows the joins since then changed (`TransactionChanges`) are written anew from the store, the
/// others copied as they were. It can when the store's record of that file (`TransactionsFileRecord`)
/// names a file that is still there as written (same device, inode, size and modification time),
/// written with the same settings (reporting currency, zone, fx rates and catalog: all else a row
/// shows), with every join since listed. Otherwise, or when the file is not as this iaprecon
/// writes it, the file is written whole; both ways give the same bytes.
enum TransactionsReport {
    static func header(_ currency: ReportingCurrency) -> [String] {
        ["transaction_id", "original_transaction_id", "user_id", "order_id", "match_rule", "product_id", "product_type",
         "storefront", "environment", "ownership", "currency", "unit_price", "quantity", "price", "price_source",
         "purchase_time", "expires_time", "refund_time", "refund_type", "refund_amount", "revenue"]
            + ["gross", "refunds", "net"].map(currency.column)
            + ["deliveries", "delivered_to", "finding_ids"]
    }

    /// How a report wrote the file, and what its record is to say of it.
    struct Written: Sendable {
        /// The last join whose changes the file shows, and the digest of its settings.
        var joinNumber: Int64
        var settings: String
        /// The rows written from the store when the file was patched; nil when it was written whole.
        var patchedRows: Int?
    }

    /// Writes the whole file from the store.
    static func write(_ store: some ReportStore, zone: Zone, fx: FXRates, currency: ReportingCurrency, _ sink: inout TextSink) throws {
        var lines = try Lines(store: store, catalog: catalogTypes(store), zone: zone, fx: fx, currency: currency)
        try writeWhole(store, lines: &lines, &sink)
    }

    /// Writes the file, patching the one the store's record names when it can. Reads one snapshot of the store.
    static func write(_ store: some ReportStore, zone: Zone, fx: FXRates, currency: ReportingCurrency,
                      _ sink: inout TextSink) throws -> Written {
        try store.readTransaction {
            let catalog = try catalogTypes(store)
            var lines = try Lines(store: store, catalog: catalog, zone: zone, fx: fx, currency: currency)
            let settings = try settingsDigest(fxRates: store.fxRates(), catalog: catalog, zone: zone, currency: currency)
            let record = try store.transactionsFile()
            let (latest, changes) = try store.transactionChanges(after: record?.joinNumber ?? 0)
            var written = Written(joinNumber: latest, settings: settings)
            if let record, let changes, record.settings == settings, latest >= record.joinNumber,
               !lines.catalogTypes.isEmpty, FileIdentity(path: record.path) == record.file {
                do {
                    written.patchedRows = try patch(record.path, with: changes, store: store, lines: &lines, &sink)
                    return written
                } catch is NotPatchable {
                    try sink.restart()
                }
            }
            try writeWhole(store, lines: &lines, &sink)
            return written
        }
    }

    /// Each product's type as the catalog's lines give it, a later line's over an earlier one's
    /// (`ReportStore.catalogRows`), where it gives one.
    private static func catalogTypes(_ store: some ReportStore) throws -> [(productID: String, type: String)] {
        try store.catalogRows().compactMap { row in row.type.map { (row.productID, $0) } }
    }

    /// The file written before is not as this iaprecon writes it (an id it cannot read back, rows
    /// out of order, another header): the file is written whole instead.
    private struct NotPatchable: Error {}

    /// A digest of everything but the store's transactions and findings that a row shows: the
    /// file's form, the reporting currency, the zone its days are in, every fx rate and the catalog.
    static func settingsDigest(fxRates: [FXRow], catalog: [(productID: String, type: String)], zone: Zone, currency: ReportingCurrency) -> String {
        var text = "transactions.csv 1\n" + header(currency).joined(separator: ",") + "\n" + zone.identifier + "\n"
        for rate in fxRates { text += [rate.path, rate.day, rate.currency, rate.rate].joined(separator: "\u{1F}") + "\n" }
        for product in catalog { text += product.productID + "\u{1F}" + product.type + "\n" }
        return StableID.hash(text)
    }

    private static func writeWhole<Backend: ReportStore>(_ store: Backend, lines: inout Lines<Backend>, _ sink: inout TextSink) throws {
        // Apple's product type shows only where the catalog gives none: merged from the sightings of
        // every transaction, in the same order, when there is no catalog; else, rarely needed, one
        // transaction's sightings at a time.
        lines.appleTypes = lines.catalogTypes.isEmpty ? try store.mergedTransactionsByID() : nil
        lines.appleType = try lines.appleTypes?.next()
        let transactions = try store.transactionsByID()
        defer { transactions.reset() }
        try sink.csvRecord(header(lines.currency))
        while try transactions.step() {
            try lines.write(transactions.row, to: &sink)
        }
    }

    /// Copies `previous`, a run of lines at a time, writing anew from the store the rows `changes` names, in
    /// transaction id order: a changed transaction's row (none if it is gone), a new one's, and
    /// any row of a chain whose own findings changed or of a product the catalog has no type for
    /// (its type is Apple's, whose sightings may have changed). Returns the rows written anew.
    private static func patch<Backend: ReportStore>(_ previous: String, with changes: TransactionChanges, store: Backend,
                                                  lines: inout Lines<Backend>, _ sink: inout TextSink) throws -> Int {
        let changed = changes.transactions.map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
        var next = 0
        var rewritten = 0
        func writeAnew(_ id: [UInt8]) throws -> Bool {
            let found = try store.withTransaction(String(decoding: id, as: UTF8.self)) { row in try lines.write(row, to: &sink) }
            if found { rewritten += 1 }
            return found
        }
        let header = Array((Self.header(lines.currency).joined(separator: ",") + "\r\n").utf8)
        // Every line's chain and product are looked up by the fingerprints of their bytes, not made
        // into strings: the file has a line per transaction, and a night rewrites few of them. A
        // chain that only shares a changed chain's fingerprint is written anew, to the same bytes; a
        // product's answer is taken only for its own bytes.
        let changedChains = Set(changes.chains.map { RowFingerprint($0) })
        var typedByApple: [RowFingerprint: (product: [UInt8], byApple: Bool)] = [:]
        var last: [UInt8]?
        var sawHeader = false
        // Lines are copied a run at a time: a run ends where a row is written anew.
        try LineReader.forEachBlock(path: previous) { block in
            var run = 0, position = 0
            func copyRun(to end: Int) throws {
                if end > run { try sink.write(bytes: UnsafeBufferPointer(rebasing: block[run..<end])) }
            }
            while position < block.count {
                let end = Self.lineEnd(in: block, from: position)
                // Every line ends in CRLF, as this iaprecon writes them.
                guard end < block.count, end > position, block[end - 1] == 0x0D else { throw NotPatchable() }
                let line = UnsafeBufferPointer(rebasing: block[position..<(end + 1)])
                defer { position = end + 1 }
                guard sawHeader else {
                    guard line.elementsEqual(header) else { throw NotPatchable() }
                    sawHeader = true
                    continue
                }
                // The first, second and sixth cells: id, chain and product, each only as this
                // iaprecon writes a value it can read back.
                guard let cells = Self.cells(UnsafeBufferPointer(rebasing: line.dropLast(2))), let id = cells.id else { throw NotPatchable() }
                if let last, !last.lexicographicallyPrecedes(id) { throw NotPatchable() }
                last = Array(id)
                if next < changed.count, changed[next].lexicographicallyPrecedes(id) {
                    try copyRun(to: position)
                    run = position
                    while next < changed.count, changed[next].lexicographicallyPrecedes(id) {
                        _ = try writeAnew(changed[next])
                        next += 1
                    }
                }
                if next < changed.count, changed[next].elementsEqual(id) {
                    try copyRun(to: position)
                    run = end + 1
                    _ = try writeAnew(changed[next])
                    next += 1
                    continue
                }
                let chainChanged = !changedChains.isEmpty && cells.chain.map { changedChains.contains(RowFingerprint($0)) } != false
                let typeFromApple = cells.product.map { product in
                    let key = RowFingerprint(product)
                    if let known = typedByApple[key], known.product.elementsEqual(product) { return known.byApple }
                    let byApple = lines.catalogTypes[String(decoding: product, as: UTF8.self)] == nil
                    if typedByApple[key] == nil { typedByApple[key] = (Array(product), byApple) }
                    return byApple
                } != false
                if chainChanged || typeFromApple {
                    try copyRun(to: position)
                    run = end + 1
                    guard try writeAnew(Array(id)) else { throw NotPatchable() }
                }
            }
            try copyRun(to: block.count)
        }
        guard sawHeader else { throw NotPatchable() }
        while next < changed.count {
            _ = try writeAnew(changed[next])
            next += 1
        }
        return rewritten
    }

    /// Where the line at `start` ends: its line feed's offset, or the block's end when it has none.
    private static func lineEnd(in block: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        guard let base = block.baseAddress, start < block.count,
              let found = memchr(base + start, 0x0A, block.count - start) else { return block.count }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }

    /// The id, chain and product cells of a line, each nil when it is not a value this iaprecon
    /// writes as itself (`readable`); nil when the line has fewer than six cells.
    private static func cells(_ line: UnsafeBufferPointer<UInt8>) -> (id: UnsafeBufferPointer<UInt8>?, chain: UnsafeBufferPointer<UInt8>?,
                                                                      product: UnsafeBufferPointer<UInt8>?)? {
        var found: (id: UnsafeBufferPointer<UInt8>?, chain: UnsafeBufferPointer<UInt8>?, product: UnsafeBufferPointer<UInt8>?) = (nil, nil, nil)
        var start = 0
        let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ",")
        for index in 0...5 {
            guard start <= line.count else { return nil }
            var end = start
            if start < line.count, line[start] == quote {
                // A quoted cell (never `readable`): its commas are text, a doubled quote is one quote.
                end += 1
                while end < line.count {
                    if line[end] == quote {
                        if end + 1 < line.count, line[end + 1] == quote { end += 2; continue }
                        end += 1
                        break
                    }
                    end += 1
                }
                guard end == line.count || line[end] == comma else { return nil }
            } else {
                while end < line.count, line[end] != comma { end += 1 }
            }
            // Only the cells looked at are checked.
            let cell = UnsafeBufferPointer(rebasing: line[start..<end])
            switch index {
            case 0: found.id = readable(cell) ? cell : nil
            case 1: found.chain = readable(cell) ? cell : nil
            case 5: found.product = readable(cell) ? cell : nil
            default: break
            }
            // The sixth cell must not be the last: a row has more.
            guard end < line.count else { return nil }
            start = end + 1
        }
        return found
    }

    /// A cell that is its value's own bytes: `CSV.textCell` writes such a value as itself, and no
    /// other value as these bytes (no quote, escape or formula guard in it). A `'` first or right
    /// after a `;` may be a guard: `1;'-2` is how `1;-2` is written, and `1;'-2` too.
    private static func readable(_ cell: UnsafeBufferPointer<UInt8>) -> Bool {
        guard CSV.isPlain(bytes: cell, text: true), cell.first != UInt8(ascii: "'"), !cell.contains(UInt8(ascii: "\\")) else { return false }
        return !zip(cell, cell.dropFirst()).contains { $0 == UInt8(ascii: ";") && $1 == UInt8(ascii: "'") }
    }

    /// Writes rows from the store: what every row shares (the catalog, the findings, the rates).
    private struct Lines<Backend: ReportStore> {
        let store: Backend
        let currency: ReportingCurrency
        var catalogTypes: [String: String] = [:]
        // A finding is listed on its transaction, and a finding about chains (a shared
        // subscription, a user's multi-Apple-ID chains) on every transaction of each chain it is
        // about. Both are looked up by the fingerprint of the id's bytes, so a transaction row
        // makes no string of its ids.
        var findingsOfTransaction: [RowFingerprint: [String]] = [:], findingsOfChain: [RowFingerprint: [String]] = [:]
        var appleTypes: (any MergedTransactionCursor)?
        var appleType: AppleTransactions.Merged?
        var values: AmountReader
        // The catalog's type of each product (its cell), looked up once per distinct product id.
        var products = TextIndex()
        var catalogTypeCells: [String?] = []

        init(store: Backend, catalog: [(productID: String, type: String)], zone: Zone, fx: FXRates, currency: ReportingCurrency) throws {
            (self.store, self.currency) = (store, currency)
            values = AmountReader(fx: fx, zone: zone)
            for (productID, type) in catalog { catalogTypes[productID] = type }
            typealias Subject = FindingSubjectColumn
            try store.forEachFindingSubject { row in
                if let transaction = row.fingerprint(Subject.transactionID) {
                    findingsOfTransaction[transaction, default: []].append(row.string(Subject.findingID))
                } else if let chain = row.fingerprint(Subject.originalTransactionID) {
                    findingsOfChain[chain, default: []].append(row.string(Subject.findingID))
                }
            }
        }

        /// Writes one resolved transaction (`ReportTransactionColumn`); the product type is filled in here.
        mutating func write(_ row: Backend.Row, to sink: inout TextSink) throws {
            typealias Column = ReportTransactionColumn
            let purchaseMs = row.int(Column.purchaseMs)
            let quantity = row.int(Column.quantity)
            let price = values.amount(row, Column.unitPrice).map { $0 * quantity }
            let refund = row.isNull(Column.refundMs) ? nil : values.amount(row, Column.refundAmount)
            let isRevenue = row.int(Column.isRevenue) == 1
            var grossUSD = "", refundsUSD = "", netUSD = ""
            if isRevenue, let rate = values.rate(currency: values.currency(row, Column.currency), atMs: purchaseMs) {
                let gross = currency.rounded((price ?? .zero) * rate)
                let refunded = currency.rounded((refund ?? .zero) * rate)
                (grossUSD, refundsUSD, netUSD) = (Money.format(gross), Money.format(refunded), Money.format(gross - refunded))
            }
            let product = Int(products.number(row, Column.productID))
            if product == catalogTypeCells.count { catalogTypeCells.append(catalogTypes[products[Int32(product)]].map(CSV.textCell)) }
            var typeCell = catalogTypeCells[product]
            if typeCell == nil {
                let id = row.string(Column.transactionID)
                var type: String?
                if let appleTypes {
                    while let merged = appleType, merged.transactionID.utf8.lexicographicallyPrecedes(id.utf8) { appleType = try appleTypes.next() }
                    if let merged = appleType, merged.transactionID == id { type = merged.type }
                } else {
                    type = try store.mergedTransaction(id)?.type
                }
                typeCell = CSV.textCell(type ?? "")
            }
            var findingIDs = (row.fingerprint(Column.transactionID).flatMap { findingsOfTransaction[$0] } ?? [])
            if let ofChain = row.fingerprint(Column.originalTransactionID).flatMap({ findingsOfChain[$0] }) {
                // A shared subscription's finding names a transaction of its chain too: listed once.
                findingIDs = Array(Set(findingIDs + ofChain))
            }
            try sink.csvRecord { cells in
                for column in Column.allCases[Column.transactionID.rawValue...Column.productID.rawValue] { cells.text(row, column) }
                cells.escaped(typeCell ?? "")
                for column in Column.allCases[Column.storefront.rawValue...Column.currency.rawValue] { cells.text(row, column) }
                cells.number(row, Column.unitPrice)
                cells.integer(quantity)
                cells.escaped(price.map(Money.format) ?? "")
                cells.text(row, Column.priceSource)
                cells.time(purchaseMs)
                cells.time(row.optionalInt(Column.expiresMs))
                cells.time(row.optionalInt(Column.refundMs))
                cells.text(row, Column.refundType)
                cells.escaped(refund.map(Money.format) ?? "")
                cells.escaped(isRevenue ? "true" : "false")
                cells.escaped(grossUSD)
                cells.escaped(refundsUSD)
                cells.escaped(netUSD)
                cells.integer(row.int(Column.deliveries))
                cells.text(row, Column.deliveredTo)
                cells.escaped(findingIDs.isEmpty ? "" : CSV.textCell(findingIDs.sorted().joined(separator: ";")))
            }
        }
    }
}
