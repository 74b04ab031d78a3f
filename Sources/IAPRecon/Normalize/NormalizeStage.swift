/// Stage 2, normalize: readies the stored input lines for the stages that normalize them as they read.
///
/// The store keeps no normalized copy of the input. Each reader turns the raw lines it needs into
/// clean entities in memory, by the rules of this module, which run on the parser's values:
/// - `AppleTransactions`: one verified transaction per `transaction_id`, merged from every receipt,
///   V2 transaction and notification sighting, with its refund events and who sent it;
/// - `ServerDeliveries`: one delivery per transaction and `delivery_id` (or identical line), with
///   how many copies the log has.
/// The store's readers apply the rules that need no more than the row at hand as they read
/// (`Store/Normalize`): an order's first line (`ServerOrders`), receipt lines naming both an order
/// and a transaction (`ReceiptClaims`), distinct MMP rows (`MMPEvents`) and each user's first
/// sign-up (`FirstRegistrations`).
///
/// They find a key's lines through the raw tables' secondary indexes (`RawIndexes`). A large
/// ingest drops those (one sort each afterwards is several times faster than updating them row by
/// row); this stage builds every missing one, so the join never reads an unindexed store.
public enum NormalizeStage {
    /// Builds each raw index a bulk ingest dropped, one transaction each: a run killed half-way
    /// keeps the ones done. Returns how many it built.
    @discardableResult
    static func run(store: some RawIndexStore) throws -> Int {
        Trace.mark("normalize start")
        let missing = try store.missingRawIndexes()
        for name in missing {
            try store.buildRawIndex(name)
            Trace.mark("normalize index \(name)")
        }
        return missing.count
    }

    /// Whether every raw index is there: what the join needs to read one batch's lines at a time.
    static func isDone(_ store: some RawIndexStore) throws -> Bool {
        try store.missingRawIndexes().isEmpty
    }
}
