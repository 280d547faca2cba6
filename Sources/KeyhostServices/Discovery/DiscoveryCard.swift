import KeyhostCard
import KeyhostCrypto
import KeyhostDiscovery

/// Exports account keys from a card signer for discovery: ONE extended export per account key path.
///
/// An xpub also carries its parent's fingerprint, which needs the parent's public key; accounts share their
/// parent (m/84'/0' for every BIP84 account), so that key is exported once per job and kept, not once per
/// account. The master key's public key gives the descriptors' origin fingerprint: one more. A job over N accounts
/// therefore sends N + 2 exports.
public final class CardAccountExporter {
    public let signer: CardSigner
    /// Keys a job's checkpoints to the wallet on the card (a Keycard's key UID).
    private let identity: [UInt8]
    private var parentKeys: [[UInt32]: PublicKey] = [:]
    /// Export commands sent.
    public private(set) var exportCommands = 0

    public init(signer: CardSigner, identity: [UInt8]) {
        self.signer = signer
        self.identity = identity
    }

    /// A Keycard's exporter, its identity the key UID SELECT gave.
    public convenience init(card: KeycardCommandSet) {
        let info = card.applicationInfo
        self.init(signer: KeycardSigner(card: card), identity: info?.keyUID ?? info?.instanceUID ?? [])
    }

    /// The xpub (mainnet version bytes; the engine re-serializes in the scheme's family) at `path`.
    public func export(_ path: DerivationPath) throws -> String {
        exportCommands += 1
        return try CardExtendedKey.node(signer, components: path.indexes) { [self] parent in
            if let cached = parentKeys[parent] { return cached }
            let fetched = try CardExtendedKey.exportedKey(signer, components: parent)
            exportCommands += 1
            parentKeys[parent] = fetched
            return fetched
        }.extendedPublicKey(.xpub)
    }

    /// A key source over this card; `identity` keys checkpoints to the wallet on the card.
    public func keySource(label: String) throws -> CardKeySource {
        let name = identity.isEmpty ? "unknown" : Hex.encode(identity)
        return CardKeySource(identity: name, label: label + (identity.isEmpty ? "" : ", key \(Hex.encode(identity.prefix(4)))…"),
                             export: { [self] path in try self.export(path) }, masterFingerprint: { [self] in try self.masterFingerprint() })
    }

    /// The master key's fingerprint (one export of the public key at m), for descriptors' key origins.
    public func masterFingerprint() throws -> UInt32? {
        let key = try CardExtendedKey.exportedKey(signer, components: [])
        exportCommands += 1
        return key.fingerprint
    }
}

/// A card opened for `keyhost discover --card` (see `SigningCard`), with a key source that exports one key per account.
public final class DiscoveryCardConnection {
    private let card: SigningCard
    private let exporter: CardAccountExporter
    public let keySource: CardKeySource
    public var readerName: String { card.readerName }

    /// The card `request` names, opened by `CardOpener` for `frontEnd` (ready to sign: a Keycard's secure channel open
    /// and PIN verified from `pin`, else the front end's input), with a key source over it.
    public init(_ request: CardOpenRequest, readers: [CardReaderSource], frontEnd: CardFrontEnd, pin: [UInt8]? = nil,
                pairingPassword: [UInt8]? = nil) throws {
        let card = try CardOpener.openSigner(request, readers: readers, frontEnd: frontEnd, pin: pin, pairingPassword: pairingPassword)
        self.card = card
        do {
            exporter = CardAccountExporter(signer: card.signer, identity: try card.mapping(nil) { try card.identity() })
            keySource = try exporter.keySource(label: "card in \(card.readerName)")
        } catch {
            card.close()
            throw error
        }
    }

    /// APDUs sent so far (selection, secure channel, PIN included).
    public var apduCount: Int { card.apduCount }
    /// Key export commands sent so far (one per account, and one for the accounts' shared parent).
    public var exportCommands: Int { exporter.exportCommands }

    /// Ends the card's session.
    public func close() { card.close() }
}
