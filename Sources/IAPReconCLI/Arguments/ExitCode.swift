/// The process exit status, as the contract defines it.
///
/// See the data contract's "Exit codes": findings do not fail a run
/// unless `--fail-on` says so. These are not sysexits numbers; bad usage is 2,
/// where swift-argument-parser would exit 64.
public enum ExitCode: Int32, Sendable, CaseIterable {
    /// Done.
    case ok = 0
    /// Anything else, or findings at or above `--fail-on`; a one-line reason on stderr.
    case failure = 1
    /// Bad usage: an unknown option, a missing or malformed value, a bad config file.
    case usage = 2
    /// An input folder or file cannot be read.
    case unreadableInput = 3
    /// Another run holds the database.
    case locked = 4
}
