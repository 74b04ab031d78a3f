import Foundation

/// SIGTERM (a `timeout` wrapper, systemd, a shutdown), SIGINT and SIGHUP end a run with the
/// contract's one line on stderr and exit 1, instead of the silent death that leaves cron's mail
/// empty. Stopping at any moment is safe, as a SIGKILL is: the store commits whole transactions
/// and the outputs are switched in whole, so the handler only says so and exits at once.
enum StopSignals {
    /// The signals a person or a supervisor sends to stop a run.
    static let handled: [Int32] = [SIGTERM, SIGINT, SIGHUP]

    /// Per signal number, its line as C text, made before any handler runs: a signal handler may
    /// only call async-signal-safe functions, so it writes these bytes and allocates nothing.
    /// Filled by `install`, before its first handler, and only read after.
    nonisolated(unsafe) private static let lines: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> = {
        let table = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: Int(slots))
        table.initialize(repeating: nil, count: Int(slots))
        return table
    }()

    private static let slots: Int32 = 65

    /// What a stopped run says: which signal, and what the stop left, for the `command` stopped (its first argument).
    static func line(for number: Int32, command: String?) -> String {
        let name = [SIGTERM: "SIGTERM", SIGINT: "SIGINT", SIGHUP: "SIGHUP"][number] ?? "signal \(number)"
        return "Error: stopped by \(name) before it finished; \(leftBehind(by: command))\n"
    }

    /// A command that writes the store or reports leaves both whole; one that only reads changed nothing, and a
    /// lookup stopped by Ctrl-C must not send anyone to run the night again; `generate` leaves part of a folder.
    private static func leftBehind(by command: String?) -> String {
        switch command {
        case "history", "runs", "check", "validate": "it changed nothing"
        case "generate": "--out holds part of the data: generate it again with --force"
        case "bench": "its --work folder may hold part of its data"
        default: "the store and the outputs stay whole, and the next run does the rest"
        }
    }

    /// Installs the handlers for `command`; once, at the start of the process (never in tests, which run commands
    /// in-process). A signal the process was started ignoring stays ignored: `nohup` ignores SIGHUP,
    /// and a shell's background job SIGINT, so that those cannot stop it.
    static func install(command: String?) {
        for number in handled where number < slots {
            lines[Int(number)] = strdup(line(for: number, command: command))
        }
        for number in handled {
            var current = sigaction()
            sigaction(number, nil, &current)
            if unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) { continue }
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                if number >= 0, number < StopSignals.slots, let line = StopSignals.lines[Int(number)] {
                    _ = write(STDERR_FILENO, line, strlen(line))
                }
                _exit(ExitCode.failure.rawValue)
            }
            sigemptyset(&action.sa_mask)
            sigaction(number, &action, nil)
        }
    }
}
