import KeyhostCard
import KeyhostCrypto
import KeyhostRecord

/// The `--json` records of the tap-card commands (`keyhost card tapsigner …`, `card satscard …`); names as cktap's.
public enum TapCardRecords {
    /// What any tap card's status says.
    public static func status(_ status: CKTapStatus) -> Record {
        var fields: [(String, Record)] = [("product", .string(status.product.rawValue)), ("version", .string(status.version)),
                                          ("card_ident", .string(status.cardIdent)), ("testnet", .bool(status.isTestnet)),
                                          ("state", .string(CKTapIdentity.state(status))), ("auth_delay", .integer(Int64(status.authDelay)))]
        if status.isTapsigner {
            fields.append(("path", status.path.map { .string(pathText($0)) } ?? .null))
            fields.append(("num_backups", status.numBackups.map { .integer(Int64($0)) } ?? .null))
        } else {
            fields.append(("active_slot", .integer(Int64(status.activeSlot))))
            fields.append(("num_slots", .integer(Int64(status.numSlots))))
            fields.append(("addr", status.blankedAddress.map { .string($0) } ?? .null))
        }
        return .object(fields)
    }

    /// A TAPSIGNER's derivation (`derive`), proven by the card.
    public static func derivation(_ derivation: CKTapDerivation) -> Record {
        .object([("path", .string(pathText(derivation.path))), ("public_key", .bytes(derivation.publicKey.compressed)),
                 ("chain_code", .bytes(derivation.chainCode)), ("master_public_key", .bytes(derivation.masterPublicKey.compressed)),
                 ("master_fingerprint", .string(fingerprintHex(derivation.masterPublicKey.fingerprint)))])
    }

    /// One SATSCARD slot as `dump` shows it (no private key: that is `unsealed`'s, on request).
    public static func slot(_ slot: CKTapSlot) -> Record {
        .object([("slot", .integer(Int64(slot.slot))), ("state", .string(slot.state.rawValue)),
                 ("address", slot.address.map { .string($0) } ?? .null),
                 ("public_key", slot.publicKey.map { .bytes($0.compressed) } ?? .null), ("tampered", .bool(slot.tampered))])
    }

    /// `m/84'/0'/0'`.
    public static func pathText(_ path: [UInt32]) -> String { CardSignerError.pathText(path) }
}
