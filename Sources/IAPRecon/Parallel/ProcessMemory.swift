import CSQLite

/// What the process does so that freed memory goes back to the system, without paying for the same
/// pages again and again: the peak of a run is then its largest stage's, not the sum of what every
/// stage once held (with glibc; a no-op elsewhere).
public enum ProcessMemory {
    /// Sets the heap's policy; call once, before the work starts. Blocks of 1 MiB or more (sort
    /// buffers, big arrays as they grow) get pages of their own and give them back when freed; the
    /// heap grows and shrinks in steps of `heapPadBytes`, so a stage's blocks reuse pages rather than
    /// fault them in again, while what it keeps stays bounded.
    public static func configureHeap() {
        iaprecon_map_allocations_from(Int32(mappedBlockBytes))
        iaprecon_pad_heap_by(Int32(heapPadBytes))
    }

    /// The size from which a block has pages of its own (`configureHeap`).
    static let mappedBlockBytes = 1 << 20

    /// What each heap grows by beyond a request, and keeps when trimmed: a few large blocks' worth.
    static let heapPadBytes = 16 << 20

    /// The bytes the heap has handed out and not had back (glibc's count, which includes the blocks
    /// with pages of their own); nil where the C library does not say.
    static var heapBytesInUse: Int? {
        let bytes = iaprecon_heap_bytes(0)
        return bytes < 0 ? nil : bytes
    }

    /// Gives back the smaller freed blocks the heap keeps for reuse; between stages, which free
    /// nearly everything they allocated, and after a phase of one that did.
    static func releaseFreed() {
        iaprecon_release_freed_heap()
    }
}
