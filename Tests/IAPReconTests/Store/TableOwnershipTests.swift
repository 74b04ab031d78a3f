import Foundation
import Testing
@testable import IAPRecon

/// `Tables` answers, for every table, who writes it and who reads it. These tests hold the code to
/// it: each source file's SQL (its code lines, not its comments) is scanned for table names, and a
/// module that writes a table it does not own, or reads one it does not declare, fails here with
/// the file and the table.
@Suite("Table ownership")
struct TableOwnershipTests {
    /// The two files that declare tables rather than use them.
    static let declaringFiles: Set<String> = ["IAPRecon/Store/Schema.swift", "IAPRecon/Store/Tables.swift"]

    /// Every source file's module (its folder under `Sources/IAPRecon`, or `CLI`) and code lines. A
    /// file of a stage's part of the store (`Store/Join/...`) is of that stage: the store holds the
    /// SQL, and each table is still written by one stage's part of it.
    static let sources: [(path: String, module: String, code: String)] = {
        var root = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        for _ in 0..<4 { root.deleteLastPathComponent() }
        let sources = root.appendingPathComponent("Sources")
        let paths = FileManager.default.enumerator(atPath: sources.path)?.compactMap { $0 as? String } ?? []
        return paths.filter { $0.hasSuffix(".swift") && !declaringFiles.contains($0) }.sorted().compactMap { path in
            guard let text = try? String(contentsOfFile: sources.appendingPathComponent(path).path, encoding: .utf8) else { return nil }
            let parts = path.split(separator: "/")
            let module = parts[0] == "IAPRecon" && parts.count > 3 && parts[1] == "Store" ? String(parts[2])
                : parts[0] == "IAPRecon" && parts.count > 2 ? String(parts[1]) : parts[0] == "IAPReconCLI" ? "CLI" : String(parts[0])
            return (path, module, code(of: text))
        }
    }()

