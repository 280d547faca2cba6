import KeyhostRecord
import KeyhostCard

/// A source of card readers (PC/SC, say) for card commands and `keyhost.card` (`KeyhostModules.install(in:cardReaders:)`
/// takes them); the built-in `"virtual"` reader is always there besides.
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
    /// The card's answer to reset, when one is present and the source reads it.
    public var atr: [UInt8]?
    /// The reader `name`, with a card or not (nil: unknown).
    public init(name: String, cardPresent: Bool?, atr: [UInt8]? = nil) {
        self.name = name
        self.cardPresent = cardPresent
        self.atr = atr
    }

    /// The readers of `sources` as `keyhost card list --json` prints them and Lua's `card.list()` returns them:
    /// `{index, name, card_present, atr}`, numbered from 0 as every command names readers (no virtual reader). With
    /// `identify`, each card present is probed (`CardIdentification`, SELECTs only, shared access) and the reader gets
    /// `applets`: `[{family, version, state}]`, or null with `problem` saying why the card could not be read.
    public static func listRecord(_ sources: [CardReaderSource], identify: Bool = false) throws -> Record {
        var states: [(CardReaderState, CardReaderSource)] = []
        for source in sources { states += try source.readerStates().filter { $0.name != CardReaders.virtual }.map { ($0, source) } }
        return .array(states.enumerated().map { index, entry in
            let (state, source) = entry
            var fields: [(String, Record)] = [
                ("index", .count(index)), ("name", .string(state.name)), ("card_present", state.cardPresent.map(Record.bool) ?? .null),
                ("atr", state.cardPresent == true ? .bytes(state.atr) : .null),
            ]
            if identify && state.cardPresent == true {
                let found = CardIdentification.applets(in: state.name, of: source)
                fields.append(("applets", found.applets.map { Record.array($0.map(CardIdentification.record)) } ?? Record.null))
                fields.append(("problem", .string(found.problem)))
            }
            return .object(fields)
        })
    }
}

extension CardIdentification {
    /// The applets of the card in `reader`, probed over a shared connection; nil with the reason when the card cannot
    /// be read (another application holds it exclusively, it does not answer, …).
    public static func applets(in reader: String, of source: CardReaderSource) -> (applets: [CardIdentity]?, problem: String?) {
        do {
            let channel = try CardServiceError.mapping(nil) { try source.connect(reader: reader, options: CardConnectOptions()) }
            let result = try CardServiceError.mapping("SELECT") { try identify(channel) }
            if result.found.isEmpty, let first = result.unreadable.first { return (nil, first) }
            return (result.found, nil)
        } catch {
            return (nil, "\(error)")
        }
    }

    /// One applet as `card list --json` prints it: `{family, version, state}`.
    public static func record(_ identity: CardIdentity) -> Record {
        .object([("family", .string(identity.family.rawValue)), ("version", .string(identity.version)), ("state", .string(identity.state))])
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

    /// Options for `connect`; the defaults fail at once without a card, shared, either protocol.
    public init(wait: Double? = nil, exclusive: Bool = false, transmissionProtocol: String? = nil) {
        self.wait = wait
        self.exclusive = exclusive
        self.transmissionProtocol = transmissionProtocol
    }
}
