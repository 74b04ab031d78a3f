import Foundation
import IAPRecon
import IAPReconGenerator

/// `iaprecon generate`: a realistic input folder with planted findings and their truth.
enum GenerateCommand {
    static func run(_ command: ParsedCommand, console: Console) throws -> ExitCode {
        let options = GeneratorOptions(users: try command.optionalInt("users") ?? 1000, days: try command.optionalInt("days") ?? 30,
                                       seed: UInt64(try command.optionalInt("seed") ?? 1), partitioned: command.flag("partitioned"))
        let out = try command.string("out")
        // The generator replaces the day files of an earlier run: a folder holding anything else
        // (someone's real inputs, the demo's sample data) is only written with --force.
        let existing = (try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []
        if !existing.isEmpty, !command.flag("force") {
            throw command.usageError("--out \(out) is not empty; generating into it replaces its files (use --force, or name a new folder)")
        }
        let report = try InputGenerator.write(options, to: out)
        console.out("wrote \(report.files.count) files, \(report.lines) lines, \(report.bytes) bytes to \(out)/ "
            + "(\(report.plantedFindings) planted findings, \(report.plantedRejects) bad lines; truth in \(out)/truth.json, as-of \(report.asOf); "
            + "its JWS are signed by the test root \(out)/trust/test-root.pem: pass it with --trust-root)")
        return .ok
    }
}
