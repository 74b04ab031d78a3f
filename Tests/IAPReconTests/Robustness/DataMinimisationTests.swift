import Foundation
import Testing
@testable import IAPRecon

/// Outputs and the store keep what reconciliation needs and the provenance, nothing more:
/// no receipt blobs, no JWS strings, no full device ids (IDFA, IDFV, AppsFlyer ID) in
/// anything a person reads or the store keeps.
@Suite("Data minimisation")
struct DataMinimisationTests {
    /// True when `text` holds a JWS (`eyJ…`) or a base64-like run of 64 characters or more,
    /// however its `/` is escaped (`\/`, `\u002F`).
    static func holdsBlob(_ text: String) -> Bool {
        if text.contains("eyJ") { return true }
        var run = 0
        for scalar in text.unicodeScalars {
            let token = CharacterSet.alphanumerics.contains(scalar) || "+/=_-\\".unicodeScalars.contains(scalar)
            run = token ? run + 1 : 0
            if run >= 64 { return true }
        }
        return false
    }

    /// A base64 receipt as verifyReceipt takes it, and as a JSON encoder that escapes `/` writes it.
    static let receipt = "MIITtgYJKoZIhvcNAQcCoIITpzCCE6MCAQExCzAJBgUrDgMCGgUAMIIDVwYJKoZIhvcNAQcBoIIDSASCA0QxggNAMAoCAQgCAQEEAhYAMAoCARQCAQEEAgwAMAsCAQECAQEEAwIBADALAgEL"
        + "AgEBBAMCAQAwCwIBDwIBAQQDAgEAMAsCARACAQEEAwIBADALAgEZAgEBBAMCAQMwDAIBCgIBAQQEFgI0KzAMAgEOAgEBBAQCAgDmMA0CAQMCAQEEBQwDNzI1MA0CAQ0CAQEEBQIDAf+oMA0CARMC/AQEEBQwD"
    static var escapedReceipt: String { receipt.replacingOccurrences(of: "/", with: "\\/") }

    /// Device ids planted in rejected lines, beside sample-data's own.
    static let planted = [
        "1E2D3C4B-5A69-4788-9AB0-C1D2E3F4A5B6", "A1B2C3D4-E5F6-4A7B-8C9D-0E1F2A3B4C5D", "1795689480000-7654321",
        "f0e1d2c3b4a5968778695a4b3c2d1e0f", "custom-device-4242",
    ]

    /// The IDFV, IDFA and AppsFlyer ID values of the registrations and attribution files under `input`.
    static func deviceIDs(in input: String) throws -> Set<String> {
        var ids: Set<String> = []
        for file in try SourceFile.list(in: input) where !file.relativePath.hasSuffix(".gz") {
            let text = try String(contentsOfFile: file.absolutePath, encoding: .utf8)
            let lines = text.split(separator: "\n").map(String.init)
            switch file.kind {
            case .registrations:
                for line in lines {
                    guard let object = (try? JSONParser.parse(line))?.objectValue else { continue }
                    for key in ["idfv", "idfa", "appsflyer_id"] { if case .string(let id)? = object[key] { ids.insert(id) } }
                }
            case .attribution:
                guard let header = lines.first.flatMap(CSV.fields) else { continue }
                let columns = ["IDFV", "IDFA", "AppsFlyer ID"].compactMap { header.firstIndex(of: $0) }
                for line in lines.dropFirst() {
                    guard let fields = CSV.fields(line), fields.count == header.count else { continue }
                    for column in columns { ids.insert(fields[column]) }
                }
            default: break
            }
        }
        return ids.filter { !$0.isEmpty && !$0.allSatisfy { $0 == "0" || $0 == "-" } }
    }

    /// Every text value of every table of the store at `path`.
    static func storedTexts(_ database: Database) throws -> [(table: String, text: String)] {
        var tables: [String] = []
        try database.forEach("SELECT name FROM sqlite_master WHERE type = 'table'") { tables.append($0.string(0)) }
        var texts: [(String, String)] = []
        for table in tables {
            var columns: [String] = []
            try database.forEach("SELECT name FROM pragma_table_info(?)", [.text(table)]) { columns.append($0.string(0)) }
            for column in columns {
                try database.forEach("SELECT CAST(\"\(column)\" AS TEXT) FROM \"\(table)\" WHERE \"\(column)\" IS NOT NULL") {
                    texts.append((table + "." + column, $0.string(0)))
                }
            }
        }
        return texts
    }

