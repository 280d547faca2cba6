import Foundation
import KeyhostCard
import KeyhostCrypto
import KeyhostDiscovery

/// Exports account keys from a Keycard for discovery: ONE EXPORT KEY (extended public) per account key path.
///
/// An xpub also carries its parent's fingerprint, which needs the parent's public key; accounts share their
/// parent (m/84'/0' for every BIP84 account), so that key is exported once per job and kept, not once per
/// account. A job over N accounts therefore sends N + 1 EXPORT KEY commands.
final class CardAccountExporter {
    let card: KeycardCommandSet
    private var parentKeys: [[UInt32]: PublicKey] = [:]
    /// EXPORT KEY commands sent.
    private(set) var exportCommands = 0

    init(card: KeycardCommandSet) { self.card = card }

    /// The xpub (mainnet version bytes; the engine re-serializes in the scheme's family) at `path`.
    func export(_ path: DerivationPath) throws -> String {
        let components = path.indexes
        let exported = try card.exportKey(.extendedPublic, path: try KeyPath(source: .master, components: components))
        exportCommands += 1
        guard let key = exported.resolvedPublicKey, let chainCode = exported.chainCode else {
            throw KeycardError.invalidResponse(.exportKey, "no extended public key for \(path)")
        }
        var fingerprint: UInt32 = 0
        var childNumber: UInt32 = 0
        if let last = components.last {
            childNumber = last
            let parent = Array(components.dropLast())
            let parentKey: PublicKey
            if let cached = parentKeys[parent] {
                parentKey = cached
            } else {
                guard let fetched = try card.exportKey(.publicOnly, path: try KeyPath(source: .master, components: parent)).resolvedPublicKey else {
                    throw KeycardError.invalidResponse(.exportKey, "no public key for the parent of \(path)")
                }
                exportCommands += 1
                parentKeys[parent] = fetched
                parentKey = fetched
            }
            fingerprint = Hash.hash160(parentKey.compressed).prefix(4).reduce(0) { $0 << 8 | UInt32($1) }
        }
        var data = bigEndianBytes(ExtendedKeyVersion.xpub.publicVersion)
        data.append(UInt8(components.count))
        data += bigEndianBytes(fingerprint)
        data += bigEndianBytes(childNumber)
        data += chainCode
        data += key.compressed
        return Base58.encodeCheck(data)
    }

    /// A key source over this card; `identity` keys checkpoints to the wallet on the card.
    func keySource(label: String) throws -> CardKeySource {
        let info = card.applicationInfo
        let uid = info?.keyUID ?? info?.instanceUID ?? []
        let identity = uid.isEmpty ? "unknown" : Hex.encode(uid)
        return CardKeySource(identity: identity, label: label + (uid.isEmpty ? "" : ", key \(Hex.encode(uid.prefix(4)))…"),
                             export: { [self] path in try self.export(path) })
    }
}

/// Counts the APDUs that pass (for reports and the benchmark).
final class CountingChannel: CardChannel {
    let underlying: CardChannel
    private(set) var count = 0
    init(_ underlying: CardChannel) { self.underlying = underlying }
    func transmit(_ apdu: CommandAPDU) throws -> ResponseAPDU {
        count += 1
        return try underlying.transmit(apdu)
    }
}

/// A card opened for `keyhost discover --card`: connected, secure channel open, PIN verified, with a key
/// source that exports one key per account. Secrets come from the given bytes, else `KEYHOST_PIN` /
/// `KEYHOST_PAIRING_PASSWORD`, else a prompt on the terminal; pairings live in the usual pairing store.
public final class DiscoveryCardConnection {
    private let session: CardSessionObject
    private let counter: CountingChannel
    private let exporter: CardAccountExporter
    public let keySource: CardKeySource
    public let readerName: String

