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
    /// Their secondary indexes, built once a table's rows are in: one sort instead of a b-tree update per row.
    let indexes: [Index]

    /// A secondary index of a rebuilt table.
    struct Index: Sendable {
        var name: String
        var table: String
        /// What follows `ON <table>`: the columns, then a WHERE clause for a partial index.
        var definition: String
        /// A table's key: no two rows may share it.
        var unique = false
    }

    init(tables: [(name: String, definition: String)], indexes: [Index] = []) {
        self.tables = tables
        self.indexes = indexes
    }

    static let suffix = "__next"
    /// The other name of an index built beside the current one (an index cannot be renamed).
    static let indexTwinSuffix = "__2"

    /// The table a rebuild writes: `name` itself, or its `__next` twin.
    static func name(_ name: String, beside: Bool) -> String {
        beside ? name + suffix : name
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

    /// CREATE INDEX statements for the indexes of `table`, built on the table a rebuild writes.
    ///
    /// Beside, the current table keeps its indexes (a reader meanwhile still finds its rows fast)
    /// until the switch drops them with it. So each new index takes whichever of its name and its
    /// `__2` twin the schema does not hold: rebuilds alternate between the two. `existing` is the
    /// schema's index names (`Database.indexNames`).
    /// CREATE INDEX statements for the declared indexes the current tables lack under either of
    /// their names: a store written before an index was declared gets it without a rebuild.
    func createMissingIndexes(existing: Set<String>) -> String {
        indexes.filter { !existing.contains($0.name) && !existing.contains($0.name + Self.indexTwinSuffix) }.map { index in
            "CREATE \(index.unique ? "UNIQUE " : "")INDEX \(index.name) ON \(index.table)\(index.definition);"
        }.joined(separator: "\n")
    }

    func createIndexes(of table: String, beside: Bool, existing: Set<String>) -> String {
        indexes.filter { $0.table == table }.map { index in
            let name = beside && existing.contains(index.name) ? index.name + Self.indexTwinSuffix : index.name
            return "CREATE \(index.unique ? "UNIQUE " : "")INDEX \(name) ON \(Self.name(table, beside: beside))\(index.definition);"
        }.joined(separator: "\n")
    }
}
