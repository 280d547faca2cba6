import KeyhostCrypto

/// Which key SIGN uses.
public enum SignMode: Equatable, Sendable {
    /// The current key (4.x: the master key).
    case current
    /// A key derived for this signature only.
    case derive(KeyPath)
    /// A derived key that then becomes current (v1).
    case deriveAndMakeCurrent(KeyPath)
    /// The PIN-less path's key (v1); works without PIN and even without a secure channel.
    case pinless
}

extension KeycardCommandSet {
    /// SIGN a 32-byte digest with ECDSA; the result verifies against its public key and carries v.
    public func sign(digest: [UInt8], mode: SignMode = .current) throws -> KeycardSignature {
        guard digest.count == 32 else { throw KeycardError.invalidArgument("SIGN takes a 32-byte digest, got \(digest.count) bytes") }
        let (p1, path) = try signParameters(mode)
        let data = digest + path
        if mode == .pinless && !isSecureChannelOpen {
            return try KeycardSignature(response: sendPlain(.sign, p1: p1, data: data), digest: digest)
        }
        return try KeycardSignature(response: sendSecure(.sign, p1: p1, p2: SigningAlgorithm.ecdsa.rawValue, data: data), digest: digest)
    }

    /// SIGN with BIP340 Schnorr (4.x). `tweak` is added to the (even-y) key first, as for Taproot; zero by default.
    public func signSchnorr(digest: [UInt8], path: KeyPath? = nil, tweak: [UInt8] = [UInt8](repeating: 0, count: 32)) throws -> KeycardSchnorrSignature {
        guard version == .v2 else {
            throw KeycardError.unsupportedForm(.sign, what: "Schnorr (BIP340) signing; it signs with ECDSA only", applet: appletName)
        }
        guard digest.count == 32, tweak.count == 32 else { throw KeycardError.invalidArgument("Schnorr SIGN takes a 32-byte digest and a 32-byte tweak") }
        if let path, path.source != .master { throw Self.absolutePathsOnly(.sign, appletName) }
        return try KeycardSchnorrSignature(response: sendSecure(.sign, p1: 0x01, p2: SigningAlgorithm.schnorrBIP340.rawValue,
                                                                data: digest + tweak + (path?.encoded ?? [])))
    }

    /// GET CHALLENGE (4.x): `length` (1...245) random bytes from the card.
    public func getChallenge(length: Int = 32) throws -> [UInt8] {
        try requireV2(.getChallenge)
        guard (1...245).contains(length) else { throw KeycardError.invalidArgument("GET CHALLENGE length must be 1...245") }
        return try sendSecure(.getChallenge, p1: UInt8(length))
    }

    private func signParameters(_ mode: SignMode) throws -> (UInt8, [UInt8]) {
        if version == .v2 {
            switch mode {
            case .current: return (0x01, [])
            case .derive(let path) where path.source == .master: return (0x01, path.encoded)
            case .derive, .deriveAndMakeCurrent: throw Self.absolutePathsOnly(.sign, appletName)
            case .pinless: throw KeycardError.unsupportedForm(.sign, what: "a PIN-less path (there is no SET PINLESS PATH on 4.x)", applet: appletName)
            }
        }
        switch mode {
        case .current: return (0x00, [])
        case .derive(let path): return (0x01 | path.source.rawValue, path.encoded)
        case .deriveAndMakeCurrent(let path): return (0x02 | path.source.rawValue, path.encoded)
        case .pinless: return (0x03, [])
        }
    }
}
