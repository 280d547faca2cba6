import KeyhostCard
import KeyhostCrypto

/// What to open: the one description of a card connection both front ends build (Lua from `card.open{}`'s options,
/// the command line from its card option group) and `CardOpener` turns into a session. Nothing in it is a secret.
public struct CardOpenRequest: Sendable {
    /// Where the pairings of this connection are kept.
    public enum PairingStoreChoice: Sendable, Equatable {
        /// The pairing store file (`PairingStore.defaultPath()`), except for a card that vanishes with the process (a
        /// software card without a state file, a replay), whose pairings stay in memory too.
        case automatic
        /// In memory only: nothing is written.
        case memory
        /// This file.
        case file(String)
    }

    /// "virtual", a reader's name (or a unique part of one), its number as the reader list prints it, or nil for the
    /// first reader with a card (`ReaderChoice`). Ignored with `replay`.
    public var reader: String?
    /// A transcript to answer from instead of a card (`RecordingChannel`'s text).
    public var replay: String?
    /// The software card's state file (virtual reader only); without it the card is new and lives in memory.
    public var state: String?
    /// The applet of a new software Keycard; an existing state file holding another applet is refused.
    public var applet: AppletVersion?
    /// The family of the software card (virtual reader only): nil for what the state file holds, or a new Keycard.
    public var family: CardFamily?
    /// The software card's number of pairing slots (1...100).
    public var pairingSlots: Int?
    /// Makes the software card's and this host's randomness repeatable (tests, transcripts). Never for a real reader.
    public var seed: Int64?
    /// Write a transcript of the exchanges here when the session closes.
    public var record: String?
    /// Trace APDUs: nil none, false the APDUs, true with the secure channel's plaintext. `CardTrace.fromEnvironment()` by default.
    public var trace: Bool?
    /// How to connect to a real reader (wait for a card, exclusive, protocol).
    public var connect = CardConnectOptions()
    /// Certificate authorities trusted besides Status' own (4.x identity certificates); the software card's test CA is
    /// added for the virtual reader and replays.
    public var trustedCAKeys: [PublicKey] = []
    /// Where pairings are kept.
    public var pairingStore = PairingStoreChoice.automatic

    /// A request for `reader` (see above), traced as `KEYHOST_TRACE` says.
    public init(reader: String? = nil) {
        self.reader = reader
        trace = CardTrace.fromEnvironment()
    }

    /// Whether the request names the in-process software card.
    public var isVirtual: Bool { replay == nil && (reader ?? "").trimmingWhitespace().lowercased() == CardReaders.virtual }

    /// Whether the request names options that only a software card takes.
    var namesSoftwareCard: Bool { state != nil || applet != nil || family != nil || pairingSlots != nil || seed != nil }
}
