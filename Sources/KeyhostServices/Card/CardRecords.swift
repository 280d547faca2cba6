import KeyhostCard
import KeyhostCrypto
import KeyhostRecord

/// The card results both front ends print: Lua's `s:info()` / `s:status()` and `keyhost card info` / `status --json`
/// return these records, so their fields cannot drift apart. Absent values are null (JSON prints them, Lua drops them).
public enum CardRecords {
    /// The capability names SELECT announces.
    public static func capabilityNames(_ caps: Capabilities) -> [String] {
        let names: [(Capabilities, String)] = [
            (.secureChannel, "secure_channel"), (.keyManagement, "key_management"),
            (.credentialsManagement, "credentials_management"), (.ndef, "ndef"), (.factoryReset, "factory_reset"),
        ]
        return names.filter { caps.contains($0.0) }.map(\.1)
    }

    /// What SELECT told, and whether the identity certificate of a 4.x card chains to a trusted CA:
    /// `{reader, initialized, applet, secure_channel, instance_uid, secure_channel_public_key, free_pairing_slots,
    /// key_uid, has_master_key, capabilities, pin_retries, identity_public_key, identity_ca_key, identity_trusted}`.
    /// `applet` is null while a 3.x card is blank (it does not say); `pin_retries` and the identity fields are 4.x's.
    public static func info(_ info: ApplicationInfo, reader: String, trust: CardTrust) -> Record {
        let knownVersion = info.version.major != 0 || info.version.minor != 0
        let v2 = info.secureChannelVersion == .v2
        return .object([
            ("reader", .string(reader)),
            ("initialized", .bool(info.isInitialized)),
            ("applet", .string(knownVersion ? "\(info.version)" : nil)),
            ("secure_channel", .integer(Int(info.secureChannelVersion.rawValue))),
            ("instance_uid", .bytes(info.instanceUID)),
            ("secure_channel_public_key", .bytes(info.secureChannelPublicKey?.uncompressed)),
            ("free_pairing_slots", .integer(info.freePairingSlots)),
            ("key_uid", .bytes(info.keyUID)),
            ("has_master_key", .bool(info.hasMasterKey)),
            ("capabilities", .strings(capabilityNames(info.capabilities))),
            ("pin_retries", .integer(v2 && info.isInitialized ? info.pinRetries : nil)),
            ("identity_public_key", .bytes(info.identityCertificate?.identityKey.compressed)),
            ("identity_ca_key", .bytes(trust.caKey)),
            ("identity_trusted", v2 ? .bool(trust.isTrusted) : .null),
        ])
    }

    /// GET STATUS, with what SELECT told: `{applet, instance_uid, key_uid, pin_retries, puk_retries, has_master_key, path}`.
    /// `path` is the current key's, asked with GET STATUS P1 01 only where it means something: on 3.x, with a key
    /// loaded (4.0 has no current key: it dropped DERIVE KEY; a 3.x card without a key has no path to tell). Needs the
    /// secure channel open, not the PIN.
    public static func status(_ card: KeycardCommandSet) throws -> Record {
        let status = try card.getStatus()
        guard let info = card.applicationInfo else { throw KeycardError.invalidResponse(.getStatus, "no SELECT answer to go with") }
        let path: Record = info.secureChannelVersion == .v1 && status.hasMasterKey ? .string(try card.getCurrentPath().description) : .null
        return .object([
            ("applet", .string("\(info.version)")),
            ("instance_uid", .bytes(info.instanceUID)),
            ("key_uid", .bytes(info.keyUID)),
            ("pin_retries", .integer(status.pinRetries)),
            ("puk_retries", .integer(status.pukRetries)),
            ("has_master_key", .bool(status.hasMasterKey)),
            ("path", path),
        ])
    }
}

