import Foundation
import Testing
@testable import IAPReconCLI

/// Cron gives a job whatever streams its line says: a closed one, a file on a full disk. `/dev/full` refuses every
/// write with ENOSPC, as a full disk does.
@Suite("Standard streams and the night's log")
struct StandardStreamsTests {
    @Test("a console whose stdout and stderr refuse every write goes on: no line stops the command")
    func consoleOnFullStreams() throws {
        let full = open("/dev/full", O_WRONLY)
        try #require(full >= 0)
        defer { close(full) }
        let console = Console(captured: false, isTerminal: false, outDescriptor: full, errDescriptor: full)
        console.out("as of 2026-11-29T23:59:00.000Z: 9 critical, 5 warning, 2 info findings; reports in out/")
        console.err("iaprecon: exit 1: 3 new critical findings (lost_delivery 3), 2.97 USD at risk; see out/findings.csv")
        console.streamOut { write in write(String(repeating: "2026-11-20 purchase\n", count: 5_000)) }
        #expect(StandardStreams.write("x".utf8, to: full) == ENOSPC)
    }

    @Test("a console writes every byte of its lines to its streams")
    func consoleWritesWhole() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let console = Console(captured: false, isTerminal: false, outDescriptor: ends[1], errDescriptor: ends[1])
        console.out("findings line")
        console.err("Warning: caf\u{E9}")
        close(ends[1])
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 256)
        while case let count = read(ends[0], &chunk, chunk.count), count > 0 { bytes += chunk[..<count] }
        #expect(String(decoding: bytes, as: UTF8.self) == "findings line\nWarning: caf\u{E9}\n")
    }

    @Test("a run whose stderr refuses its alert line stops before its findings count as reported: the next run alerts on them")
    func unsaidAlert() throws {
        let work = try Workspace()
        let full = open("/dev/full", O_WRONLY)
        try #require(full >= 0)
        defer { close(full) }
        let arguments = ["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", work.path("s.sqlite"),
                         "--fail-on-new", "critical", "--quiet"]
        let refused = Console(captured: false, isTerminal: false, outDescriptor: full, errDescriptor: full)
        #expect(IAPReconCLI.run(arguments + ["--out", work.path("out1")], console: refused) == 1)
        let next = work.iaprecon(arguments + ["--out", work.path("out2")])
        #expect(next.code == 1)
        #expect(next.err.hasPrefix("iaprecon: exit 1: 8 new critical findings (lost_delivery "))
        // Near miss: an alert said is not said again.
        let third = work.iaprecon(arguments + ["--out", work.path("out3")])
        #expect(third.code == 0)
        #expect(third.err.isEmpty)
        let runs = work.iaprecon(["runs", "--db", work.path("s.sqlite")])
        #expect(runs.out.contains("the alert line could not be written to stderr"))
    }

    @Test("a log whose disk is full keeps why and says the log is incomplete, without stopping the night")
    func logOnFullDisk() {
        guard let log = try? LogFile(path: "/dev/full") else {
            Issue.record("cannot open /dev/full")
            return
        }
        log.write("iaprecon 0.1.0 nightly --root /srv/input --date 2026-11-29")
        log.write("ingest: 0.24s")
        #expect(log.failure == String(cString: strerror(ENOSPC)))
        #expect(log.incompleteWarning == "Warning: the log /dev/full is incomplete: a line could not be written "
                + "(\(String(cString: strerror(ENOSPC)))), nor any after it")
    }

    @Test("a log with room keeps every line and has nothing to say")
    func logWithRoom() throws {
        let path = FileManager.default.temporaryDirectory.path + "/iaprecon-log-\(UUID().uuidString).log"
        defer { unlink(path) }
        let log = try LogFile(path: path)
        log.write("first")
        log.write("second \u{1B}[2J")
        #expect(log.failure == nil)
        #expect(log.incompleteWarning == nil)
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.last?.hasSuffix(" second \\u{1B}[2J") == true)
    }
}
