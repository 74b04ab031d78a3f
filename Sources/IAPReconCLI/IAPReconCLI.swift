import Foundation
import IAPRecon

/// The command line: parses arguments, runs one subcommand, and maps errors to
/// the contract's exit codes (0 done, 1 failure or `--fail-on`, 2 usage,
/// 3 unreadable input, 4 store locked), with a one-line reason on stderr.
public enum IAPReconCLI {
    public static let version = "0.1.0"

    /// Runs `arguments` (with the program name first, as in `CommandLine.arguments`).
    public static func main(_ arguments: [String]) -> Int32 {
        ProcessMemory.configureHeap()
        // Past a file-size limit (`ulimit -f`) the kernel kills the writer with SIGXFSZ, which says
        // nothing to whoever reads cron's mail. Ignored, the write fails with EFBIG instead, and the
        // run ends like on a full disk: exit 1 with a one-line reason naming the file.
        signal(SIGXFSZ, SIG_IGN)
        // A pipe whose reader is gone (a mailer or logger that died) refuses a write, like a closed stream, instead of
        // killing the run in silence: the run goes on (`StandardStreams`).
        signal(SIGPIPE, SIG_IGN)
        StandardStreams.reserveClosed()
        StopSignals.install(command: arguments.dropFirst().first)
        return run(Array(arguments.dropFirst()), console: Console.standard())
    }

    /// Runs a command line with output captured by `console` (tests use this).
    public static func run(_ arguments: [String], console: Console) -> Int32 {
        switch parseWithConfig(arguments, program: .iaprecon(version: version)) {
        case .help(let text), .version(let text):
            console.out(text)
            return ExitCode.ok.rawValue
        case .usageError(let message):
            console.err(message)
            return ExitCode.usage.rawValue
        case .command(let command):
            do {
                return try dispatch(command, console: console).rawValue
            } catch let error as UsageError {
                console.err(error.text)
                return ExitCode.usage.rawValue
            } catch let error as SQLiteError where command.declares("db") && error.isDamage {
                // Damage a stage read before its turn of the check came to it: said as the check says it.
                console.err("Error: cannot use store \(command.databasePath): damaged (SQLite: \(error.message)); \(Store.damagedAdvice)")
                return ExitCode.failure.rawValue
            } catch let error as SQLiteError where command.declares("db") {
                // A failure inside the store (a full disk, a damaged file) names the store.
                console.err("Error: store \(command.databasePath): \(error)")
                return ExitCode.failure.rawValue
            } catch let error as BenchError {
                // The tail of a failed child's log, which iaprecon wrote: its lines stay lines.
                console.errLines("Error: \(error)")
                return exitCode(for: error).rawValue
            } catch {
                console.err("Error: \(error)")
                return exitCode(for: error).rawValue
            }
        }
    }

    static func exitCode(for error: any Error) -> ExitCode {
        switch error {
        case is InputError, is ReplayError: .unreadableInput
        case is LockedError: .locked
        case is ForeignOutputError: .usage
        case is ReportingCurrency.Mismatch: .usage
        default: .failure
        }
    }

    static func dispatch(_ command: ParsedCommand, console: Console) throws -> ExitCode {
        switch command.name {
        case "run": try RunCommand.run(command, console: console)
        case "nightly": try NightlyCommand.run(command, console: console)
        case "backfill": try NightlyCommand.backfill(command, console: console)
        case "ingest": try StageCommands.ingest(command, console: console)
        case "normalize": try StageCommands.normalize(command, console: console)
        case "join": try StageCommands.join(command, console: console)
        case "report": try StageCommands.report(command, console: console)
        case "validate": try StageCommands.validate(command, console: console)
        case "history": try HistoryCommand.run(command, console: console)
        case "runs": try RunsCommand.run(command, console: console)
        case "forget": try StageCommands.forget(command, console: console)
        case "check": try StageCommands.check(command, console: console)
        case "generate": try GenerateCommand.run(command, console: console)
        case "bench": try BenchCommand.run(command, console: console)
        default: throw command.usageError("'\(command.name)' is not implemented")
        }
    }
}

