import KeyhostBindings
import KeyhostCard
import KeyhostPCSC

/// PC/SC readers for `keyhost.card`: what `card.readers()` lists besides "virtual", and what
/// `card.open{reader = "…"}` connects to.
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

    func connect(reader: String, options: CardConnectOptions) throws -> CardChannel {
        let context = try PCSCContext()
        if let wait = options.wait, wait > 0 { _ = try context.waitForCard(reader: reader, timeout: wait) }
        return PCSCCardChannel(transport: try context.connect(reader: reader))
    }
}
