import ArgumentParser
import KeyhostCard
import KeyhostCrypto
import KeyhostFiles
import KeyhostRecord
import KeyhostServices

/// `--type public|ndef|cash`: which of the card's data GET DATA and STORE DATA mean.
struct CardDataType: ParsableArguments {
    @Option(name: .customLong("type"), help: ArgumentHelp("public: the applet's public data (127 bytes); ndef: the NDEF message phones read over NFC (510 bytes); cash: the Cash applet's data (127 bytes).", valueName: "type"))
    var name = "public"

    func validate() throws { _ = try slot() }

    func slot() throws -> DataSlot {
        guard let slot = DataSlot(name: name) else { throw ValidationError("--type must be public, ndef or cash, not \(name)") }
        return slot
    }
}

struct CardGetData: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get-data",
        abstract: "GET DATA: the public data, NDEF message or cash data stored on the card (no PIN; on 3.x no pairing either).",
        discussion: """
            A 3.x card answers GET DATA in clear to anyone holding it: no pairing password, no PIN. A 4.x card answers \
            through its secure channel (which needs neither). --type ndef gives the NDEF message without the file's 2-byte \
            length (a 3.x card answers only its first 221 bytes: a longer message is refused, not cut). Prints the bytes in \
            hex; -o FILE writes the bytes themselves to a new file (mode 0600, never over an existing one). \
            JSON: {type, data, file} (data in hex; file null without -o).
            """
    )

    @OptionGroup var card: CardSessionOptions

    @OptionGroup var type: CardDataType

    @Option(name: .shortAndLong, help: ArgumentHelp("Write the bytes to this new file instead of hex on standard output.", valueName: "file"))
    var output: String?

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        let slot = try type.slot()
        try runCardCommand(card, json: json, access: .selected, requirement: .initialized, human: { result in
            guard case .bytes(let data)? = result["data"] else { return [] }
            if let output {
                OutputFile.note("\(data.count) bytes of \(slot.name) data into \(output)")
                return []
            }
            if data.isEmpty { OutputFile.note("the card holds no \(slot == .ndef ? "NDEF message" : "\(slot.name) data")") }
            return data.isEmpty ? [] : [Hex.encode(data)]
        }) { connection in
            try connection.openForGetData()
            let result = try connection.getData(slot)
            guard case .object(var fields) = result, case .bytes(let data)? = result["data"] else { return result }
            if let output { try OutputFile.create(output, data) }
            fields.append(("file", .string(output)))
            return .object(fields)
        }
    }
}

struct CardStoreData: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store-data",
        abstract: "STORE DATA: replace the card's public data, NDEF message or cash data (PIN needed).",
        discussion: secretsHelp(["KEYHOST_PIN", "KEYHOST_PAIRING_PASSWORD (3.x, when not paired yet)"])
            + " The bytes come from --hex HEX, --file FILE or standard input (-); --hex '' empties the slot. Anyone holding the "
            + "card can read them back (keyhost card get-data): store nothing secret. --type ndef takes the NDEF message "
            + "(records, as NFC tools make them); keyhost writes the file's 2-byte length in front, and a message longer "
            + "than one command in pieces with the length last, so a phone never reads half of one. A factory reset erases "
            + "the public data and leaves the NDEF message and cash data (they belong to the card's NFC and Cash applets). "
            + "JSON: {type, length}."
    )

    @OptionGroup var card: CardSessionOptions

    @OptionGroup var type: CardDataType

    @Option(help: ArgumentHelp("The bytes in hex (0x optional).", valueName: "hex"))
    var hex: String?

    @Option(help: ArgumentHelp("Read the bytes from FILE, exactly as stored.", valueName: "file"))
    var file: String?

    @Argument(help: ArgumentHelp("- reads the bytes from standard input.", valueName: "-"))
    var standardInput: String?

    @Flag(help: "Print JSON.")
    var json = false

    /// More than any slot holds, so that an oversized input is told the slot's limit rather than a read limit.
    static let readLimit = 64 * 1024

    func validate() throws {
        if let standardInput, standardInput != "-" {
            throw ValidationError("the only argument store-data takes is - (standard input); give bytes with --hex HEX or --file FILE")
        }
        let sources = [hex != nil, file != nil, standardInput != nil].filter { $0 }.count
        guard sources == 1 else {
            throw ValidationError(sources == 0 ? "give the bytes to store: --hex HEX, --file FILE, or - for standard input"
                                               : "give the bytes once: --hex, --file or - (standard input), not several")
        }
        if let hex { _ = try Self.decode(hex) }
    }

    static func decode(_ hex: String) throws -> [UInt8] {
        do { return try Hex.decode(hex.trimmingWhitespaceAndNewlines()) } catch { throw ValidationError("--hex: \(error)") }
    }

    func bytes() throws -> [UInt8] {
        if let hex { return try Self.decode(hex) }
        do {
            if let file { return try BoundedFile.read(file, limit: Self.readLimit) }
            return try BoundedFile.readStandardInput(limit: Self.readLimit)
        } catch {
            throw Failure.kind("io", "cannot read the data to store: \(error)")
        }
    }

    func run() throws {
        let slot = try type.slot()
        var data: [UInt8] = []
        try Failure.exitOnError {
            data = try bytes()
            // Before the card is opened: a PIN asked for data that cannot fit would be asked for nothing.
            try CardConnection.checkDataSize(data.count, for: slot)
        }
        try runCardCommand(card, json: json, access: .pinVerified, requirement: .initialized, human: { _ in
            [slot == .ndef ? "stored an NDEF message of \(data.count) bytes" : "stored \(data.count) bytes of \(slot.name) data"]
        }) { try $0.storeData(data, slot: slot) }
    }
}
