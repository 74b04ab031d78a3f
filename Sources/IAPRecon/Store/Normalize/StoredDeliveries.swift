/// The stored delivery lines, read a delivery at a time: the copies of a delivery come together
/// and a `Cursor` stops at each delivery's first line (`ServerDeliveries` says which lines are one),
/// which reads as the delivery's earliest time, as the join dates it.
enum StoredDeliveries {
    /// The columns of the rows a `Cursor` stops at (the lines as `d`, their files as `f`).
    enum Column: Int, SelectedColumn {
        case ms, userID, transactionID, productID, orderID, quantity, deliveryID, fileID, line
        /// The delivery's key (`DeliveryLine.Key`) as text, which orders the lines of one delivery
        /// together: the ids are quoted as SQL literals so that no two pairs of them join into one
        /// text (`a|b` and `c` against `a` and `b|c`).
        case key
        /// The path of the file the line is in.
        case path

        private static let keySQL = """
            CASE WHEN d.delivery_id IS NOT NULL THEN 'id:' || d.delivery_id
                 ELSE 'line:' || d.ts_ms || '|' || quote(coalesce(d.user_id, '')) || '|' || quote(coalesce(d.product_id, '')) || '|'
                      || coalesce(d.quantity_n, 0) END
            """

        var sql: String {
            switch self {
            case .key: Self.keySQL
            // A retry logged later, or by a host whose file sorts first, delivered nothing new.
            case .ms: "min(d.ts_ms) OVER (PARTITION BY d.transaction_id, \(Self.keySQL))"
            case .path: "f.path"
            default:
                "d." + ["ts_ms", "user_id", "transaction_id", "product_id", "order_id", "quantity_n", "delivery_id", "file_id", "line"][rawValue]
            }
        }
    }

    /// The delivery lines `condition` selects (on the lines as `d`), in the order a `Cursor` reads them.
    static func selection(where condition: String) -> String {
        """
        SELECT \(Column.selectList)
        FROM raw_server__deliveries d JOIN files f USING (file_id)
        WHERE \(condition)
        ORDER BY d.transaction_id, \(Column.key.rawValue + 1), f.path, d.line, d.item
        """
    }

    /// Calls `body` with a cursor at the first delivery of `transactionID` (none when the log has
    /// none). The statement is compiled once per connection: a report asks this of a transaction
    /// per consumption request, and compiling the query costs more than running it. The cursor
    /// lives for the call only, and `body` must not ask this of another transaction on the same
    /// connection: both would step the one statement.
    static func withDeliveries<T>(of transactionID: String, in database: Database, _ body: (Cursor) throws -> T) throws -> T {
        let statement = try database.cached(selection(where: "d.transaction_id = ?1"))
        defer { statement.reset() }
        try statement.bind([.text(transactionID)])
        return try body(Cursor(bound: statement))
    }

    /// Steps through the deliveries of the raw lines a condition selects, in transaction id order
    /// (bytes, as SQLite orders text), stopping at each delivery's first line.
    final class Cursor {
        private let statement: Statement
        /// The current delivery's transaction and key.
        private var key: Kept?
        /// Whether the cursor stands at a delivery's first line.
        private(set) var hasDelivery: Bool

        /// A cursor at the first delivery. `condition` is on the delivery lines as `d` and must take
        /// a transaction's lines all or none (`d.transaction_id IN ...`): it decides which
        /// transactions' deliveries are read, never which of their lines.
        convenience init(_ database: Database, where condition: String, _ arguments: [SQLValue] = []) throws {
            let statement = try Statement(database: database, sql: StoredDeliveries.selection(where: condition), persistent: false)
            try statement.bind(arguments)
            try self.init(bound: statement)
        }

        /// A cursor at the first delivery of a statement of `selection`, its arguments bound.
        fileprivate init(bound statement: Statement) throws {
            self.statement = statement
            hasDelivery = try statement.step()
            if hasDelivery { keepKey() }
        }

        /// The current delivery's first line (`Column`), while `hasDelivery`.
        var row: Row { statement.row }

        /// Moves past the current delivery's lines to the next delivery's first; returns how many
        /// lines the log had of the one it left (1 when it was never repeated).
        func advance() throws -> Int {
            var lines = 1
            while try statement.step() {
                if isKept() {
                    lines += 1
                    continue
                }
                keepKey()
                return lines
            }
            hasDelivery = false
            return lines
        }

        /// Whether the line at hand is of the delivery whose key is kept.
        private func isKept() -> Bool {
            key == Self.key(of: statement.row)
        }

        /// Keeps the key of the line at hand.
        private func keepKey() {
            key = Self.key(of: statement.row)
        }

        /// The transaction and delivery key of a row of `selection`: the order's `CASE` only makes
        /// the lines of one key adjacent, and `DeliveryLine.key` decides which lines are one delivery.
        private static func key(of row: Row) -> Kept {
            let line = DeliveryLine(row)
            return Kept(transactionID: StoredText(line.transactionID), delivery: line.key)
        }

        private struct Kept: Equatable {
            var transactionID: StoredText
            var delivery: DeliveryLine.Key
        }
    }
}

extension DeliveryLine {
    /// The line in a row of `StoredDeliveries.selection`.
    init(_ row: Row) {
        typealias D = StoredDeliveries.Column
        self.init(ms: row.int(D.ms), userID: row.string(D.userID), transactionID: row.string(D.transactionID),
                  productID: row.string(D.productID), orderID: row.optionalString(D.orderID), quantity: row.int(D.quantity),
                  deliveryID: row.optionalString(D.deliveryID))
    }
}
