import Foundation
import Testing

/// The folders of `Sources/IAPRecon` are layers, and a layer names only the types of the layers
/// below it: the formats, the worker pool and the signature checks at the bottom, then the model's
/// values, then the store, then the stages in the order a run takes them, then the pipeline. So
/// the store can be read (or replaced by another backend) without knowing any stage, and a stage
/// without knowing the ones after it. A test fails with the file and the type when a file names a
/// type declared in its own layer's superiors, or in another folder of its own rank.
@Suite("Layering")
struct LayeringTests {
    /// Each folder's rank: a file may name a type of a folder of a lower rank, or of its own folder.
    static let ranks: [String: Int] = [
        "Formats": 0, "Parallel": 0, "Signatures": 1, "Model": 2, "Store": 3,
        "Ingest": 4, "Normalize": 5, "Join": 6, "Report": 7, "Pipeline": 8,
    ]

    /// Every source file of the library: its folder (the store's stage parts are the store's) and its code.
    static let sources: [(path: String, folder: String, code: String)] = {
        var root = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        for _ in 0..<4 { root.deleteLastPathComponent() }
        let library = root.appendingPathComponent("Sources/IAPRecon")
        let paths = FileManager.default.enumerator(atPath: library.path)?.compactMap { $0 as? String } ?? []
        return paths.filter { $0.hasSuffix(".swift") }.sorted().compactMap { path in
            guard let text = try? String(contentsOfFile: library.appendingPathComponent(path).path, encoding: .utf8),
                  let folder = path.split(separator: "/").first, path.contains("/") else { return nil }
            return (path, String(folder), code(of: text))
        }
    }()

