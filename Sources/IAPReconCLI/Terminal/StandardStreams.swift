import Foundation

/// Writes to stdout and stderr that never stop a run.
///
/// Cron hands a job whatever streams its line gives it: closed (`>&-`), a file on a full disk, a pipe whose reader
/// is gone. Foundation's `FileHandle.write(_:)` traps on the first failed write, so such a stream crashed every
/// night at the same line (a warning, the findings line, the alert), after its reports were switched in but before
/// its findings counted as reported: the next night crashed there again. What cannot be said there is lost; the run
/// goes on and exits with its own code.
enum StandardStreams {
    /// Points each of stdin, stdout and stderr the process was started without (`<&-`, `>&-`, `2>&-`) at
    /// `/dev/null`, so that no file the run opens takes its number and receives what is written to the stream.
    static func reserveClosed() {
        // In ascending order: `open` takes the lowest free number, which is then `descriptor` itself.
        for descriptor in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            _ = open("/dev/null", descriptor == STDIN_FILENO ? O_RDONLY : O_WRONLY)
        }
    }

    /// Writes all of `bytes` to `descriptor`. Returns the system's error number when the stream refused them (closed, a
    /// full disk, a reader gone), which a caller writing to stdout or stderr cannot say anywhere else; nil when all was written.
    /// Bytes already contiguous (an array, a native string's UTF-8) are written where they are, not copied first.
    @discardableResult
    static func write(_ bytes: some Collection<UInt8>, to descriptor: Int32) -> Int32? {
        if let result = bytes.withContiguousStorageIfAvailable({ writeAll(UnsafeRawBufferPointer($0), to: descriptor) }) { return result }
        return Array(bytes).withUnsafeBytes { writeAll($0, to: descriptor) }
    }

    private static func writeAll(_ buffer: UnsafeRawBufferPointer, to descriptor: Int32) -> Int32? {
        guard let start = buffer.baseAddress else { return nil }
        var offset = 0
        while offset < buffer.count {
            let written = Glibc.write(descriptor, start + offset, buffer.count - offset)
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return written < 0 ? errno : EIO }
            offset += written
        }
        return nil
    }
}
