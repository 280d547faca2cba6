import KeyhostCard
import KeyhostRecord
import KeyhostServices

#if canImport(Glibc)
import Glibc
#endif

extension CardInfo {
    /// `card info` of a card whose applet is not a Keycard: `family`'s (the software card's), else the first family
    /// the card's applets identify. A Satochip prints its status, and with a PIN in the environment (never a prompt:
    /// `info` only looks) its label and certificate verdict; any other family its identity.
    static func printOther(_ family: CardFamily?, _ transport: CardTransport, _ request: CardOpenRequest, frontEnd: CardFrontEnd,
                           json: Bool) throws {
        if family == .satochip { return try printSatochip(transport, request, frontEnd: frontEnd, json: json) }
        let applets = try frontEnd.mapping("SELECT") { try CardIdentification.identify(transport.channel).found }
        let found = applets.first { family == nil ? $0.family != .keycard : $0.family == family }
        if found?.family == .satochip { return try printSatochip(transport, request, frontEnd: frontEnd, json: json) }
        guard let found else {
            throw CardServiceError(kind: "wrong_card", "the card in \(transport.readerName) holds no applet keyhost knows "
                                   + "(\(CardFamily.allCases.map { "\($0)" }.joined(separator: ", "))); check the card and the reader",
                                   statusWord: .fileNotFound)
        }
        let record = Record.object([("reader", .string(transport.readerName)), ("family", .string(found.family.rawValue)),
                                    ("version", .string(found.version)), ("state", .string(found.state))])
        if json { print(record.json()); return }
        print(TerminalText.escaped("reader: \(transport.readerName)"))
        print(TerminalText.escaped("card: \(found.summary)"))
    }

    /// A Satochip's status, label and certificate verdict.
    static func printSatochip(_ transport: CardTransport, _ request: CardOpenRequest, frontEnd: CardFrontEnd, json: Bool) throws {
        let connection = try SatochipConnection(transport, request, frontEnd: frontEnd)
        defer { connection.close() }
        var pinInput = frontEnd.pin
        pinInput.required = true  // the environment only: `info` never prompts
        let (record, trust) = try connection.infoRecord(pin: try? pinInput.resolve(nil))
        if json {
            print(record.json())
        } else {
            for line in SatochipText.lines(record) { print(TerminalText.escaped(line)) }
        }
        if let trust, !trust.isTrusted { SatochipText.warnUntrusted(trust) }
    }
}