extension CardRecords {
    /// A card just initialised, as `s:init{}` returns it and `keyhost card init --json` prints it:
    /// `{applet, instance_uid, identity_public_key, secure_channel, pairing_index}`; `pairing_index` is the slot this
    /// host paired in right after INIT (the command line pairs a 3.x card at once; Lua's `s:init` does not: nil).
    public static func initialized(_ info: ApplicationInfo, pairingIndex: Int?) -> Record {
        .object([
            ("applet", .string("\(info.version)")),
            ("instance_uid", .bytes(info.instanceUID)),
            ("identity_public_key", .bytes(info.identityCertificate?.identityKey.compressed)),
            ("secure_channel", .integer(Int(info.secureChannelVersion.rawValue))),
            ("pairing_index", .integer(pairingIndex)),
        ])
    }

    /// A pairing of this host with a 3.x card, as `keyhost card pair --json` prints it and `s:pair{}` returns it:
    /// `{instance_uid, pairing_index, new_pairing}` (Lua adds the pairing itself, `index` and `key`, for
    /// `s:open_secure_channel{}`).
    public static func paired(instanceUID: [UInt8]?, index: Int, new: Bool) -> Record {
        .object([("instance_uid", .bytes(instanceUID)), ("pairing_index", .integer(index)), ("new_pairing", .bool(new))])
    }

    /// EXPORT KEY of `path` (nil: the current key, 3.x) as `option` says, as `s:export_key{}` and `keyhost card
    /// export-key` print it: `{path, public_key, chain_code, xpub}`, and `private_key` for a private export only (so a
    /// public export never carries the field). `xpub` (in `family`; one more EXPORT KEY for the parent's fingerprint)
    /// for an extended export from the master when `xpub`; null otherwise. The public key the card sent must be the
    /// private key's. The private key is the caller's to print where the user asked, and nowhere else.
    public static func exportedKey(_ card: KeycardCommandSet, _ option: ExportOption, path: KeyPath?, family: ExtendedKeyVersion,
                                   xpub wantsXpub: Bool = true) throws -> Record {
        let exported = try card.exportKey(option, path: path)
        if option == .privateAndPublic {
            guard let key = exported.privateKey else { throw KeycardError.invalidResponse(.exportKey, "no private key in the answer") }
            if let given = exported.publicKey, given != key.publicKey {
                throw KeycardError.invalidResponse(.exportKey, "the public key does not belong to the private key")
            }
        }
        guard let key = exported.resolvedPublicKey else { throw KeycardError.invalidResponse(.exportKey, "no public key in the answer") }
        var xpub: String?
        if option == .extendedPublic {
            guard let chainCode = exported.chainCode else { throw KeycardError.invalidResponse(.exportKey, "no chain code in the answer") }
            if wantsXpub, let path, path.source == .master {
                xpub = try CardExtendedKey.serialize(KeycardSigner(card: card), components: path.components, key: key, chainCode: chainCode, family: family)
            }
        }
        var fields: [(String, Record)] = [("path", .string(path?.description)), ("public_key", .bytes(key.compressed)),
                                          ("chain_code", .bytes(exported.chainCode)), ("xpub", .string(xpub))]
        if option == .privateAndPublic { fields.append(("private_key", .bytes(exported.privateKey?.revealedBytes()))) }
        return .object(fields)
    }
}

/// Whether a card's identity certificate (4.x) chains to a certificate authority this host trusts, judged from
/// SELECT's answer alone. That proves nothing about the card holding the identity key (the secure channel's
/// handshake does); it says whether the certificate it shows was issued by someone trusted.
public struct CardTrust: Sendable, Equatable {
    /// The CA key recovered from the certificate; nil without a certificate (3.x) or when none can be recovered.
    public let caKey: [UInt8]?
    /// The certificate chains to one of the trusted CA keys. False for a card without a certificate.
    public let isTrusted: Bool

    /// The trust of `info`'s certificate under `caKeys`.
    public init(_ info: ApplicationInfo, caKeys: [PublicKey]) {
        guard let certificate = info.identityCertificate, let ca = try? certificate.caPublicKey() else {
            caKey = nil
            isTrusted = false
            return
        }
        caKey = ca.compressed
        isTrusted = caKeys.contains(ca)
    }

    /// The trust of the card `card` selected last, under the keys it trusts.
    public init(_ card: KeycardCommandSet, _ info: ApplicationInfo) {
        self.init(info, caKeys: card.trustedCAKeys)
    }
}
