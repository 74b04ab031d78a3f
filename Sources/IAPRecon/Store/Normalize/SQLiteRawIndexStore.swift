/// Normalize's store in SQLite (`RawIndexStore`): the raw tables' secondary indexes (`RawIndexes`).
struct SQLiteRawIndexStore: RawIndexStore {
    let database: Database

    init(_ database: Database) {
        self.database = database
    }

    func missingRawIndexes() throws -> [String] {
        let existing = try database.indexNames()
        return RawIndexes.all.map(\.name).filter { !existing.contains($0) }
    }

    func buildRawIndex(_ name: String) throws {
        guard let index = RawIndexes.all.first(where: { $0.name == name }) else { return }
        try database.transaction { try database.execute(index.sql) }
    }
}
