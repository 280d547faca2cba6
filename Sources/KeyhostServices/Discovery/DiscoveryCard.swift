import KeyhostCard
import KeyhostCrypto
import KeyhostDiscovery

/// Exports account keys from a Keycard for discovery: ONE EXPORT KEY (extended public) per account key path.
///
/// An xpub also carries its parent's fingerprint, which needs the parent's public key; accounts share their
/// parent (m/84'/0' for every BIP84 account), so that key is exported once per job and kept, not once per
/// account. The master key's public key gives the descriptors' origin fingerprint: one more. A job over N accounts
/// therefore sends N + 2 EXPORT KEY commands.
public final class CardAccountExporter {
    public let card: KeycardCommandSet
    private var parentKeys: [[UInt32]: PublicKey] = [:]
    /// EXPORT KEY commands sent.
    public private(set) var exportCommands = 0

    public init(card: KeycardCommandSet) { self.card = card }

    /// The xpub (mainnet version bytes; the engine re-serializes in the scheme's family) at `path`.
    public func export(_ path: DerivationPath) throws -> String {
        exportCommands += 1
        return try CardExtendedKey.node(card, components: path.indexes) { [self] parent in
            if let cached = parentKeys[parent] { return cached }
            let fetched = try CardExtendedKey.exportedKey(card, components: parent)
            exportCommands += 1
            parentKeys[parent] = fetched
            return fetched
        }.extendedPublicKey(.xpub)
    }

    /// A key source over this card; `identity` keys checkpoints to the wallet on the card.
    public func keySource(label: String) throws -> CardKeySource {
        let info = card.applicationInfo
        let uid = info?.keyUID ?? info?.instanceUID ?? []
        let identity = uid.isEmpty ? "unknown" : Hex.encode(uid)
        return CardKeySource(identity: identity, label: label + (uid.isEmpty ? "" : ", key \(Hex.encode(uid.prefix(4)))…"),
                             export: { [self] path in try self.export(path) }, masterFingerprint: { [self] in try self.masterFingerprint() })
    }

    /// The master key's fingerprint (one EXPORT KEY of the public key at m), for descriptors' key origins.
    public func masterFingerprint() throws -> UInt32? {
        guard let key = try card.exportKey(.publicOnly, path: try KeyPath(source: .master, components: [])).resolvedPublicKey else { return nil }
        exportCommands += 1
        return key.fingerprint
    }
}

/// A card opened for `keyhost discover --card` (see `CardConnection`), with a key source that exports one key
/// per account.
public final class DiscoveryCardConnection {
    private let connection: CardConnection
    private let exporter: CardAccountExporter
    public let keySource: CardKeySource
    public var readerName: String { connection.readerName }

    /// - Parameters:
    ///   - reader: "virtual", a reader name (or a unique part of one), a number counted from 0 as `card list` prints it, or nil/"" for the first real reader.
    ///   - cardState: for the virtual reader, the state file of a card set up before (`card.open{reader="virtual", state=…}`).
    /// `trustedCAKeys` are added to Status' own certificate authorities (4.x cards' identity certificates).
    public init(reader: String?, cardState: String?, readers: [CardReaderSource], pin: [UInt8]?, pairingPassword: [UInt8]?,
                trustedCAKeys: [PublicKey] = []) throws {
        connection = try CardConnection(reader: reader, cardState: cardState, readers: readers, pin: pin, pairingPassword: pairingPassword,
                                        trustedCAKeys: trustedCAKeys, virtualHint: "--card virtual --card-state FILE")
        exporter = CardAccountExporter(card: connection.card)
        keySource = try exporter.keySource(label: "card in \(connection.readerName)")
    }

    /// APDUs sent so far (SELECT, secure channel, VERIFY PIN included).
    public var apduCount: Int { connection.apduCount }
    /// EXPORT KEY commands sent so far (one per account, and one for the accounts' shared parent).
    public var exportCommands: Int { exporter.exportCommands }

    /// Drops the secure channel.
    public func close() { connection.close() }
}
