/// The columns of one SELECT, in the order it lists them: the query's list is made from them
/// (`selectList`) and its rows are read by their names, so the two cannot disagree.
///
/// Declared as an `Int`-backed enum without explicit raw values: each case's raw value is its
/// place in the declaration, which is its place in `allCases` and in the list.
protocol SelectedColumn: StoredColumn {
    /// The column's expression in the SELECT (`a.purchase_ms`, `coalesce(...)`).
    var sql: String { get }
}

extension SelectedColumn {
    /// The SELECT's list: every column's expression, in order.
    static var selectList: String { allCases.map(\.sql).joined(separator: ", ") }
}

extension Statement {
    /// Column `column` of the current row as UTF-8 bytes, valid only inside `body`.
    func withText<T>(_ column: some SelectedColumn, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        try withText(Int32(column.rawValue), body)
    }
}
