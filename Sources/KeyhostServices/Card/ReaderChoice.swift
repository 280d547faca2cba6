import KeyhostCrypto

/// The one rule for which reader a card command (`keyhost card …`, `--card` of the other commands, Lua's
/// `card.open`) talks to, and the one set of messages when there is none. `wanted` is:
/// - nil or empty: the first reader (in the sources' order) with a card in it;
/// - "virtual": the software card;
/// - a number: that reader as `keyhost card list` numbers them (from 0, real readers only);
/// - a reader's exact name, or a part of exactly one reader's name (case does not matter).
///
/// `frontEnd` says how the caller's options pick the software card and what numbers the readers, for the messages.
/// `wait`: with no reader named and no card anywhere, wait that many seconds for one. Errors are of kind `no_reader`.
public enum ReaderChoice {
    /// The reader chosen and the source that connects to it (nil for the software card).
    public typealias Entry = (name: String, source: CardReaderSource?)

    /// The reader `wanted` names, by the rule above.
    public static func choose(_ wanted: String?, sources: [CardReaderSource], frontEnd: CardFrontEnd, wait: Double? = nil) throws -> Entry {
        let text = (wanted ?? "").trimmingWhitespace()
        if text.lowercased() == CardReaders.virtual { return (CardReaders.virtual, nil) }

        var readers: [(state: CardReaderState, source: CardReaderSource)] = []
        var problems: [String] = []
        for source in sources {
            do {
                readers += try source.readerStates().filter { $0.name != CardReaders.virtual }.map { (state: $0, source: source) }
            } catch {
                problems.append("\(error)")
            }
        }
        let software = "or use \(frontEnd.virtualCard) for the software card"
        guard !readers.isEmpty else {
            let why = problems.first.map { "no card reader: \($0)" } ?? "no card reader found; connect one"
            let lead = text.isEmpty ? "" : Int64(text) != nil
                ? "no reader number \(text) (readers are numbered from 0 as \(frontEnd.readerList) lists them): "
                : "no reader is called \"\(text)\": "
            throw CardServiceError(kind: "no_reader", "\(lead)\(why), \(software)")
        }
        let names = readers.map { "\"\($0.state.name)\"" }.joined(separator: ", ")

        if text.isEmpty {
            if let withCard = readers.first(where: { $0.state.cardPresent != false }) { return (withCard.state.name, withCard.source) }
            if let wait, wait > 0 {
                for source in sources {
                    if let name = try source.waitForAnyCard(timeout: wait) { return (name, source) }
                }
            }
            throw CardServiceError(kind: "no_reader", "no card is in any reader (\(names)); insert one, name the reader to use, \(software)")
        }
        if let number = Int64(text) {
            guard number >= 0, number < Int64(readers.count) else {
                throw CardServiceError(kind: "no_reader", CardReaders.noReaderNumber(number, in: readers.map { (name: $0.state.name, source: Optional($0.source)) }, readerList: frontEnd.readerList))
            }
            let entry = readers[Int(number)]
            return (entry.state.name, entry.source)
        }
        if let exact = readers.first(where: { $0.state.name == text }) { return (exact.state.name, exact.source) }
        let matches = readers.filter { $0.state.name.lowercased().contains(text.lowercased()) }
        if matches.count == 1 { return (matches[0].state.name, matches[0].source) }
        if matches.isEmpty {
            throw CardServiceError(kind: "no_reader", "no reader is called \"\(text)\"; readers: \(names) (\(software))")
        }
        let matching = matches.map { "\"\($0.state.name)\"" }.joined(separator: ", ")
        throw CardServiceError(kind: "no_reader", "several readers match \"\(text)\": \(matching); give more of the name, or the reader's number "
                             + "as \(frontEnd.readerList) lists it")
    }
}