    @Test("after a run over sample-data and rejected lines full of device ids and receipts, no output, reject or stored value holds a full device id or a blob")
    func noFullDeviceIDAnywhere() throws {
        let scenario = try Scenario()
        for file in try SourceFile.list(in: SampleDataTests.sampleData) {
            try FileManager.default.copyItem(atPath: file.absolutePath, toPath: try scenario.place(file))
        }
        let (idfa, idfv, appsflyer, hexIDFA, oddID) = (Self.planted[0], Self.planted[1], Self.planted[2], Self.planted[3], Self.planted[4])
        try scenario.write("registrations/rejected.jsonl", [
            // A bad time: the whole line is shown, ids and all.
            #"{"ts":"not a time","user_id":"u_9001","method":"apple","idfv":"\#(idfv)","idfa":"\#(idfa)","appsflyer_id":"\#(appsflyer)"}"#,
            // A device id where a time belongs: the reason must not quote it.
            #"{"ts":"\#(idfa)","user_id":"u_9002","idfa" : "\#(oddID)"}"#,
            #"{"ts":"\#(appsflyer)","user_id":"u_9003","idfv":"\#(hexIDFA)"}"#,
            // Accepted: their ids reach the store.
            #"{"ts":"2026-11-20T10:00:00Z","user_id":"u_9004","method":"apple","idfv":"\#(idfv)","idfa":"\#(idfa)","appsflyer_id":"\#(appsflyer)"}"#,
            #"{"ts":"2026-11-20T10:00:00Z","user_id":"u_9005","method":"apple","idfa":"\#(oddID)","idfv":"\#(hexIDFA)"}"#,
        ])
        try scenario.write("receipts/rejected.jsonl", [
            #"{"received_at":"yesterday","user_id":"u_9001","receipt_data":"\#(Self.escapedReceipt)","response":{"status":0,"latest_receipt":"\#(Self.receipt)"}}"#,
            #"{"received_at":"\#(Self.escapedReceipt)","user_id":"u_9001"}"#,
        ])
        let known = try Self.deviceIDs(in: scenario.input).union(Self.planted)
        #expect(known.count > 20)
        _ = try scenario.run()

        let database = try scenario.open()
        for name in SampleDataTests.outputs {
            let text = try scenario.output(name)
            #expect(!Self.holdsBlob(text), "\(name) holds a blob")
            for id in known { #expect(!text.localizedCaseInsensitiveContains(id), "\(name) holds \(id)") }
        }
        let stored = try Self.storedTexts(database)
        #expect(stored.contains { $0.table == "raw_registrations__users.idfa" })
        for (table, text) in stored {
            for id in known { #expect(!text.localizedCaseInsensitiveContains(id), "\(table) holds \(id)") }
            if table.hasPrefix("rejects.") { #expect(!Self.holdsBlob(text), "\(table) holds a blob: \(text)") }
        }
        // The files themselves, free pages and the write-ahead log included.
        for suffix in ["", "-wal"] {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: scenario.databasePath + suffix))
            for id in known { #expect(bytes.range(of: Data(id.utf8)) == nil, "store\(suffix) holds \(id)") }
        }

        let rejects = try #require(OutputFormatTests.records(try scenario.output("rejects.csv")))
        let planted = rejects.filter { $0[0] == "registrations/rejected.jsonl" }.map { ($0[2], $0[3]) }
        #expect(planted.map(\.0) == ["bad time in 'ts': \"not a time\"", "bad time in 'ts': a string of 36 bytes", "bad time in 'ts': a string of 21 bytes"])
        #expect(planted.first?.1 == #"{"ts":"not a time","user_id":"u_9001","method":"apple","idfv":"…4C5D","idfa":"…A5B6","appsflyer_id":"…4321"}"#)
        #expect(planted.dropFirst().first?.1 == #"{"ts":"…A5B6","user_id":"u_9002","idfa" : "…4242"}"#)
        let receipts = rejects.filter { $0[0] == "receipts/rejected.jsonl" }
        #expect(receipts.count == 2)
        #expect(receipts.allSatisfy { !$0[2].contains("MII") && !$0[3].contains("MII") })
        #expect(receipts.first?[3] == #"{"received_at":"yesterday","user_id":"u_9001","receipt_data":"[\#(Self.escapedReceipt.utf8.count) bytes redacted]","response":{"status":0,"latest_receipt":"[\#(Self.receipt.utf8.count) bytes redacted]"}}"#)

        // The joins still work: sample-data's users matched by appsflyer_id, idfv and idfa stay matched.
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(scenario.output("summary.json").utf8)) as? [String: Any])
        let matchedBy = (summary["attribution"] as? [String: Any])?["users_matched_by"] as? [String: Int]
        #expect(matchedBy?["appsflyer_id"] == 2)
        #expect(matchedBy?["idfv"] == 1)
        #expect(matchedBy?["idfa"] == 1)
    }

