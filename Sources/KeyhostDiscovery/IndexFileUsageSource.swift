import KeyhostCrypto
import KeyhostFiles
import KeyhostRecord

/// Usage from a list of known used addresses (an indexer export, a block explorer dump, a wallet's history):
/// loaded once into a set, so a scan does no I/O per address.
///
/// Formats: text (one address per line, `#` starts a comment), CSV (the `address` column, or the first column
/// when no header names one), JSON (an array of strings, or of objects with an `address` member).
/// Given the coin being scanned, every entry must be an address of that coin: anything else is an error
/// naming the line, never a silent non-match.
public struct IndexFileUsageSource: UsageSource {
    public enum Format: String, Sendable {
        case text, csv, json
        /// Chosen from the file extension, or from the content (a leading `[` is JSON).
        case auto
    }

    public let name: String
    /// The largest index file read (256 MiB, some five million addresses); checked while reading.
    public static let maximumFileSize = 256 * BoundedFile.mebibyte
    /// The normalised addresses in the index.
    public let addresses: Set<String>

    /// An index from addresses given directly.
    public init<S: Sequence>(addresses: S, name: String = "index") where S.Element == String {
        self.addresses = Set(addresses.map(normalizedAddress).filter { !$0.isEmpty })
        self.name = name
    }

    /// One entry of an index and where it is ("used.txt:3", "used.json item #3"), for errors.
    struct Entry: Equatable {
        var address: String
        var location: String
        /// Said after the problem, e.g. that a CSV without an "address" header is read from its first column.
        var hint: String? = nil
    }

    /// Loads an index file; with `coin`, every entry must be an address of it.
    public init(path: String, format: Format = .auto, coin: Coin? = nil) throws {
        let bytes: [UInt8]
        do {
            bytes = try BoundedFile.read(path, limit: Self.maximumFileSize)
        } catch let error as BoundedFile.ReadError {
            throw DiscoveryError.indexFile(path: path, detail: "cannot be read: \(error.problem)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw DiscoveryError.indexFile(path: path, detail: "is not UTF-8 text")
        }
        var chosen = format
        if chosen == .auto {
            let ext = Self.fileExtension(path).lowercased()
            chosen = ext == "json" ? .json : ext == "csv" ? .csv : ext == "txt" ? .text : .auto
        }
        try self.init(contents: text, format: chosen, origin: path, coin: coin)
    }

    /// Parses index content; `origin` names it in errors and in `name`. With `coin`, every entry must be an
    /// address of it.
    public init(contents: String, format: Format = .auto, origin: String = "index", coin: Coin? = nil) throws {
        var chosen = format
        if chosen == .auto {
            let start = contents.drop { $0.isWhitespace }.first
            chosen = start == "[" ? .json : .text
        }
        let entries: [Entry]
        switch chosen {
        case .json: entries = try Self.parseJSON(contents, origin: origin)
        case .csv: entries = try Self.parseCSV(contents, origin: origin)
        case .text, .auto: entries = Self.parseText(contents, origin: origin)
        }
        if let coin {
            for entry in entries {
                if let problem = IndexEntryCheck.problem(entry.address, coin: coin) {
                    throw DiscoveryError.indexEntry(location: entry.location, detail: problem + (entry.hint.map { " (\($0))" } ?? ""))
                }
            }
        }
        let list = entries.map(\.address)
        let distinct = Set(list).count
        self.init(addresses: list, name: "index \(origin) (\(chosen.rawValue), \(distinct) address\(distinct == 1 ? "" : "es"))")
    }

    public func usage(of addresses: [String]) throws -> [Bool] {
        addresses.map { self.addresses.contains(normalizedAddress($0)) }
    }

    static func parseText(_ text: String, origin: String) -> [Entry] {
        text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated().compactMap { number, line in
            let content = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let address = content.trimmingWhitespace()
            return address.isEmpty ? nil : Entry(address: address, location: "\(origin):\(number + 1)")
        }
    }

    static func parseJSON(_ text: String, origin: String) throws -> [Entry] {
        let value: JSONValue
        do {
            value = try JSONValue.parse(Array(text.utf8), maxBytes: maximumFileSize)
        } catch let error as JSONError {
            throw DiscoveryError.indexFile(path: origin, detail: "is not valid JSON: \(error.problem) (at byte \(error.offset))")
        }
        guard let array = value.arrayValue else {
            throw DiscoveryError.indexFile(path: origin, detail: "JSON must be an array of addresses or of objects with an \"address\" member")
        }
        return try array.enumerated().map { position, item in
            let location = "\(origin) item #\(position + 1)"
            if let address = item.stringValue { return Entry(address: address, location: location) }
            if case .object = item, let address = item["address"]?.stringValue { return Entry(address: address, location: location) }
            throw DiscoveryError.indexFile(path: origin, detail: "item \(position) is neither a string nor an object with a string \"address\"")
        }
    }

    static func parseCSV(_ text: String, origin: String) throws -> [Entry] {
        let rows = csvRows(text).filter { !($0.fields.count == 1 && $0.fields[0].trimmingWhitespace().isEmpty) }
        guard let header = rows.first else { return [] }
        let named = header.fields.firstIndex { $0.trimmingWhitespace().lowercased() == "address" }
        let column = named ?? 0
        let body = named == nil ? rows[...] : rows.dropFirst()
        return body.compactMap { row in
            guard column < row.fields.count else { return nil }
            let value = row.fields[column].trimmingWhitespace()
            let hint = named == nil ? "no header names an \"address\" column, so the first column is read" : nil
            return value.isEmpty || value.hasPrefix("#") ? nil : Entry(address: value, location: "\(origin):\(row.line)", hint: hint)
        }
    }

    /// What follows the last "." of the file name, as URL.pathExtension has it ("" for "used", ".used" and "used.").
    static func fileExtension(_ path: String) -> String {
        var name = Substring(path)
        while name.count > 1, name.hasSuffix("/") { name = name.dropLast() }
        if let slash = name.lastIndex(of: "/") { name = name[name.index(after: slash)...] }
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...])
    }

    /// RFC 4180 rows, each with the line it starts on: quoted fields may hold commas, doubled quotes and newlines.
    static func csvRows(_ text: String) -> [(line: Int, fields: [String])] {
        var rows = [(line: Int, fields: [String])](), row = [String](), field = "", quoted = false
        var line = 1, rowStart = 1
        var chars = Array(text).makeIterator()
        var pending: Character? = nil
        while let c = pending ?? chars.next() {
            pending = nil
            if quoted {
                if c == "\"" {
                    if let next = chars.next() {
                        if next == "\"" { field.append("\"") } else { quoted = false; pending = next }
                    } else { quoted = false }
                } else {
                    if c.isNewline { line += 1 }
                    field.append(c)
                }
                continue
            }
            switch c {
            case "\"": quoted = true
            case ",": row.append(field); field = ""
            case "\n", "\r\n", "\r":
                row.append(field); rows.append((rowStart, row)); row = []; field = ""
                line += 1
                rowStart = line
            default: field.append(c)
            }
        }
        if !field.isEmpty || !row.isEmpty { row.append(field); rows.append((rowStart, row)) }
        return rows
    }
}
