import Foundation

/// How SQLite's BINARY collation orders text: byte by byte, a prefix before what it starts.
/// Every comparison of stored keys and ids in place, without a `String`, orders them so.
enum BinaryOrder {
    /// Negative when `a` sorts before `b`, 0 when they are the same bytes, positive after.
    @inline(__always)
    static func compare(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        let common = min(a.count, b.count)
        if common > 0, let first = a.baseAddress, let second = b.baseAddress {
            let order = Int(memcmp(first, second, common))
            if order != 0 { return order }
        }
        return a.count - b.count
    }
}
