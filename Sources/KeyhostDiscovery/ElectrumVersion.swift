/// A protocol version such as 1.4 or 1.4.2, compared part by part.
struct ElectrumVersion: Comparable {
    let parts: [Int]

    init?(_ text: String) {
        let pieces = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (2...4).contains(pieces.count) else { return nil }
        var parts = [Int]()
        for piece in pieces {
            guard (1...6).contains(piece.count), piece.allSatisfy(\.isASCII), let n = Int(piece), n >= 0 else { return nil }
            parts.append(n)
        }
        self.parts = parts
    }

    /// Missing parts count as 0: 1.4 and 1.4.0 are the same version.
    static func == (a: ElectrumVersion, b: ElectrumVersion) -> Bool { !(a < b) && !(b < a) }

    static func < (a: ElectrumVersion, b: ElectrumVersion) -> Bool {
        for i in 0..<max(a.parts.count, b.parts.count) {
            let x = i < a.parts.count ? a.parts[i] : 0, y = i < b.parts.count ? b.parts[i] : 0
            if x != y { return x < y }
        }
        return false
    }
}
