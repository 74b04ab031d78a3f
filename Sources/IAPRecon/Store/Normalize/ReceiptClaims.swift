/// Receipt lines that verified, naming both an order and a transaction: the claims matching rule 2
/// reads.
///
/// They need no normalizing (each such line is one claim), so every reader takes them straight
/// from `raw_receipts__verifications` by this condition. The raw table's two partial indexes (by
/// transaction, by order) carry its first part: a reader's query must name that part whole for
/// SQLite to use them.
enum ReceiptClaims {
    /// The condition on `raw_receipts__verifications`' columns (unqualified) that makes a line a
    /// claim. A failed verification (a status other than 0 and 21006, as ingest reads them)
    /// verifies nothing (CONTRACT.md §1.2): anyone can send one, so it names no order's transaction
    /// either.
    static let condition = "transaction_id IS NOT NULL AND order_id IS NOT NULL AND status_n IN (0, 21006)"
}
