import Foundation
import Testing
@testable import IAPRecon

@Suite struct ZZProbe {
    @Test func probe() throws {
        let dir = NSTemporaryDirectory() + "probe-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let p = dir + "/plain.gz"
        try "hello\nworld\n".write(toFile: p, atomically: true, encoding: .utf8)
        do {
            try LineReader.forEachLine(path: p) { print("line", $0.number, String(decoding: $0.bytes, as: UTF8.self)) }
        } catch { print("err", error) }
        let q = dir + "/bad.gz"
        try Data([0x1f, 0x8b, 0x08, 0x00, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]).write(to: URL(fileURLWithPath: q))
        do {
            try LineReader.forEachLine(path: q) { print("line", $0.number, String(decoding: $0.bytes, as: UTF8.self)) }
        } catch { print("err", error) }
        let r = dir + "/empty.gz"
        try Data().write(to: URL(fileURLWithPath: r))
        do {
            try LineReader.forEachLine(path: r) { print("line", $0.number, String(decoding: $0.bytes, as: UTF8.self)) }
        } catch { print("err", error) }
        var s = "abc " + String(repeating: "A", count: 200) + " def"
        print(s.withUTF8 { Redaction.rejectText($0) })
        s = String(repeating: "a b ", count: 100)
        let t = s.withUTF8 { Redaction.rejectText($0) }
        print(t.utf8.count, t)
        s = String(repeating: "a b ", count: 75)
        print(s.withUTF8 { Redaction.rejectText($0) }.hasSuffix("…"))
        s = String(repeating: "a b ", count: 75) + "x"
        print(s.withUTF8 { Redaction.rejectText($0) }.hasSuffix("…"))
    }
}
