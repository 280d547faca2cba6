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
    /// `{index, name, card_present, atr}`, numbered from 0 as every command names readers (no virtual reader).
    public static func listRecord(_ sources: [CardReaderSource]) throws -> Record {
        var states: [CardReaderState] = []
        for source in sources { states += try source.readerStates().filter { $0.name != CardReaders.virtual } }
        return .array(states.enumerated().map { index, state in
            ["index": .count(index), "name": .string(state.name), "card_present": state.cardPresent.map(Record.bool) ?? .null,
             "atr": state.cardPresent == true ? .bytes(state.atr) : .null]
        })
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
