/// The readers a card command can name: the real ones of the sources, numbered as `keyhost card list` prints them,
/// and the software card called "virtual".
public enum CardReaders {
    /// The software card's reader name.
    public static let virtual = "virtual"

    /// A reader and the source that connects to it (nil for the software card).
    public typealias Entry = (name: String, source: CardReaderSource?)

    /// Every reader, real ones first (in source order), then `"virtual"`.
    public static func readerList(_ sources: [CardReaderSource]) throws -> [Entry] {
        var list: [Entry] = []
        for source in sources {
            for name in try source.readerNames() where name != virtual { list.append((name, source)) }
        }
        list.append((virtual, nil))
        return list
    }

    /// Reader number `number` as `keyhost card list` prints it: counted from 0 over the real (PC/SC)
    /// readers, in their order; the virtual reader has no number. Every command and `card.open` use this.
    public static func reader(number: Int64, in list: [Entry]) -> Entry? {
        let real = list.filter { $0.source != nil }
        guard number >= 0, number < Int64(real.count) else { return nil }
        return real[Int(number)]
    }

    /// The error for a reader number that does not exist, with the numbers that do.
    public static func noReaderNumber(_ number: Int64, in list: [Entry], readerList: String) -> String {
        let real = list.filter { $0.source != nil }
        let numbered = real.enumerated().map { "\($0.offset): \"\($0.element.name)\"" }.joined(separator: ", ")
        return "no reader number \(number); readers are numbered from 0 as \(readerList) lists them"
            + (real.isEmpty ? ", and there is none (use \"virtual\" for the software card)" : ": \(numbered)")
    }
}
