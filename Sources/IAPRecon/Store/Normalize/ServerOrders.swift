/// Order lines → orders: one per `order_id`, its first line in file order (files in path order,
/// then line). Later lines with the same id are log-shipper copies or resends.
///
/// The store keeps every accepted line once (`raw_server__orders`); which line is an order's is
/// decided here each time a stage reads them, so a replaced file, or a late one that sorts among
/// the stored ones, changes which line wins with no staged copy to rebuild.
enum ServerOrders {
    /// The columns of the rows `forEachFirst` hands out (the lines as `o`, their files as `f`).
    enum Column: Int, SelectedColumn {
        case orderID, ms, userID, productID, price, currency, storefront, fileID, line
        /// The path of the file the line is in.
        case path

        var sql: String {
            ["o.order_id", "o.ts_ms", "o.user_id", "o.product_id", "o.price", "o.currency", "o.storefront", "o.file_id", "o.line",
             "f.path"][rawValue]
        }
    }

    /// Calls `body` with the first line of each order among the raw lines `condition` selects, in
    /// order id order. `condition` is on the order lines as `o` and must take an order's lines all
    /// or none (`o.order_id IN ...`): it decides which orders are read, never which of their lines.
    static func forEachFirst(in database: Database, where condition: String, _ arguments: [SQLValue] = [],
                             _ body: (Row) throws -> Void) throws {
        var runs = KeyRuns()
        try database.forEach("""
            SELECT \(Column.selectList)
            FROM raw_server__orders o JOIN files f USING (file_id)
            WHERE \(condition)
            ORDER BY o.order_id, f.path, o.line, o.item
            """, arguments) { row in
            guard row.statement.withText(Column.orderID, { runs.starts($0) }) else { return }
            try body(row)
        }
    }
}