    /// The lines of `text` that are not comments: a table named in prose is not a read.
    static func code(of text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.drop { $0 == " " }.hasPrefix("//") }
            .joined(separator: "\n")
    }

    /// What a piece of code does to the declared tables.
    struct Uses: Equatable {
        var reads: Set<String> = []
        var writes: Set<String> = []
        /// Names shaped like a table (`raw_`, `stg_`, `int_`, `fct_`, `normalize__`) that `Tables` does not declare.
        var undeclared: Set<String> = []
    }

    static let writeStatement = try! NSRegularExpression(pattern: """
        \\b(?:INSERT(?:\\s+OR\\s+[A-Z]+)?\\s+INTO|REPLACE\\s+INTO|UPDATE|DELETE\\s+FROM|CREATE\\s+TABLE(?:\\s+IF\\s+NOT\\s+EXISTS)?|\
        DROP\\s+TABLE(?:\\s+IF\\s+EXISTS)?|ALTER\\s+TABLE|CREATE\\s+(?:UNIQUE\\s+)?INDEX(?:\\s+IF\\s+NOT\\s+EXISTS)?\\s+\\w+\\s+ON)\
        \\s+(?:main\\.)?([a-z_0-9]+)
        """)
    static let tableShaped = try! NSRegularExpression(pattern: "\\b(?:raw|stg|int|fct|normalize_)_[a-z0-9_]*[a-z0-9]\\b")
    /// A table named in a statement: how the ledger's plain names (`files`, `runs`) are told from Swift's words.
    static let statementTable = try! NSRegularExpression(pattern: "\\b(?:FROM|JOIN|INTO|UPDATE|TABLE|EXISTS)\\s+(?:main\\.)?([a-z_0-9]+)")

    static func uses(in code: String) -> Uses {
        let range = NSRange(code.startIndex..., in: code)
        func matches(_ expression: NSRegularExpression, group: Int) -> [String] {
            expression.matches(in: code, range: range).compactMap { Range($0.range(at: group), in: code).map { String(code[$0]) } }
        }
        let declared = Set(Tables.all.map(\.name))
        var uses = Uses()
        uses.writes = Set(matches(writeStatement, group: 1)).intersection(declared)
        let named = Set(matches(tableShaped, group: 0) + matches(statementTable, group: 1))
        uses.reads = named.intersection(declared).subtracting(uses.writes)
        let indexNames = Set(Tables.joinResults.indexes.map(\.name))
        uses.undeclared = Set(matches(tableShaped, group: 0)).subtracting(declared).subtracting(indexNames)
        return uses
    }

    /// The rules, for one file of `module`: what it breaks, one line per table.
    static func violations(module: String, _ uses: Uses) -> [String] {
        var problems: [String] = []
        let owner = Tables.Module(rawValue: module)
        for name in uses.undeclared.sorted() {
            problems.append("names '\(name)', which Tables does not declare")
        }
        for name in uses.writes.sorted() {
            guard let table = Tables.named(name), table.writer != owner else { continue }
            problems.append("writes \(name), which \(table.writer.rawValue) owns")
        }
        for name in uses.reads.sorted() {
            guard let table = Tables.named(name), table.writer != owner else { continue }
            if owner.map(table.readers.contains) != true {
                problems.append("reads \(name), not declared as a read of \(module)")
            }
        }
        return problems
    }

    @Test("every source file writes only the tables its module owns and reads only those it declares")
    func sourcesKeepToTheirTables() {
        #expect(Self.sources.count > 50, "the sources were not found")
        for source in Self.sources {
            for problem in Self.violations(module: source.module, Self.uses(in: source.code)) {
                Issue.record("\(source.path) \(problem)")
            }
        }
    }

    @Test("only the store's files name tables: every stage reads and writes the store through Sources/IAPRecon/Store")
    func sqlLivesInTheStore() {
        #expect(Self.sources.count > 50, "the sources were not found")
        for source in Self.sources where !source.path.hasPrefix("IAPRecon/Store/") && Self.uses(in: source.code) != Uses() {
            Issue.record("\(source.path) names tables: its SQL belongs in the store (Sources/IAPRecon/Store, under its stage's folder)")
        }
        // The near miss: a table named in a comment is no use of it.
        #expect(Self.uses(in: Self.code(of: "    // reads raw_server__orders\nlet x = 1")) == Uses())
        #expect(Self.uses(in: #"try database.forEach("SELECT order_id FROM raw_server__orders")"#) != Uses())
    }

    @Test("every read Tables declares is a read some file of that module makes, so the list says what is true")
    func declaredReadsAreUsed() {
        var used: [String: Set<String>] = [:]
        for source in Self.sources {
            let uses = Self.uses(in: source.code)
            used[source.module, default: []].formUnion(uses.reads.union(uses.writes))
        }
        for table in Tables.all {
            for reader in table.readers.sorted(by: { $0.rawValue < $1.rawValue }) where used[reader.rawValue]?.contains(table.name) != true {
                Issue.record("Tables declares that \(reader.rawValue) reads \(table.name), and no file of it does")
            }
        }
    }

    @Test("the checks catch a report reading MMP rows, a report writing findings and an undeclared table")
    func checksCatchViolations() {
        let undeclaredRead = Self.violations(module: "Report", Self.uses(in: #"try database.forEach("SELECT event_name FROM raw_mmp__events")"#))
        #expect(undeclaredRead == ["reads raw_mmp__events, not declared as a read of Report"])
        let write = Self.violations(module: "Report", Self.uses(in: #"try database.run("DELETE FROM fct_findings WHERE kind = ?")"#))
        #expect(write == ["writes fct_findings, which Join owns"])
        let unknown = Self.violations(module: "Join", Self.uses(in: #"try database.execute("SELECT * FROM stg_server__refunds")"#))
        #expect(unknown == ["names 'stg_server__refunds', which Tables does not declare"])
        // Near misses: the owner writing, a declared reader reading, a name in a comment.
        #expect(Self.violations(module: "Join", Self.uses(in: #"try database.run("DELETE FROM fct_findings")"#)).isEmpty)
        #expect(Self.violations(module: "Report", Self.uses(in: #"try database.forEach("SELECT * FROM raw_apple__transactions")"#)).isEmpty)
        #expect(Self.uses(in: Self.code(of: "    /// reads `raw_server__orders` once\nlet x = 1")) == Uses())
    }

    @Test("each table is created in one place: its migration, or its definition in Tables")
    func declaredOnce() throws {
        let migrations = Dictionary(uniqueKeysWithValues: Schema.migrations.map { ($0.id, $0.sql) })
        let rebuilt = Set(Tables.joinResults.tables.map(\.name))
        let definitions = [Tables.runSettings, Tables.findingFirstSeen, Tables.userInstalls, Tables.runStages,
                           Tables.deviceIDKey, Tables.storeChecks]
        #expect(Set(Tables.all.map(\.name)).count == Tables.all.count, "a table is declared twice")
        for table in Tables.all {
            let creates = "CREATE TABLE \(table.name) "
            let createdByMigrations = Schema.migrations.filter { $0.sql.contains(creates) }.map(\.id)
            let defined = rebuilt.contains(table.name) ? 1 : definitions.filter {
                $0.contains("CREATE TABLE IF NOT EXISTS \(table.name) ") || $0.contains("CREATE TABLE \(table.name) ")
            }.count
            if let migration = table.migration {
                // A later migration may create a table anew in another shape (the old one renamed away first).
                #expect(createdByMigrations.last == migration, "\(table.name) is created by migrations \(createdByMigrations)")
                #expect(try #require(migrations[migration]).contains(creates))
                #expect(defined == 0, "\(table.name) has a migration and a definition")
            } else if table.name != "schema_migrations" {
                #expect(createdByMigrations.isEmpty && defined == 1, "\(table.name): migrations \(createdByMigrations), definitions \(defined)")
            }
        }
        // And nothing outside Tables and the migrations creates a table of the store.
        for source in Self.sources {
            let creates = Self.writeStatement.matches(in: source.code, range: NSRange(source.code.startIndex..., in: source.code))
                .compactMap { Range($0.range, in: source.code).map { String(source.code[$0]) } }
                .filter { $0.hasPrefix("CREATE TABLE") }
            #expect(creates.isEmpty, "\(source.path) creates \(creates)")
        }
    }
}