/// Where a command writes: the process's stdout and stderr, or buffers in tests.
public final class Console {
    public let captured: Bool
    public private(set) var stdout = ""
    public private(set) var stderr = ""
    /// True when stderr is a terminal: progress is drawn live.
    public let isTerminal: Bool
    /// Where `out` and `err` write when not captured: stdout and stderr, or others a test gives.
    private let outDescriptor: Int32
    let errDescriptor: Int32
    /// Tests only: called at the named points of a command's work (`reached`), so a test can look at
    /// the store between them, in the same order every time, without racing the command.
    var checkpoint: ((String) -> Void)?

    init(captured: Bool, isTerminal: Bool, outDescriptor: Int32 = STDOUT_FILENO, errDescriptor: Int32 = STDERR_FILENO) {
        self.captured = captured
        self.isTerminal = isTerminal
        self.outDescriptor = outDescriptor
        self.errDescriptor = errDescriptor
    }

    public static func standard() -> Console { Console(captured: false, isTerminal: isatty(2) == 1) }
    public static func capturing() -> Console { Console(captured: true, isTerminal: false) }

    public func out(_ text: String) {
        if captured { stdout += text + "\n" } else { StandardStreams.write((text + "\n").utf8, to: outDescriptor) }
    }

    /// Writes a long output piece by piece (no line breaks added) through a buffer, so that it is
    /// never held whole: one customer's history can run to hundreds of thousands of events.
    func streamOut(_ body: (_ write: (String) -> Void) -> Void) {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(Self.streamBufferBytes)
        func flush() {
            guard !buffer.isEmpty else { return }
            StandardStreams.write(buffer, to: outDescriptor)
            buffer.removeAll(keepingCapacity: true)
        }
        body { text in
            if captured {
                stdout += text
                return
            }
            buffer.append(contentsOf: text.utf8)
            if buffer.count >= Self.streamBufferBytes { flush() }
        }
        flush()
    }

    /// How much `streamOut` gathers before it writes.
    static let streamBufferBytes = 64 << 10

    /// A point of a command's work that a test may look at (see `checkpoint`); nothing otherwise.
    func reached(_ point: String) { checkpoint?(point) }

    /// Writes one message to stderr, as one line. Warnings and errors name files, types and values
    /// that came from input, so what a terminal would run (an escape sequence) is shown escaped, never
    /// raw; and so is a line break, since cron mails stderr line by line: a campaign or an order id
    /// holding one would otherwise print a line of its choosing, such as a forged `iaprecon: exit 0`.
    public func err(_ text: String) {
        _ = write(error: Terminal.visible(text))
    }

    /// Writes a message of several lines that iaprecon itself made (a failed bench child's log), each
    /// line shown as `err` shows one.
    func errLines(_ text: String) {
        _ = write(error: Terminal.visibleLines(text))
    }

    /// Writes a run's alert line to stderr: its findings count as reported only once it is said (CONTRACT.md §4),
    /// so a stderr that refuses it (a full disk, a pipe whose reader is gone) stops the run before they count, and
    /// the next run alerts on them in its place.
    func alert(_ text: String) throws {
        if let error = write(error: Terminal.visible(text)) { throw UnsaidAlert(reason: String(cString: strerror(error))) }
    }

    /// Writes text already made visible to stderr; the system's error number when stderr refused it.
    private func write(error text: String) -> Int32? {
        if captured {
            stderr += text + "\n"
            return nil
        }
        return StandardStreams.write((text + "\n").utf8, to: errDescriptor)
    }
}

/// A run's alert line that stderr refused: the run stops before its findings count as reported.
struct UnsaidAlert: Error, CustomStringConvertible {
    var reason: String
    var description: String {
        "the alert line could not be written to stderr (\(reason)); its findings stay new, and the next run alerts on them"
    }
}
