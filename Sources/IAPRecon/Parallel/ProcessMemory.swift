import CSQLite

/// What the process does so that freed memory goes back to the system: the peak of a run is then
/// its largest stage's, not the sum of what every stage once held (with glibc; a no-op elsewhere).
public enum ProcessMemory {
    /// Blocks of 1 MiB or more (sort buffers, big arrays as they grow) get pages of their own and
    /// give them back when freed. Call once, before the work starts.
    public static func returnLargeBlocksWhenFreed() {
        iaprecon_map_allocations_from(Int32(mappedBlockBytes))
    }

    /// The size from which a block has pages of its own (`returnLargeBlocksWhenFreed`).
    static let mappedBlockBytes = 1 << 20

    /// Gives back the smaller freed blocks the heap keeps for reuse; between stages, which free
    /// nearly everything they allocated, and after a phase of one that did.
    static func releaseFreed() {
        iaprecon_release_freed_heap()
    }
}
