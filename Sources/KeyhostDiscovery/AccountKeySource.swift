import KeyhostCrypto

/// Where the engine gets the extended public keys it derives addresses from.
///
/// The engine asks for one key per account (at the scheme's key path, e.g. m/84'/0'/3') and derives every
/// address of that account locally, in batches over all cores. A source is never asked for a per-address key
/// unless the scheme itself hardens the index (Ledger Live's m/44'/60'/{index}'/0/0).
public protocol AccountKeySource {
    /// What the source is, for reports, without secrets (e.g. "mnemonic, master fingerprint 73c5da0a").
    var label: String { get }
    /// A non-secret identifier of the key, so a checkpoint of one wallet is never resumed with another.
    var identity: String { get }
    /// Set when the source holds exactly one account-level key (an xpub): the engine scans only that account.
    var fixedKey: FixedAccountKey? { get }
    /// The public-only extended key at the absolute key path `path`.
    func extendedPublicKey(at path: DerivationPath) throws -> HDNode
    /// The master key's fingerprint, for descriptors' key origins [fingerprint/path]; nil when the source cannot know it.
    func masterFingerprint() throws -> UInt32?
}

extension AccountKeySource {
    public func masterFingerprint() throws -> UInt32? { nil }
}

/// The one key of a single-account source, with the extended-key family it was written in.
public struct FixedAccountKey: Sendable {
    public let node: HDNode
    public let family: ExtendedKeyVersion
}

/// An account-level xpub/ypub/zpub (or tpub/upub/vpub...): no secrets, and therefore only that one account.
public struct ExtendedPublicKeySource: AccountKeySource {
    public let key: FixedAccountKey
    private let text: String

    /// Parses an extended public key. A private one (by its decoded version, whatever its prefix text) is
    /// refused without echoing it: this source is for keys that can be shown and stored.
    public init(_ extendedKey: String) throws {
        let trimmed = extendedKey.trimmingWhitespaceAndNewlines()
        if HDNode.isExtendedPrivateKey(trimmed) == true {
            throw DiscoveryError.invalidOption(name: "xpub", detail: "it is an extended private key (a secret); give the account's "
                + "extended public key (node:xpub()), or the seed or mnemonic")
        }
        let (node, family) = try HDNode.parse(trimmed)
        key = FixedAccountKey(node: node.neutered(), family: family)
        text = node.neutered().extendedPublicKey(family)
    }

    public var label: String { "\(key.family.publicPrefix) at depth \(key.node.depth) (one account only; no other account can be derived from it)" }
    public var identity: String { "xpub:" + text }
    public var fixedKey: FixedAccountKey? { key }
    /// Known only when the key is itself the master.
    public func masterFingerprint() throws -> UInt32? { key.node.depth == 0 ? key.node.fingerprint : nil }

    /// Only the key itself: an xpub cannot reach other hardened accounts.
    public func extendedPublicKey(at path: DerivationPath) throws -> HDNode {
        guard path.depth == Int(key.node.depth), path.indexes.last ?? 0 == key.node.childNumber else {
            throw DiscoveryError.keySource(path: path.description, detail: "the \(key.family.publicPrefix) is the key at depth \(key.node.depth), "
                + "child \(DerivationPath.format(key.node.childNumber)); other accounts need the seed or the card")
        }
        return key.node
    }
}

/// A BIP39 mnemonic or BIP32 seed: each account's extended public key is derived once, then addresses locally.
public final class SeedKeySource: AccountKeySource {
    private let master: HDNode
    private var cache: [DerivationPath: HDNode] = [:]

    public init(seed: SecretBytes) throws {
        master = try HDNode(seed: seed)
    }

    public convenience init(mnemonic: Mnemonic, passphrase: String = "") throws {
        try self.init(seed: mnemonic.seed(passphrase: passphrase))
    }

    private var fingerprint: String { fingerprintHex(master.fingerprint) }
    public var label: String { "seed, master fingerprint \(fingerprint)" }
    // The master fingerprint is public (it appears in PSBTs and descriptors) and tells wallets apart well enough.
    public var identity: String { "seed:" + fingerprint }
    public var fixedKey: FixedAccountKey? { nil }
    public func masterFingerprint() throws -> UInt32? { master.fingerprint }

    public func extendedPublicKey(at path: DerivationPath) throws -> HDNode {
        if let node = cache[path] { return node }
        let node = try master.derive(path).neutered()
        cache[path] = node
        return node
    }
}

/// What the card layer implements: one EXPORT KEY of the extended public key at an account path.
public protocol AccountXpubExporter {
    /// The extended public key (xpub serialization) at `path`.
    func exportAccountXpub(_ path: DerivationPath) throws -> String
}

/// A hardware card: one export per account, never one derivation per address on the card.
public final class CardKeySource: AccountKeySource {
    private let export: (DerivationPath) throws -> String
    private let fingerprint: (() throws -> UInt32?)?
    private var masterFingerprintCache: UInt32??
    private var cache: [DerivationPath: HDNode] = [:]
    public let label: String
    public let identity: String
    /// How many keys were exported (for reports and tests: one per account).
    public private(set) var exports = 0

    /// A card through a closure. `identity` should name the card (e.g. its instance UID) so checkpoints stay per card.
    /// `masterFingerprint`, when given, asks the card for its master key's fingerprint (once per job).
    public init(identity: String, label: String = "card", export: @escaping (DerivationPath) throws -> String,
                masterFingerprint: (() throws -> UInt32?)? = nil) {
        self.identity = "card:" + identity
        self.label = label
        self.export = export
        self.fingerprint = masterFingerprint
    }

    public func masterFingerprint() throws -> UInt32? {
        if let known = masterFingerprintCache { return known }
        let value = try fingerprint?()
        masterFingerprintCache = .some(value)
        return value
    }

    /// A card through an exporter.
    public convenience init(identity: String, label: String = "card", exporter: AccountXpubExporter) {
        self.init(identity: identity, label: label, export: exporter.exportAccountXpub)
    }

    public var fixedKey: FixedAccountKey? { nil }

    public func extendedPublicKey(at path: DerivationPath) throws -> HDNode {
        if let node = cache[path] { return node }
        let text: String
        do {
            text = try export(path)
            exports += 1
        } catch {
            throw DiscoveryError.keySourceFailed(path: path.description, underlying: String(describing: error))
        }
        let node: HDNode
        do {
            node = try HDNode(extendedKey: text.trimmingWhitespaceAndNewlines()).neutered()
        } catch {
            throw DiscoveryError.keySourceFailed(path: path.description, underlying: "the exported key does not parse: \(error)")
        }
        // A card that answers with the wrong key would make every address wrong and every account look empty.
        guard Int(node.depth) == path.depth, node.childNumber == path.indexes.last ?? 0 else {
            throw DiscoveryError.keySourceFailed(path: path.description, underlying: "the exported key is at depth \(node.depth), "
                + "child \(DerivationPath.format(node.childNumber)), not the requested path")
        }
        cache[path] = node
        return node
    }
}
