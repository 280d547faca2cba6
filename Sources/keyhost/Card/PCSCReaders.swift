import KeyhostServices
import KeyhostCard
import KeyhostPCSC

/// PC/SC readers for `keyhost.card` and every card command: what `card.readers()` lists besides "virtual", and
/// what `ReaderChoice` picks from and connects to.
struct PCSCReaders: CardReaderSource {
    /// No pcscd or no reader is an empty list, so scripts can still use the virtual card;
    /// opening a named reader then reports the PC/SC problem itself.
    func readerNames() throws -> [String] {
        do {
            return try PCSCContext().readers()
        } catch let error as PCSCError where error.code == .noService || error.code == .noReadersAvailable {
            return []
        }
    }

    /// No reader is an empty list; pcscd not running is an error, which `ReaderChoice` reports as the reason there is no reader.
    func readerStates() throws -> [CardReaderState] {
        try PCSCContext().readerStates().map { CardReaderState(name: $0.name, cardPresent: $0.cardPresent, atr: $0.cardPresent ? $0.atr : nil) }
    }

    func waitForAnyCard(timeout: Double) throws -> String? {
        try PCSCContext().waitForCard(reader: nil, timeout: timeout)
    }

    func connect(reader: String, options: CardConnectOptions) throws -> CardChannel {
        let context = try PCSCContext()
        if let wait = options.wait, wait > 0 { _ = try context.waitForCard(reader: reader, timeout: wait) }
        let protocols: PCSCProtocols
        switch options.transmissionProtocol {
        case "t0": protocols = .t0
        case "t1": protocols = .t1
        default: protocols = .any
        }
        return PCSCCardChannel(transport: try context.connect(reader: reader, mode: options.exclusive ? .exclusive : .shared, protocols: protocols))
    }
}
