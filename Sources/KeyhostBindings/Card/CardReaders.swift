// URL and FileManager from FoundationEssentials: Foundation proper would link ICU into keyhost.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import KeyhostCard
import KeyhostCrypto

/// A source of card readers for `keyhost.card` (PC/SC, say). `KeyhostModules.install(in:cardReaders:)` takes them;
/// the built-in `"virtual"` reader is always there besides.
public protocol CardReaderSource {
    /// The readers this source offers now; empty when it cannot be asked (`card.readers()` still lists "virtual").
    func readerNames() throws -> [String]
    /// The readers with whether a card is in each. Throws when the source cannot be asked at all (pcscd not
    /// running), so that choosing a reader can say why there is none.
    func readerStates() throws -> [CardReaderState]
    /// A channel to the card in `reader`; waits up to `options.wait` seconds for a card when given.
    func connect(reader: String, options: CardConnectOptions) throws -> CardChannel
    /// Waits up to `timeout` seconds for a card in any of this source's readers; its reader, or nil if the source cannot wait.
    func waitForAnyCard(timeout: Double) throws -> String?
}

extension CardReaderSource {
    public func readerStates() throws -> [CardReaderState] { try readerNames().map { CardReaderState(name: $0, cardPresent: nil) } }
    public func waitForAnyCard(timeout: Double) throws -> String? { nil }
}

/// A reader and whether a card is in it (nil: the source cannot tell).
public struct CardReaderState: Sendable, Equatable {
    public var name: String
    public var cardPresent: Bool?
    public init(name: String, cardPresent: Bool?) {
        self.name = name
        self.cardPresent = cardPresent
    }
}

/// How `connect` should behave.
public struct CardConnectOptions: Sendable, Equatable {
    /// Seconds to wait for a card to be inserted; nil or 0 means fail at once when there is none.
    public var wait: Double?
    /// Keep other applications out until the connection is closed.
    public var exclusive: Bool
    /// The transmission protocols to offer: "t0", "t1" or nil for either.
    public var transmissionProtocol: String?

    public init(wait: Double? = nil, exclusive: Bool = false, transmissionProtocol: String? = nil) {
        self.wait = wait
        self.exclusive = exclusive
        self.transmissionProtocol = transmissionProtocol
    }
}

/// The in-process software cards behind `reader = "virtual"`.
///
/// A card kept in a state file is shared by every session that opens that file (one `SoftKeycard` per path),
/// so sessions see each other's changes as on a real card and never overwrite each other's state.
/// A card without a file is new at each `card.open`.
enum VirtualCards {
    /// A serial queue is the lock (as in KeyhostCrypto's BatchAddresses): NSLock would need Foundation.
    private static let lock = DispatchQueue(label: "keyhost.virtual-cards")
    nonisolated(unsafe) private static var byPath: [String: SoftKeycard] = [:]

    static func open(state path: String?, options: SoftKeycardOptions, appletGiven: Bool) throws -> SoftKeycard {
        guard let path else { return try SoftKeycard(options: options) }
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        return try lock.sync { try openLocked(absolute, options: options, appletGiven: appletGiven) }
    }

    private static func openLocked(_ absolute: String, options: SoftKeycardOptions, appletGiven: Bool) throws -> SoftKeycard {
        if let card = byPath[absolute], FileManager.default.fileExists(atPath: absolute) {
            try check(card, absolute, options, appletGiven)
            return card
        }
        let card = try SoftKeycard(store: SoftKeycardStore(url: URL(fileURLWithPath: absolute)), options: options)
        try check(card, absolute, options, appletGiven)
        byPath[absolute] = card
        return card
    }

    private static func check(_ card: SoftKeycard, _ path: String, _ options: SoftKeycardOptions, _ appletGiven: Bool) throws {
        if appletGiven && card.state.appletVersion != options.appletVersion {
            throw CardLuaError(kind: "invalid_argument",
                               "virtual card state \(path) holds applet \(card.state.appletVersion), not \(options.appletVersion); "
                               + "drop the 'applet' option or use another state file")
        }
    }
}
