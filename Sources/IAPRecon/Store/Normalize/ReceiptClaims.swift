/// Receipt lines naming both an order and a transaction: the claims matching rule 2 reads.
///
/// They need no normalizing (each such line is one claim), so every reader takes them straight
/// from `raw_receipts__verifications` by this condition, which the raw table's two partial
/// indexes (by transaction, by order) carry too: a reader's query must name it whole for SQLite to
/// use them.
enum ReceiptClaims {
    /// The condition on `raw_receipts__verifications`' columns (unqualified) that makes a line a claim.
    static let condition = "transaction_id IS NOT NULL AND order_id IS NOT NULL"
}
