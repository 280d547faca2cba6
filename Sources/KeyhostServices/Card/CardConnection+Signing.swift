import KeyhostCard
import KeyhostCrypto
import KeyhostRecord

/// SIGN for `keyhost card sign`.
extension CardConnection {
    /// SIGN (ECDSA) the 32-byte `digest` with the key at `path`: `{path, public_key, r, s, v, recovery_id, compact, der, rsv}`.
    public func sign(digest: [UInt8], path: KeyPath) throws -> Record {
        try CardServiceError.mappingForCommandLine("SIGN") {
            let signed = try card.sign(digest: digest, mode: .derive(path))
            let signature = signed.signature
            return Record.object([
                ("path", .string(path.description)), ("public_key", .bytes(signed.publicKey.compressed)),
                ("r", .bytes(signature.r)), ("s", .bytes(signature.s)),
                ("v", .integer(27 + signature.recoveryID)), ("recovery_id", .integer(signature.recoveryID)),
                ("compact", .bytes(signature.r + signature.s)), ("der", .bytes(signature.signature.der)),
                ("rsv", .bytes(signature.rsv)),
            ])
        }
    }
}
