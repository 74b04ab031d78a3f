/// A deterministic pseudo-random stream: xoshiro256** seeded through SplitMix64.
///
/// Every app user gets its own stream, derived from the run's seed and the user's
/// slot number, so one user's data never depends on how many draws another user
/// made, and the same options always give byte-identical files. Probabilities are
/// plain IEEE arithmetic (no `exp`/`log`), which is the same on every machine.
struct SeededRandom {
    private var s0: UInt64
    private var s1: UInt64
    private var s2: UInt64
    private var s3: UInt64

    init(seed: UInt64, stream: UInt64) {
        var state = seed ^ (stream &* 0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03
        func splitMix() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        s0 = splitMix()
        s1 = splitMix()
        s2 = splitMix()
        s3 = splitMix()
    }

    mutating func next() -> UInt64 {
        let result = ((s1 &* 5) << 7 | (s1 &* 5) >> 57) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = s3 << 45 | s3 >> 19
        return result
    }

    /// A number in `0..<count` (`count` > 0).
    mutating func below(_ count: Int) -> Int {
        Int(truncatingIfNeeded: next().multipliedFullWidth(by: UInt64(count)).high)
    }

    /// A number in `lower...upper`.
    mutating func int(_ lower: Int, _ upper: Int) -> Int {
        upper <= lower ? lower : lower + below(upper - lower + 1)
    }

    /// A number in `lower...upper`.
    mutating func int64(_ lower: Int64, _ upper: Int64) -> Int64 {
        guard upper > lower else { return lower }
        let span = UInt64(upper - lower) &+ 1
        if span == 0 { return lower &+ Int64(bitPattern: next()) }
        return lower + Int64(next().multipliedFullWidth(by: span).high)
    }

    /// A uniform number in `[0, 1)`.
    mutating func unit() -> Double {
        Double(next() >> 11) * 0x1p-53
    }

    mutating func chance(_ probability: Double) -> Bool {
        unit() < probability
    }

    mutating func pick<Element>(_ elements: [Element]) -> Element {
        elements[below(elements.count)]
    }

    /// An index drawn with the given integer weights.
    mutating func weighted(_ weights: [Int]) -> Int {
        var total = 0
        for weight in weights { total += weight }
        var draw = below(max(total, 1))
        for (index, weight) in weights.enumerated() {
            if draw < weight { return index }
            draw -= weight
        }
        return weights.count - 1
    }
}
