/// Rows read in key order come in runs of one key: the first row of each run is the one a reader
/// keeps (an order's first line, a user's first sign-up, each id once). Tells, by the key's bytes,
/// whether a row starts a run, holding one key's bytes in a buffer reused for every run.
struct KeyRuns {
    private var key: [UInt8] = []
    private var started = false

    /// Whether `key` differs from the key of the row before (the first row's always does).
    mutating func starts(_ key: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !started || !key.elementsEqual(self.key) else { return false }
        started = true
        self.key.removeAll(keepingCapacity: true)
        self.key.append(contentsOf: key)
        return true
    }

    /// Forgets the last key: the next row starts a run.
    mutating func reset() { started = false }
}
