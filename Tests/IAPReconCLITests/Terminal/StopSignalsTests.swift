import Foundation
@testable import IAPReconCLI
import Testing

/// The one line a run stopped by a signal leaves on stderr: what the stop left behind, for the command stopped.
@Suite("Stop signals")
struct StopSignalsTests {
    @Test("a command that writes the store or reports says both stay whole; it names the signal", arguments: [
        "run", "nightly", "backfill", "ingest", "normalize", "join", "report", "forget",
    ])
    func writers(command: String) {
        #expect(StopSignals.line(for: SIGTERM, command: command)
                == "Error: stopped by SIGTERM before it finished; the store and the outputs stay whole, and the next run does the rest\n")
    }

    @Test("a command that only reads says it changed nothing, not that a next run does the rest", arguments: [
        "history", "runs", "check", "validate",
    ])
    func readers(command: String) {
        #expect(StopSignals.line(for: SIGINT, command: command) == "Error: stopped by SIGINT before it finished; it changed nothing\n")
    }

    @Test("generate says its --out holds part of the data, which only --force writes over")
    func generate() {
        #expect(StopSignals.line(for: SIGHUP, command: "generate")
                == "Error: stopped by SIGHUP before it finished; --out holds part of the data: generate it again with --force\n")
    }
}