    /// `text` without its comments and the text of its string literals: a type named in prose or
    /// in a message is not a use, one named in an interpolation (`"\(Type.value)"`) is.
    static func code(of text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            var kept = ""
            var inString = false
            /// Open parentheses of the interpolation at hand, inside a string; 0 outside one.
            var depth = 0
            var previous: Character = " "
            for character in line {
                if inString, depth == 0 {
                    if character == "(", previous == "\\" {
                        depth = 1
                        kept.append(" ")
                    } else if character == "\"", previous != "\\" {
                        inString = false
                    }
                } else if character == "/", previous == "/" {
                    kept.removeLast()
                    break
                } else if character == "\"" {
                    inString = true
                } else {
                    if depth > 0 {
                        if character == "(" { depth += 1 } else if character == ")" { depth -= 1 }
                    }
                    kept.append(depth == 0 && inString ? " " : character)
                }
                previous = character
            }
            return kept
        }.joined(separator: "\n")
    }

    static let declaration = try! NSRegularExpression(
        pattern: "^(?:public |internal |fileprivate |private )?(?:final )?(?:struct|enum|class|protocol|typealias|actor) ([A-Z][A-Za-z0-9_]*)",
        options: .anchorsMatchLines)
    static let word = try! NSRegularExpression(pattern: "\\b[A-Z][A-Za-z0-9_]*\\b")

    /// The top-level types each folder declares (nested ones are named through them).
    static func declared(in sources: [(path: String, folder: String, code: String)]) -> [String: String] {
        var owners: [String: String] = [:]
        for source in sources {
            let range = NSRange(source.code.startIndex..., in: source.code)
            for match in declaration.matches(in: source.code, range: range) {
                if let name = Range(match.range(at: 1), in: source.code) { owners[String(source.code[name])] = source.folder }
            }
        }
        return owners
    }

    /// The types `code`, a file of `folder`, names from a folder it may not depend on, as "Type (Folder)".
    static func violations(folder: String, code: String, owners: [String: String]) -> [String] {
        guard let rank = ranks[folder] else { return ["is in \(folder), which has no rank"] }
        let range = NSRange(code.startIndex..., in: code)
        var found: Set<String> = []
        for match in word.matches(in: code, range: range) {
            guard let name = Range(match.range, in: code).map({ String(code[$0]) }), let owner = owners[name], owner != folder,
                  let ownerRank = ranks[owner], ownerRank >= rank else { continue }
            found.insert("\(name) (\(owner))")
        }
        return found.sorted()
    }

    @Test("every folder of the library names only types of the layers below it")
    func layersDependDownward() {
        #expect(Self.sources.count > 50, "the sources were not found")
        #expect(Set(Self.sources.map(\.folder)) == Set(Self.ranks.keys), "a folder was added or removed: give it its rank")
        let owners = Self.declared(in: Self.sources)
        for source in Self.sources {
            for violation in Self.violations(folder: source.folder, code: source.code, owners: owners) {
                Issue.record("\(source.path) names \(violation), a layer it may not depend on")
            }
        }
    }

    /// The files outside the store that build a raw row from values in its table's column order
    /// (`RawRow(table, [...])`): a parser hands the store a typed line, which the store turns
    /// into its row beside the table (`Store/Ingest/RawRows.swift`).
    static func positionalRows(in sources: [(path: String, folder: String, code: String)]) -> [String] {
        sources.filter { $0.folder != "Store" && $0.code.contains("RawRow(") }.map(\.path)
    }

    @Test("only the store lays a parsed line's values out in its table's column order")
    func parsersHandTypedLines() {
        for path in Self.positionalRows(in: Self.sources) {
            Issue.record("\(path) builds a RawRow from positional values: give the store a typed line instead")
        }
        // The check itself: a construction is caught; the type named in a signature, a typed line's
        // conversion, and the store's own constructions are not.
        let parser = ("Ingest/P.swift", "Ingest", "return .accepted([RawRow(.fx, [.text(day)])])")
        let typed = ("Ingest/Q.swift", "Ingest", "func rows() -> [RawRow] { [line.rawRow()] }")
        let store = ("Store/Ingest/R.swift", "Store", "RawRow(.fx, [.text(day)])")
        #expect(Self.positionalRows(in: [parser, typed, store]) == ["Ingest/P.swift"])
    }

    @Test("the check catches the store naming a stage's type, and lets a stage name the store's")
    func checkCatchesUpwardNames() {
        let owners = ["JoinScope": "Join", "Database": "Store", "Money": "Formats", "Registration": "Report", "Trace": "Parallel"]
        #expect(Self.violations(folder: "Store", code: "static func fill(_ scope: JoinScope) {}", owners: owners) == ["JoinScope (Join)"])
        #expect(Self.violations(folder: "Formats", code: "Trace.mark(label)", owners: owners) == ["Trace (Parallel)"])
        let interpolated = Self.code(of: #"failure = "no scope \(JoinScope.empty(of: "x")) here""#)
        #expect(Self.violations(folder: "Store", code: interpolated, owners: owners) == ["JoinScope (Join)"])
        // Near misses: a downward name, the same word in a comment or a message, a nested type's own name.
        #expect(Self.violations(folder: "Join", code: "let db: Database; let m: Money", owners: owners).isEmpty)
        let prose = Self.code(of: "let a = 1 // the JoinScope of a night\nthrow Failure(\"no JoinScope\")")
        #expect(Self.violations(folder: "Store", code: prose, owners: owners).isEmpty)
        #expect(Self.violations(folder: "Store", code: "struct Entry { var kind: Registration.Kind }", owners: owners) == ["Registration (Report)"])
        #expect(Self.declared(in: [("Join/A.swift", "Join", "struct JoinScope {\n    struct Key {}\n}")]) == ["JoinScope": "Join"])
    }

    /// The files of `Store` that are its interface, whatever the backend: the protocols the stages
    /// call and the values they exchange. The rest of `Store` is SQLite's conformance.
    static let storeInterface: Set<String> = [
        "Store/Ingest/IngestStore.swift", "Store/Ingest/LineBatch.swift", "Store/Ingest/RawTable.swift", "Store/PackedRows.swift",
        "Store/SQLValue.swift", "Store/Join/JoinStore.swift", "Store/Join/ScopeKeys.swift", "Store/SourceFiles.swift",
        "Store/Report/HistoryStore.swift", "Store/Report/MMPSegment.swift", "Store/Report/ReportStore.swift", "Store/StoredRow.swift",
    ]
    /// The stages that reach the store through its interface alone: all of them.
    static let behindInterface: Set<String> = ["Ingest", "Normalize", "Join", "Report"]

    /// The store's types that `code`, a file of a stage behind the interface, names outside the
    /// interface's files (each type's file in `files`). A name the file declares itself, at any
    /// depth (`AppleTieOut.Row`, an associated type), is its own, and so is a member's name
    /// (`RevenueReport.Row`).
    static func backendNames(code: String, files: [String: String]) -> [String] {
        let range = NSRange(code.startIndex..., in: code)
        var own: Set<String> = []
        for match in nestedDeclaration.matches(in: code, range: range) {
            if let name = Range(match.range(at: 1), in: code) { own.insert(String(code[name])) }
        }
        var found: Set<String> = []
        for match in word.matches(in: code, range: range) {
            guard let range = Range(match.range, in: code),
                  range.lowerBound == code.startIndex || code[code.index(before: range.lowerBound)] != "." else { continue }
            let name = String(code[range])
            guard !own.contains(name), let file = files[name],
                  file.hasPrefix("Store/"), !storeInterface.contains(file) else { continue }
            found.insert("\(name) (\(file))")
        }
        return found.sorted()
    }

    static let nestedDeclaration = try! NSRegularExpression(
        pattern: "^\\s*(?:public |internal |fileprivate |private )?(?:final )?(?:struct|enum|class|protocol|typealias|actor|associatedtype) ([A-Z][A-Za-z0-9_]*)",
        options: .anchorsMatchLines)

    /// Each top-level type's file.
    static func declaringFiles(in sources: [(path: String, folder: String, code: String)]) -> [String: String] {
        var files: [String: String] = [:]
        for source in sources {
            let range = NSRange(source.code.startIndex..., in: source.code)
            for match in declaration.matches(in: source.code, range: range) {
                if let name = Range(match.range(at: 1), in: source.code) { files[String(source.code[name])] = source.path }
            }
        }
        return files
    }

    @Test("every stage reaches the store through its interface, which names nothing of SQLite's")
    func stagesNameOnlyTheStoreInterface() {
        let files = Self.declaringFiles(in: Self.sources)
        for file in Self.storeInterface {
            #expect(files.values.contains(file), "\(file) declares no type: the interface's list is out of date")
        }
        for source in Self.sources where Self.behindInterface.contains(source.folder) {
            for name in Self.backendNames(code: source.code, files: files) {
                Issue.record("\(source.path) names \(name), which is SQLite's, not the store's interface")
            }
        }
        // A second backend implements the interface's files alone: they name none of SQLite's.
        for source in Self.sources where Self.storeInterface.contains(source.path) {
            if source.code.contains("import CSQLite") { Issue.record("\(source.path), of the store's interface, imports SQLite") }
            for name in Self.backendNames(code: source.code, files: files) {
                Issue.record("\(source.path), of the store's interface, names \(name), which is SQLite's")
            }
        }
        // The check itself: a connection, a statement or a SQLite module's function is caught; the
        // interface's protocol and values, and the model's types, are not.
        let known = ["Database": "Store/Database.swift", "StoredLinks": "Store/Join/StoredLinks.swift",
                     "JoinStore": "Store/Join/JoinStore.swift", "JoinScope": "Store/Join/ScopeKeys.swift", "Finding": "Model/Finding.swift"]
        #expect(Self.backendNames(code: "func run(_ database: Database) { StoredLinks.reach() }", files: known)
                == ["Database (Store/Database.swift)", "StoredLinks (Store/Join/StoredLinks.swift)"])
        #expect(Self.backendNames(code: "func run(store: some JoinStore, scope: JoinScope) -> [Finding]", files: known).isEmpty)
        #expect(Self.backendNames(code: "struct Tie {\n    struct Database {}\n    var row: Database\n}", files: known).isEmpty)
        #expect(Self.backendNames(code: "var rows: [Key: Revenue.Database] = [:]", files: known).isEmpty)
        #expect(Self.backendNames(code: "protocol P {\n    associatedtype Database\n}", files: known).isEmpty)
    }

    /// The README's architecture part: the lines under `## How data flows`, up to the next heading.
    static func architectureSection(of readme: String) -> [Substring]? {
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(of: "## How data flows") else { return nil }
        let rest = lines[(start + 1)...]
        let end = rest.firstIndex { $0.hasPrefix("## ") } ?? lines.endIndex
        return Array(lines[(start + 1)..<end])
    }

    @Test("the README says how data flows in at most 40 lines, naming each of the store's interfaces")
    func readmeNamesTheInterfaces() throws {
        var root = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        for _ in 0..<4 { root.deleteLastPathComponent() }
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(Self.architectureSection(of: readme), "README.md has no '## How data flows'")
        #expect(section.count <= 40, "the architecture part is \(section.count) lines")
        let text = section.joined(separator: "\n")
        let protocols = try NSRegularExpression(pattern: "^protocol ([A-Z][A-Za-z]*Store)\\b", options: .anchorsMatchLines)
        var named = 0
        for source in Self.sources where Self.storeInterface.contains(source.path) {
            for match in protocols.matches(in: source.code, range: NSRange(source.code.startIndex..., in: source.code)) {
                guard let range = Range(match.range(at: 1), in: source.code) else { continue }
                named += 1
                #expect(text.contains("`\(source.code[range])`"), "the README's architecture part does not name \(source.code[range])")
            }
        }
        #expect(named >= 5, "the store's interfaces were not found")
        // The section ends at the next heading, not at the end of the file.
        #expect(Self.architectureSection(of: "# A\n## How data flows\none\ntwo\n## Next\nthree")?.count == 2)
    }
}
