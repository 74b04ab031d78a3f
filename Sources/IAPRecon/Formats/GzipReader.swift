import CZlib
import Foundation

/// Inflates a `.gz` input file member after member, as gzip(1) reads concatenated members.
///
/// zlib's `gzread` takes whatever follows a member that is not another member's header for
/// trailing garbage and reports a clean end, so a line appended after the compressed stream
/// would vanish unread. Here such bytes make the file unreadable, as a truncated one is
/// (CONTRACT.md §1: nothing is dropped silently).
final class GzipReader {
    private let descriptor: Int32
    private let path: String
    /// zlib keeps a pointer back to its stream, so the stream lives at a fixed address.
    private let stream: UnsafeMutablePointer<z_stream>
    private let input: UnsafeMutablePointer<UInt8>
    private let inputCapacity = 256 * 1024
    private var fileEnded = false
    private var memberStarted = false
    private var memberEnded = false
    private var anyMember = false
    /// Hashes the compressed bytes as they are read.
    private let hashing: ContentHash.Reading?

    /// Takes over `descriptor`, open for reading `path`; with `hashing`, hashes all its bytes.
    init(descriptor: Int32, path: String, hashing: ContentHash.Reading? = nil) throws(InputError) {
        self.descriptor = descriptor
        self.path = path
        self.hashing = hashing
        hashing?.start(at: 0)
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        input = .allocate(capacity: inputCapacity)
        // 16 + the largest window: a gzip header and trailer around deflate data, nothing else.
        guard inflateInit2_(stream, 16 + MAX_WBITS, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            stream.deallocate()
            input.deallocate()
            close(descriptor)
            throw InputError(path: path, reason: "not valid gzip: zlib cannot start")
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
        input.deallocate()
        close(descriptor)
    }

    /// Reads up to `count` decompressed bytes into `buffer`; 0 at the end of the last member.
    func read(into buffer: UnsafeMutableRawPointer, count: Int) throws(InputError) -> Int {
        let wanted = UInt32(min(count, Int(UInt32.max)))
        stream.pointee.next_out = buffer.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = wanted
        while stream.pointee.avail_out > 0 {
            if !memberStarted {
                try fill(atLeast: 1)
                // Zero bytes after a member are padding (tape blocks, some uploaders), which gzip(1)
                // and Python read past too; anything else must be a member.
                if anyMember { try skipZeros() }
                // An empty file, or the end after a whole member.
                if stream.pointee.avail_in == 0 { break }
                try startMember()
            }
            if stream.pointee.avail_in == 0 { try fill(atLeast: 1) }
            switch inflate(stream, Z_NO_FLUSH) {
            case Z_OK:
                break
            case Z_STREAM_END:
                memberStarted = false
                memberEnded = true
            case Z_BUF_ERROR where stream.pointee.avail_in == 0 && fileEnded:
                throw InputError(path: path, reason: "not valid gzip: the file is truncated")
            case Z_BUF_ERROR:
                break
            case Z_MEM_ERROR:
                throw InputError(path: path, reason: "out of memory inflating gzip")
            default:
                let message = stream.pointee.msg.map { String(cString: $0) } ?? "corrupt data"
                throw InputError(path: path, reason: "not valid gzip: \(message)")
            }
        }
        return Int(wanted - stream.pointee.avail_out)
    }

    /// Starts the next member: its first bytes must be gzip's magic number.
    private func startMember() throws(InputError) {
        try fill(atLeast: 2)
        let available = Int(stream.pointee.avail_in)
        guard available >= 2, let next = stream.pointee.next_in, next[0] == 0x1F, next[1] == 0x8B else {
            throw InputError(path: path, reason: anyMember ? "not valid gzip: data after the compressed stream" : "not valid gzip: no gzip header")
        }
        if memberEnded { inflateReset(stream) }
        memberStarted = true
        anyMember = true
    }

    /// Consumes zero bytes until another byte or the end of the file.
    private func skipZeros() throws(InputError) {
        while stream.pointee.avail_in > 0, let next = stream.pointee.next_in, next[0] == 0 {
            stream.pointee.next_in = next + 1
            stream.pointee.avail_in -= 1
            if stream.pointee.avail_in == 0 { try fill(atLeast: 1) }
        }
    }

    /// Reads more of the file until `wanted` unread bytes are buffered, or the file ends.
    private func fill(atLeast wanted: Int) throws(InputError) {
        while Int(stream.pointee.avail_in) < wanted, !fileEnded {
            let kept = Int(stream.pointee.avail_in)
            if kept > 0, let next = stream.pointee.next_in, next != input { memmove(input, next, kept) }
            let count = try InputFile.read(descriptor, into: input + kept, count: inputCapacity - kept, path: path)
            if count == 0 { fileEnded = true }
            hashing?.add(input + kept, count: count)
            stream.pointee.next_in = input
            stream.pointee.avail_in = UInt32(kept + count)
        }
    }
}