    /// - Parameters:
    ///   - reader: "virtual", a reader name (or a unique part of one), a 1-based number, or nil/"" for the first real reader.
    ///   - cardState: for the virtual reader, the state file of a card set up before (`card.open{reader="virtual", state=…}`).
    /// `trustedCAKeys` are added to Status' own certificate authorities (4.x cards' identity certificates).
    public init(reader: String?, cardState: String?, readers: [CardReaderSource], pin: [UInt8]?, pairingPassword: [UInt8]?,
                trustedCAKeys: [PublicKey] = []) throws {
        let wanted = (reader ?? "").trimmingCharacters(in: .whitespaces)
        var base: CardChannel
        var virtualCard: SoftKeycard?
        let isVirtual = wanted.lowercased() == CardModule.virtualReader
        if isVirtual {
            let card = try cardCall(nil) { try VirtualCards.open(state: cardState, options: SoftKeycardOptions(), appletGiven: false) }
            virtualCard = card
            base = card
            readerName = CardModule.virtualReader
        } else {
            if cardState != nil { throw DiscoverySetupError("--card-state is for the virtual card only (--card virtual)") }
            let list = try cardCall(nil) { try CardModule.readerList(readers) }.filter { $0.source != nil }
            let names = list.map { "\"\($0.name)\"" }.joined(separator: ", ")
            let entry: (name: String, source: CardReaderSource?)
            if wanted.isEmpty {
                guard let first = list.first else {
                    throw DiscoverySetupError("no card reader found; connect one, or use --card virtual --card-state FILE for the software card")
                }
                entry = first
            } else if let number = Int64(wanted) {
                guard let numbered = CardModule.reader(number: number, in: list) else {
                    throw DiscoverySetupError(CardModule.noReaderNumber(number, in: list))
                }
                entry = numbered
            } else if let exact = list.first(where: { $0.name == wanted }) {
                entry = exact
            } else {
                let matches = list.filter { $0.name.lowercased().contains(wanted.lowercased()) }
                guard matches.count == 1 else {
                    throw DiscoverySetupError("\(matches.isEmpty ? "no reader is called" : "several readers match") \"\(wanted)\"; readers: "
                        + (names.isEmpty ? "none (or --card virtual)" : names))
                }
                entry = matches[0]
            }
            readerName = entry.name
            base = try cardCall(nil) { try entry.source!.connect(reader: entry.name, options: CardConnectOptions()) }
        }
        counter = CountingChannel(base)
        base = counter
        var tracer: TracingChannel?
        if let plaintext = CardModule.environmentTrace() {
            let tracing = TracingChannel(base, showsPlaintext: plaintext)
            tracer = tracing
            base = tracing
        }
        var trusted = IdentityCertificate.defaultCAKeys + trustedCAKeys
        if isVirtual { trusted.append(SoftKeycard.testCAKey().publicKey) }
        let card = KeycardCommandSet(channel: base, random: SystemRandom(), trustedCAKeys: trusted)
        let store = PairingStore(isVirtual && cardState == nil ? .memory : .file(PairingStore.defaultPath()))
        let name = readerName
        let object = CardSessionObject(readerName: name, card: card, virtualCard: virtualCard, recorder: nil, recordPath: nil,
                                       tracer: tracer, store: store)
        let info = try cardCall("SELECT") { try object.select(card) }
        guard info.isInitialized else {
            throw DiscoverySetupError(isVirtual
                ? "the virtual card is blank: give --card-state FILE of a software card set up with keyhost.card (init, load_seed)"
                : "the card in \(name) is not initialised; set it up first")
        }
        guard info.hasMasterKey else { throw DiscoverySetupError("the card in \(name) has no key loaded; load or generate one first") }
        _ = try cardCall(nil) { try object.auto(card, pin: pin, password: pairingPassword) }
        session = object
        exporter = CardAccountExporter(card: card)
        keySource = try exporter.keySource(label: "card in \(readerName)")
    }

    /// APDUs sent so far (SELECT, secure channel, VERIFY PIN included).
    public var apduCount: Int { counter.count }
    /// EXPORT KEY commands sent so far (one per account, and one for the accounts' shared parent).
    public var exportCommands: Int { exporter.exportCommands }

    /// Drops the secure channel.
    public func close() { session.luaClose() }
}
