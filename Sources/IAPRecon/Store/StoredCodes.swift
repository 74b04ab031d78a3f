/// How the store keeps and reads back the columns of Apple's enumerations (`AppleCodes`) and a
/// sighting's origin.
extension AppleCodes {
    /// What ingest stores for `text`: its code, or the text itself when it has none.
    public func stored(_ text: String?) -> SQLValue {
        guard let text else { return .null }
        return code(text).map(SQLValue.integer) ?? .text(text)
    }

    /// The value of column `index` as stored by `stored`: nil for NULL.
    /// - Throws: `UnknownStoredCode` for an integer that is no code of this build's.
    func read(_ row: some StoredRow, _ index: Int) throws(UnknownStoredCode) -> String? {
        switch row.value(index) {
        case .null: return nil
        case .text(let text): return text
        case .integer(let code):
            guard let text = self.text(code) else { throw UnknownStoredCode(column: column, stored: .integer(code)) }
            return text
        case .blob(let bytes): throw UnknownStoredCode(column: column, stored: .blob(bytes))
        }
    }
}

extension TransactionOrigin {
    /// The origin in column `index`.
    /// - Throws: `UnknownStoredCode` for anything but one of this build's codes.
    static func read(_ row: some StoredRow, _ index: Int) throws(UnknownStoredCode) -> TransactionOrigin {
        let stored = row.value(index)
        guard case .integer(let code) = stored, let origin = TransactionOrigin(code: code) else {
            throw UnknownStoredCode(column: "origin", stored: stored)
        }
        return origin
    }
}

/// A stored value that is no code this iaprecon knows: the store was written by another build.
public struct UnknownStoredCode: Error, CustomStringConvertible, Sendable {
    public var column: String
    public var stored: SQLValue
    public var description: String {
        let value = switch stored {
        case .null: "NULL"
        case .integer(let code): "code \(code)"
        case .text(let text): "'\(text)'"
        case .blob(let bytes): "a blob of \(bytes.count) bytes"
        }
        return "the store has \(column) \(value), which this iaprecon does not know; use the iaprecon that wrote it, or a newer one"
    }
}
