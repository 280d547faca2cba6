/// A path from the master split the way a TAPSIGNER reaches it: `derive` to the hardened prefix (at most 8
/// levels), then unhardened levels below it (`sign` takes at most 2 as its subpath; public keys are derived here).
public struct TapsignerPath: Equatable, Sendable {
    /// What `derive` is given: the leading hardened levels.
    public let derived: [UInt32]
    /// The unhardened levels after them.
    public let below: [UInt32]

    /// Splits `path`; throws `invalid_path` naming what the card can do when no TAPSIGNER reaches it.
    public init(_ path: [UInt32]) throws {
        let prefix = Array(path.prefix { $0 & CKTap.hardened != 0 })
        let rest = Array(path.dropFirst(prefix.count))
        if let hardened = rest.first(where: { $0 & CKTap.hardened != 0 }) {
            throw CardSignerError(kind: "invalid_path", "a TAPSIGNER derives hardened levels first and unhardened ones after them; "
                                  + "\(CardSignerError.pathText(path)) has the hardened level \(CardSignerError.pathText([hardened]).dropFirst(2)) "
                                  + "after an unhardened one: use a path like m/84'/0'/0'/0/5")
        }
        guard prefix.count <= CKTap.maxDerivePathDepth else {
            throw CardSignerError(kind: "invalid_path", "a TAPSIGNER derives at most \(CKTap.maxDerivePathDepth) hardened levels; "
                                  + "\(CardSignerError.pathText(path)) has \(prefix.count): use a shorter path")
        }
        derived = prefix
        below = rest
    }

    /// Refuses a signing path with more unhardened levels than `sign` takes.
    public func checkSignable(_ path: [UInt32]) throws {
        guard below.count <= CKTap.maxSubpathDepth else {
            throw CardSignerError(kind: "invalid_path", "a TAPSIGNER signs at most \(CKTap.maxSubpathDepth) unhardened levels below the path it "
                                  + "derived to; \(CardSignerError.pathText(path)) has \(below.count) below \(CardSignerError.pathText(derived)): "
                                  + "sign at a path like m/84'/0'/0'/0/5")
        }
    }
}
