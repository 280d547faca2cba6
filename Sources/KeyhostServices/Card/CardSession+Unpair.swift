import KeyhostCard

extension CardSession {
    /// Frees every pairing slot but this session's (v1; needs the PIN verified). UNPAIR of a free slot is harmless,
    /// so indexes are tried upwards until the card refuses the index as out of range.
    public func unpairOthers(_ card: KeycardCommandSet) throws -> [Int] {
        guard let own = card.pairing else { throw KeycardError.notPaired }
        var freed: [Int] = []
        for index in 0..<255 where index != Int(own.index) {
            do {
                try card.unpair(index: UInt8(index))
                freed.append(index)
            } catch KeycardError.incorrectParameters(.unpair, _) {
                break
            }
        }
        return freed
    }
}