    @Test("the store keeps a device id as a keyed hash and its last four characters; history shows those four; the same id hashes alike in one store, unlike in another")
    func pseudonyms() throws {
        let scenario = try Scenario()
        let idfa = Self.planted[0]
        try scenario.write("registrations/r.jsonl", [
            #"{"ts":"2026-11-20T10:00:00Z","user_id":"u_1","method":"apple","idfv":"\#(Self.planted[1])","idfa":"\#(idfa)","appsflyer_id":"\#(Self.planted[2])"}"#,
        ])
        try AttributionReportTests.Fixture.mmp(scenario, [
            AttributionReportTests.Fixture.MMPRow(time: "2026-11-20 09:00:00", mediaSource: "Facebook Ads", campaign: "c1", appsflyerID: Self.planted[2]),
        ])
        _ = try scenario.run(asOf: "2026-12-31T00:00:00Z")
        let database = try scenario.open()
        let stored = try #require(Self.bytes(try database.scalar("SELECT idfa FROM raw_registrations__users")))
        #expect(stored.count == 16 + 4)
        #expect(DeviceIDPseudonyms.shown(stored) == "…A5B6")
        let mmp = try #require(Self.bytes(try database.scalar("SELECT appsflyer_id FROM raw_mmp__events")))
        let registration = try #require(Self.bytes(try database.scalar("SELECT appsflyer_id FROM raw_registrations__users")))
        #expect(mmp == registration)
        #expect(Self.text(try database.scalar("SELECT matched_by FROM fct_user_installs WHERE user_id = 'u_1'")) == "appsflyer_id")
        let story = try UserHistory.load(database, .user("u_1"))
        // Every id the sign-up gave, the IDFV too: the story is what a user asking for their data is given.
        #expect(story.events.contains { $0.detail.contains("idfv …4C5D, idfa …A5B6, appsflyer …4321") })

        let other = try Scenario()
        try other.write("registrations/r.jsonl", [#"{"ts":"2026-11-20T10:00:00Z","user_id":"u_1","method":"apple","idfa":"\#(idfa)"}"#])
        _ = try other.run(asOf: "2026-12-31T00:00:00Z")
        let otherStored = try #require(Self.bytes(try other.open().scalar("SELECT idfa FROM raw_registrations__users")))
        #expect(otherStored != stored)
        #expect(DeviceIDPseudonyms.shown(otherStored) == "…A5B6")
    }

    @Test("a store written before pseudonyms gets its full device ids replaced by the next run, and attribution is unchanged")
    func olderStoreConverted() throws {
        let scenario = try Scenario()
        try scenario.write("registrations/r.jsonl", [
            #"{"ts":"2026-11-20T10:00:00Z","user_id":"u_1","method":"apple","idfv":"\#(Self.planted[1])"}"#,
        ])
        try AttributionReportTests.Fixture.mmp(scenario, [
            AttributionReportTests.Fixture.MMPRow(time: "2026-11-20 09:00:00", mediaSource: "Facebook Ads", campaign: "c1", appsflyerID: "x", idfv: Self.planted[1]),
        ])
        _ = try scenario.run(asOf: "2026-12-31T00:00:00Z")
        let attribution = try scenario.output("attribution.csv")
        // What an older iaprecon left: no key, the ids in full, everything derived from them.
        do {
            let database = try scenario.open()
            try database.execute("""
                DROP TABLE device_id_key;
                UPDATE raw_registrations__users SET idfv = '\(Self.planted[1])';
                UPDATE raw_mmp__events SET idfv = '\(Self.planted[1])', appsflyer_id = 'x';
                """)
        }
        let converted = try scenario.run(asOf: "2026-12-31T00:00:00Z")
        #expect(converted.join.fullRebuildReason == "a new device-id key")
        let database = try scenario.open()
        for (table, text) in try Self.storedTexts(database) { #expect(!text.contains(Self.planted[1]), "\(table) holds the IDFV") }
        #expect(Self.bytes(try database.scalar("SELECT idfv FROM raw_registrations__users")).map(DeviceIDPseudonyms.shown) == "…4C5D")
        #expect(try scenario.output("attribution.csv") == attribution)
        #expect(Self.text(try database.scalar("SELECT matched_by FROM fct_user_installs WHERE user_id = 'u_1'")) == "idfv")
    }

    @Test("the store and its -wal and -shm files are created readable and writable by their owner only")
    func ownerOnlyStore() throws {
        let scenario = try Scenario()
        try scenario.write("registrations/r.jsonl", [#"{"ts":"2026-11-20T10:00:00Z","user_id":"u_1","method":"apple"}"#])
        let previous = umask(0o022)
        defer { umask(previous) }
        let database = try scenario.open()
        _ = try Pipeline.ingest(input: scenario.input, database: database, jobs: 1, progress: nil)
        for suffix in ["", "-wal", "-shm"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: scenario.databasePath + suffix)
            #expect((attributes[.posixPermissions] as? Int) == 0o600, "store\(suffix)")
        }
    }

    @Test("a reject's text masks ids by shape and by key and drops long tokens in any escaping; transaction, order and user ids and times stay readable")
    func rejectText() {
        func redacted(_ line: String) -> String { Array(line.utf8).withUnsafeBufferPointer { Redaction.rejectText($0) } }
        #expect(redacted(#"{"idfa":"b32c634e-eeee-4deb-81d0-c3f46a42e947","x":"AF 1795183353000-2597879"}"#)
                == #"{"idfa":"…e947","x":"AF …7879"}"#)
        #expect(redacted(#"{"IDFV": "abc12345", "appsflyer_id":"short"}"#) == #"{"IDFV": "…2345", "appsflyer_id":"…"}"#)
        let unicodeEscaped = redacted("receipt=" + Self.receipt.replacingOccurrences(of: "/", with: "\\u002F") + " end")
        #expect(unicodeEscaped.hasSuffix("bytes redacted] end") && !unicodeEscaped.contains("MIIT"))
        #expect(redacted("r " + Self.receipt.replacingOccurrences(of: "/", with: "%2F") + " e").hasSuffix("bytes redacted] e"))
        #expect(redacted(#"{"receipt":""# + Self.escapedReceipt + #""}"#) == #"{"receipt":"[\#(Self.escapedReceipt.utf8.count) bytes redacted]"}"#)
        // Near misses: what a data engineer needs to find the line stays.
        let plain = #"{"ts":"2026-11-28T13:22:30Z","user_id":"u_1026","transaction_id":"2000000629466000","order_id":"OrderID_1795872125000_gems980","method":"idfa"}"#
        #expect(redacted(plain) == plain)
    }

    @Test("a reject's text drops IP and email addresses, also across the cut; times, versions, amounts, ids and a user_id stay")
    func rejectTextDropsAddresses() {
        func redacted(_ line: String) -> String { Array(line.utf8).withUnsafeBufferPointer { Redaction.rejectText($0) } }
        #expect(redacted(#"{"user_id":"u_1033","client_ip":"203.0.113.77","email":"jane.doe+iap@example.co.uk"}"#)
                == #"{"user_id":"u_1033","client_ip":"[IP address redacted]","email":"[email address redacted]"}"#)
        #expect(redacted("US,CA,San Jose,95113,807,198.51.100.39,true,2001:db8:85a3::8a2e:370:7334,fe80::1%en0,::ffff:192.0.2.1,x")
                == "US,CA,San Jose,95113,807,[IP address redacted],true,[IP address redacted],[IP address redacted]%en0,[IP address redacted],x")
        #expect(redacted("ip=10.0.0.1, mail to Jane <jane@example.com>. full 2001:0db8:0000:0000:0000:ff00:0042:8329")
                == "ip=[IP address redacted], mail to Jane <[email address redacted]>. full [IP address redacted]")
        // An address the 300-byte cut runs through is not shown in part.
        let padding = String(repeating: "a,", count: 143)
        for tail in ["198.51.100.39,x", "jane.doe@example.com,x", "2001:db8:85a3::8a2e:370:7334,x"] {
            let text = redacted(padding + tail)
            #expect(text.hasPrefix(padding) && text.hasSuffix("…"))
            #expect(!text.contains("198.51") && !text.contains("jane") && !text.contains("2001:db8"), "\(text)")
        }
        // The cut mark says whether what is shown was cut, after the addresses are replaced: a line that fits until
        // its address's mask makes it longer is cut, one that fits once its long address is replaced is whole.
        let short = String(repeating: "a,", count: 140)
        #expect(redacted(short + "ip 2001:db8::1 x") == short + "ip [IP address redacted]".prefix(20) + "…")
        let shorter = String(repeating: "a,", count: 130)
        #expect(redacted(shorter + "ip 203.0.1.2 x") == shorter + "ip [IP address redacted] x")
        let long = shorter + "to averyveryverylongname.surname@mail.example.com ok"
        #expect(Array(long.utf8).count > Redaction.maximumBytes)
        #expect(redacted(long) == shorter + "to [email address redacted] ok")
        #expect(redacted(short + String(repeating: "b,", count: 11)) == short + String(repeating: "b,", count: 10) + "…")
        // Near misses: a sign-up's user id shaped like an email, times, versions, amounts, ids and a quantity stay.
        let plain = #"{"ts":"2026-11-28T13:22:30.125Z","user_id":"jane@example.com","v":"3.4.1","sdk":"v6.15.2.1","os":"26.1","#
            + #""price":"9.99","at":"10:38:00","mac":"00:1A:2B:3C","o":"1.2.3.256","d":"2026.11.28","n":"1.2.3.4.5","w":"a::b","lo":"::1"}"#
        #expect(redacted(plain) == plain)
        #expect(redacted("at user@host or @handle, x@y, 2026-11-28 19:00:32") == "at user@host or @handle, x@y, 2026-11-28 19:00:32")
        // A reason describes such a value rather than quote it.
        #expect(LineReject.badTime("ts", .string("203.0.113.77")).reason == "bad time in 'ts': a string of 12 bytes")
        #expect(LineReject.badTime("ts", .string("jane@example.com")).reason == "bad time in 'ts': a string of 16 bytes")
        #expect(LineReject.badTime("ts", .string("10:38:00")).reason == "bad time in 'ts': \"10:38:00\"")
    }

    @Test("a reject's text is what a scan of one byte at a time gives: long runs, runs at the 64 KiB and 300-byte cuts, ids, other bytes")
    func rejectTextTakesRunsWhole() {
        // Pieces a rejected line is made of; joined at random, they put runs across every cut.
        let pieces: [[UInt8]] = [
            Array(#"{"signedPayload":""#.utf8), Array(Self.receipt.utf8), Array(Self.escapedReceipt.utf8),
            Array(repeating: UInt8(ascii: "A"), count: 63), Array(repeating: UInt8(ascii: "b"), count: 64),
            Array(repeating: UInt8(ascii: "9"), count: 70_000), Array("b32c634e-eeee-4deb-81d0-c3f46a42e947".utf8),
            Array(#""idfa": "abc12345","#.utf8), Array("1795183353000-2597879".utf8), Array(" ,:\"\t".utf8),
            [0xC3, 0xA9, 0xFF, 0x00, 0x7F, 0x80], Array("%2F\\u002F".utf8), Array("x".utf8),
            Array("198.51.100.39".utf8), Array("jane@example.com".utf8), Array("fe80::1".utf8),
        ]
        var generator = SplitMix64(state: 58)
        var lines: [[UInt8]] = [[], Array(repeating: UInt8(ascii: "z"), count: 65_536), Array(repeating: UInt8(ascii: "z"), count: 65_537)]
        for _ in 0..<400 {
            var line: [UInt8] = []
            for _ in 0..<Int.random(in: 1...12, using: &generator) { line += pieces[Int.random(in: 0..<pieces.count, using: &generator)] }
            lines.append(line)
        }
        for line in lines {
            line.withUnsafeBufferPointer { bytes in
                #expect(Redaction.rejectText(bytes) == Self.rejectTextByPieces(bytes), "\(bytes.count) bytes: \(String(decoding: bytes.prefix(80), as: UTF8.self))")
            }
        }
    }

    @Test("token bytes are base64 and base64url letters and what escapes them, and no other byte")
    func tokenBytes() {
        let expected = Set(Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz+/=_-.\\%".utf8))
        for byte in UInt8.min...UInt8.max {
            #expect(Redaction.isTokenByte(byte) == expected.contains(byte), "byte \(byte)")
        }
    }

    /// `Redaction.rejectText`'s scan done another way: the scanned bytes split first into token runs and
    /// single other bytes, classified one at a time, then shown piece by piece. A finished run is shown by
    /// the same `appendRun`.
    static func rejectTextByPieces(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let tokenBytes = Set(Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz+/=_-.\\%".utf8))
        var pieces: [(bytes: [UInt8], isRun: Bool)] = []
        for byte in bytes.prefix(Redaction.scanBytes) {
            let isToken = tokenBytes.contains(byte)
            if isToken, pieces.last?.isRun == true {
                pieces[pieces.count - 1].bytes.append(byte)
            } else {
                pieces.append(([byte], isToken))
            }
        }
        var output: [UInt8] = []
        var isDeviceValue = false
        var pendingRun: [UInt8]?
        func showPendingRun() {
            guard let run = pendingRun else { return }
            isDeviceValue = Redaction.appendRun(Array(run.prefix(Redaction.longTokenBytes)), length: run.count, isDeviceValue: isDeviceValue, to: &output)
            pendingRun = nil
        }
        var stopped = false
        for piece in pieces {
            if output.count > Redaction.scannedBytes {
                stopped = true
                break
            }
            guard !piece.isRun else {
                pendingRun = piece.bytes
                continue
            }
            showPendingRun()
            let byte = piece.bytes[0]
            if isDeviceValue, ![UInt8(ascii: "\""), UInt8(ascii: ":"), 0x20, 0x09].contains(byte) { isDeviceValue = false }
            output.append(byte)
        }
        showPendingRun()
        let shown = Redaction.maskingAddresses(output)
        var cut = shown.count > Redaction.maximumBytes || stopped || bytes.count > Redaction.scanBytes
        var text = String(decoding: shown.prefix(Redaction.maximumBytes), as: UTF8.self)
        while text.utf8.count > Redaction.maximumBytes {
            text.removeLast()
            cut = true
        }
        return cut ? text + "…" : text
    }

    @Test("a reason quotes a short bad value, and only describes one that could be a device id or a token")
    func reasonQuoting() {
        #expect(LineReject.badTime("ts", .string("yesterday")).reason == "bad time in 'ts': \"yesterday\"")
        #expect(LineReject.badAmount("price", .string("0,99")).reason == "bad amount in 'price': \"0,99\"")
        #expect(LineReject.badTime("ts", .number("17953")).reason == "bad time in 'ts': 17953")
        #expect(LineReject.badTime("ts", .string(Self.planted[0])).reason == "bad time in 'ts': a string of 36 bytes")
        #expect(LineReject.badTime("ts", .string("x" + Self.planted[2])).reason == "bad time in 'ts': a string of 22 bytes")
        #expect(LineReject.badTime("ts", .string(String(Self.receipt.prefix(40)))).reason == "bad time in 'ts': a string of 40 bytes")
    }

    static func text(_ value: SQLValue?) -> String? {
        if case .text(let text)? = value { return text }
        return nil
    }

    static func bytes(_ value: SQLValue?) -> [UInt8]? {
        if case .blob(let bytes)? = value { return bytes }
        return nil
    }
}
