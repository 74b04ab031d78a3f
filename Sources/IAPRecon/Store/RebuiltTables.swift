/// Tables a stage rebuilds in full under other names (`<name>__next`), then switches in at the end
/// in one transaction with their indexes.
///
/// A full rebuild commits job by job, batch by batch, for bounded memory. Built in place, a reader
/// meanwhile (support's `history`) would see half-empty tables; built beside them, every reader
/// sees the previous tables whole until the switch, and a run killed half-way leaves them as they
/// were (the next run drops the leftover `__next` tables and starts again).
struct RebuiltTables: Sendable {
    /// Each table's name and what follows the name in its CREATE TABLE.
    let tables: [(name: String, definition: String)]

    static let suffix = "__next"

    /// The table a rebuild writes: `name` itself, or its `__next` twin.
    static func name(_ name: String, beside: Bool) -> String {
        beside ? name + suffix : name
    }

    /// `INSERT [OR IGNORE] INTO <name or its twin> VALUES (?, ...)` with `values` parameters.
    static func insert(into name: String, values: Int, beside: Bool, orIgnore: Bool = false) -> String {
        let placeholders = Array(repeating: "?", count: values).joined(separator: ", ")
        return "INSERT \(orIgnore ? "OR IGNORE " : "")INTO \(Self.name(name, beside: beside)) VALUES (\(placeholders))"
    }

    /// Drops what a killed rebuild left, and creates the empty `__next` tables.
    var createBeside: String {
        tables.map { "DROP TABLE IF EXISTS \($0.name)\(Self.suffix);\nCREATE TABLE \($0.name)\(Self.suffix) \($0.definition);" }
            .joined(separator: "\n")
    }

    /// Drops the `__next` tables a killed rebuild left: run by a stage that updates in place.
    var dropBeside: String {
        tables.map { "DROP TABLE IF EXISTS \($0.name)\(Self.suffix);" }.joined(separator: "\n")
    }

    /// Replaces each table by its `__next` twin (the old table's indexes go with it).
    var switchIn: String {
        tables.map { "DROP TABLE IF EXISTS \($0.name);\nALTER TABLE \($0.name)\(Self.suffix) RENAME TO \($0.name);" }
            .joined(separator: "\n")
    }

    /// Drops and creates the tables under their own names: a rebuild inside one transaction.
    var dropAndCreate: String {
        tables.map { "DROP TABLE IF EXISTS \($0.name);\nCREATE TABLE \($0.name) \($0.definition);" }.joined(separator: "\n")
    }
}
