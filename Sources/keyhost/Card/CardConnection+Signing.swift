import KeyhostCard
import KeyhostCrypto
import KeyhostRecord
import KeyhostServices

/// SIGN for `keyhost card sign` (ECDSA with a path, PIN-less, BIP340 Schnorr) and SET PINLESS PATH.
extension CardConnection {
    /// SIGN (ECDSA) the 32-byte `digest` with the key at `path`: `{path, public_key, r, s, v, recovery_id, compact, der, rsv}`.
    public func sign(digest: [UInt8], path: KeyPath) throws -> Record {
        try frontEnd.mapping("SIGN") { Self.ecdsaRecord(try card.sign(digest: digest, mode: .derive(path)), path: path) }
    }

    /// SIGN P1 03 (3.x): the key at the card's PIN-less path signs, without secure channel or PIN, as the applet allows
    /// (a connection opened `.selected` sends it in clear). The same fields as `sign`, `path` null: no command reads
    /// the PIN-less path back.
    public func signPinless(digest: [UInt8]) throws -> Record {
        try requirePinless("sign --pinless")
        return try frontEnd.mapping("SIGN") { Self.ecdsaRecord(try card.sign(digest: digest, mode: .pinless), path: nil) }
    }

    /// SIGN with BIP340 Schnorr (4.x) by the key at `path`, checked against that key before it is returned.
    /// `{path, signature (64 bytes), public_key (33), x_only (32)}`, as Lua's `s:sign_schnorr`.
    public func signSchnorr(digest: [UInt8], path: KeyPath) throws -> Record {
        try requireSchnorr()
        return try frontEnd.mapping("SIGN") {
            let signed = try card.signSchnorr(digest: digest, path: path)
            let xOnly = signed.publicKey.xOnly
            guard xOnly.verify(schnorr: signed.signature, message: digest) else {
                throw KeycardError.invalidResponse(.sign, "the BIP340 signature does not verify under the public key the card returned")
            }
            return Record.object([("path", .string(path.description)), ("signature", .bytes(signed.signature)),
                                  ("public_key", .bytes(signed.publicKey.compressed)), ("x_only", .bytes(xOnly.bytes))])
        }
    }

    /// SET PINLESS PATH (3.x, PIN verified): from now on SIGN P1 03 signs with the key at `path`, without PIN; nil unsets it.
    /// `{pinless_path}` (null once unset).
    public func setPinlessPath(_ path: KeyPath?) throws -> Record {
        try requirePinless("set-pinless-path")
        return try frontEnd.mapping("SET PINLESS PATH") {
            if let path, path.source != .master || path.components.isEmpty {
                throw KeycardError.invalidArgument("a PIN-less path goes from the master key to a key below it (m/…); the master key itself cannot be PIN-less")
            }
            try card.setPinlessPath(path?.components ?? [])
            return Record.object([("pinless_path", .string(path?.description))])
        }
    }

    /// Refuses PIN-less signing on a 4.x card right after SELECT, before any secret is asked: 4.0 dropped SET PINLESS PATH.
    public func requirePinless(_ command: String) throws {
        guard !isV1 else { return }
        throw CardServiceError(kind: "unsupported", "applet \(selectInfo.version) has no PIN-less path (4.x dropped SET PINLESS PATH): "
                               + "keyhost card \(command) is for applet 3.x cards; on this one sign with --path and the PIN")
    }

    /// Refuses Schnorr signing on a 3.x card right after SELECT, before any secret is asked.
    public func requireSchnorr() throws {
        guard isV1 else { return }
        throw CardServiceError(kind: "unsupported", "applet \(selectInfo.version) signs with ECDSA only: BIP340 Schnorr signatures "
                               + "(keyhost card sign --schnorr) need an applet 4.x card")
    }

    /// The fields of an ECDSA signature, as Lua's `s:sign` table plus the path.
    static func ecdsaRecord(_ signed: KeycardSignature, path: KeyPath?) -> Record {
        let signature = signed.signature
        return Record.object([
            ("path", .string(path?.description)), ("public_key", .bytes(signed.publicKey.compressed)),
            ("r", .bytes(signature.r)), ("s", .bytes(signature.s)),
            ("v", .integer(27 + signature.recoveryID)), ("recovery_id", .integer(signature.recoveryID)),
            ("compact", .bytes(signature.r + signature.s)), ("der", .bytes(signature.signature.der)),
            ("rsv", .bytes(signature.rsv)),
        ])
    }
}
