import Foundation
import Testing

/// The user docs name the columns and keys the report writes, in its order: a reader greps
/// `docs/outputs.md` and `docs/reports.md` for a column and must find the file's own spelling.
/// The outputs are `sample-data/expected/`, which `SampleDataTests` holds to what the report writes.
@Suite("output docs")
struct OutputDocsTests {
    static let repository = SampleDataTests.repository

    /// One `## name…` section of a doc: its heading and the names in the first cell of each table
    /// row, in order (a cell may name several, `gross_usd`, `refunds_usd`, `net_usd`).
    struct Section {
        var heading: String
        var names: [String]
        /// The first code span of the section that lists names separated by commas (a header
        /// written out, as `revenue_monthly.csv`'s is), split.
        var inlineHeader: [String]?
    }

    static func sections(of markdown: String) -> [Section] {
        var sections: [Section] = []
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") {
                sections.append(Section(heading: String(line.dropFirst(3)), names: [], inlineHeader: nil))
                continue
            }
            guard !sections.isEmpty else { continue }
            if line.hasPrefix("| `") {
                let cell = line.dropFirst(2).prefix { $0 != "|" }
                sections[sections.count - 1].names += codeSpans(cell)
            } else if sections[sections.count - 1].inlineHeader == nil, line.hasPrefix("`"),
                      let span = codeSpans(line[...]).first, span.contains(","), !span.contains(" ") {
                sections[sections.count - 1].inlineHeader = span.split(separator: ",").map(String.init)
            }
        }
        return sections
    }

    static func codeSpans(_ text: Substring) -> [String] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    static func doc(_ name: String) throws -> String {
        try String(contentsOfFile: repository + "/docs/" + name, encoding: .utf8)
    }

    static func expectedHeader(_ file: String) throws -> [String] {
        let text = try String(contentsOfFile: SampleDataTests.expected + "/" + file, encoding: .utf8)
        let header = text.components(separatedBy: "\r\n").first ?? ""
        return header.split(separator: ",").map(String.init)
    }

    @Test("every CSV section of docs/outputs.md and docs/reports.md lists the file's columns in its order")
    func csvColumns() throws {
        var checked: Set<String> = []
        for docName in ["outputs.md", "reports.md"] {
            for section in Self.sections(of: try Self.doc(docName)) {
                guard let file = section.heading.split(separator: " ").first.map({ String($0).trimmingCharacters(in: [":"]) }),
                      file.hasSuffix(".csv") else { continue }
                let header = try Self.expectedHeader(file)
                let documented = section.names.isEmpty ? section.inlineHeader ?? [] : section.names
                // A section on some of a file's columns (`## attribution.csv: growth columns`) names its last ones.
                let part = section.heading.contains(":")
                if part {
                    #expect(!documented.isEmpty && Array(header.suffix(documented.count)) == documented,
                            "\(docName) \(section.heading): \(documented) are not the last columns of \(header)")
                } else {
                    #expect(documented == header, "\(docName) ## \(section.heading) lists \(documented), the file's header is \(header)")
                }
                checked.insert(file)
            }
        }
        #expect(checked == ["findings.csv", "revenue_daily.csv", "apple_tieout.csv", "attribution.csv", "rejects.csv",
                            "transactions.csv", "revenue_monthly.csv"])
    }

    /// `inputs.files[]`, `findings.by_kind.<kind>`, `money_at_risk_usd`: each documented key path leads
    /// somewhere in `summary.json`, and each of its top-level keys is documented.
    @Test("docs/outputs.md documents every key of summary.json, and only keys it writes")
    func summaryKeys() throws {
        let section = try #require(Self.sections(of: try Self.doc("outputs.md")).first { $0.heading == "summary.json" })
        let data = try #require(FileManager.default.contents(atPath: SampleDataTests.expected + "/summary.json"))
        let summary = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        for path in section.names {
            var value: Any? = summary
            for component in path.split(separator: ".") {
                var key = String(component)
                let isList = key.hasSuffix("[]")
                if isList { key.removeLast(2) }
                let object = value as? [String: Any]
                // `<kind>` stands for any key of the object.
                value = key.hasPrefix("<") ? object?.values.first : object?[key]
                if isList { value = (value as? [Any])?.first }
            }
            #expect(value != nil, "docs/outputs.md documents `\(path)`, which summary.json does not have")
        }
        let documentedTop = Set(section.names.map { String($0.prefix { $0 != "." && $0 != "[" }) })
        #expect(Set(summary.keys).subtracting(documentedTop) == [], "summary.json keys missing from docs/outputs.md")
    }

    @Test("docs/outputs.md names every key of a consumption request's body")
    func consumptionRequestKeys() throws {
        let sections = Self.sections(of: try Self.doc("outputs.md"))
        let section = try #require(sections.first { $0.heading == "consumption_requests.jsonl" })
        let text = try String(contentsOfFile: SampleDataTests.expected + "/consumption_requests.jsonl", encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let body = try #require(object["consumptionRequest"] as? [String: Any])
        #expect(Set(section.names) == Set(body.keys))
    }

    @Test("the docs' table reader finds names in the first cell only, and written-out headers")
    func readerNearMiss() {
        let markdown = """
            ## a.csv

            | column | meaning |
            |---|---|
            | `x`, `y` | like `z` |

            ## b.csv

            `p,q,r`
            """
        let sections = Self.sections(of: markdown)
        #expect(sections.map(\.names) == [["x", "y"], []])
        #expect(sections.map(\.inlineHeader) == [nil, ["p", "q", "r"]])
    }
}
