import Foundation
import KeyhostFiles

/// Usage from a list of known used addresses (an indexer export, a block explorer dump, a wallet's history):
/// loaded once into a set, so a scan does no I/O per address.
///
/// Formats: text (one address per line, `#` starts a comment), CSV (the `address` column, or the first column
/// when no header names one), JSON (an array of strings, or of objects with an `address` member).
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

    /// Loads an index file.
    public init(path: String, format: Format = .auto) throws {
        let bytes: [UInt8]
        do {
            bytes = try BoundedFile.read(path, limit: Self.maximumFileSize)
        } catch let error as BoundedFile.ReadError {
            throw DiscoveryError.indexFile(path: path, detail: "cannot be read: \(error.problem)")
        }
        guard let text = String(bytes: bytes, encoding: .utf8) else {
            throw DiscoveryError.indexFile(path: path, detail: "is not UTF-8 text")
        }
        var chosen = format
        if chosen == .auto {
            let ext = URL(fileURLWithPath: path).pathExtension.lowercased()
            chosen = ext == "json" ? .json : ext == "csv" ? .csv : ext == "txt" ? .text : .auto
        }
        try self.init(contents: text, format: chosen, origin: path)
    }

    /// Parses index content; `origin` names it in errors and in `name`.
    public init(contents: String, format: Format = .auto, origin: String = "index") throws {
        var chosen = format
        if chosen == .auto {
            let start = contents.drop { $0.isWhitespace }.first
            chosen = start == "[" ? .json : .text
        }
        let list: [String]
        switch chosen {
        case .json: list = try Self.parseJSON(contents, origin: origin)
        case .csv: list = try Self.parseCSV(contents, origin: origin)
        case .text, .auto: list = Self.parseText(contents)
        }
        self.init(addresses: list, name: "index \(origin) (\(chosen.rawValue), \(Set(list).count) addresses)")
    }

    public func usage(of addresses: [String]) throws -> [Bool] {
        addresses.map { self.addresses.contains(normalizedAddress($0)) }
    }

    static func parseText(_ text: String) -> [String] {
        text.split(whereSeparator: \.isNewline).compactMap { line in
            let content = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let address = content.trimmingCharacters(in: .whitespaces)
            return address.isEmpty ? nil : address
        }
    }

    static func parseJSON(_ text: String, origin: String) throws -> [String] {
        let value: Any
        do {
            value = try JSONSerialization.jsonObject(with: Data(text.utf8))
        } catch {
            throw DiscoveryError.indexFile(path: origin, detail: "is not valid JSON: \(error.localizedDescription)")
        }
        guard let array = value as? [Any] else {
            throw DiscoveryError.indexFile(path: origin, detail: "JSON must be an array of addresses or of objects with an \"address\" member")
        }
        return try array.enumerated().map { position, item in
            if let address = item as? String { return address }
            if let object = item as? [String: Any], let address = object["address"] as? String { return address }
            throw DiscoveryError.indexFile(path: origin, detail: "item \(position) is neither a string nor an object with a string \"address\"")
        }
    }

    static func parseCSV(_ text: String, origin: String) throws -> [String] {
        let rows = csvRows(text).filter { !($0.count == 1 && $0[0].trimmingCharacters(in: .whitespaces).isEmpty) }
        guard let header = rows.first else { return [] }
        let named = header.firstIndex { $0.trimmingCharacters(in: .whitespaces).lowercased() == "address" }
        let column = named ?? 0
        let body = named == nil ? rows[...] : rows.dropFirst()
        return body.compactMap { row in
            guard column < row.count else { return nil }
            let value = row[column].trimmingCharacters(in: .whitespaces)
            return value.isEmpty || value.hasPrefix("#") ? nil : value
        }
    }

    /// RFC 4180 rows: quoted fields may hold commas, doubled quotes and newlines.
    static func csvRows(_ text: String) -> [[String]] {
        var rows = [[String]](), row = [String](), field = "", quoted = false
        var chars = Array(text).makeIterator()
        var pending: Character? = nil
        while let c = pending ?? chars.next() {
            pending = nil
            if quoted {
                if c == "\"" {
                    if let next = chars.next() {
                        if next == "\"" { field.append("\"") } else { quoted = false; pending = next }
                    } else { quoted = false }
                } else { field.append(c) }
                continue
            }
            switch c {
            case "\"": quoted = true
            case ",": row.append(field); field = ""
            case "\n", "\r\n", "\r": row.append(field); rows.append(row); row = []; field = ""
            default: field.append(c)
            }
        }
        if !field.isEmpty || !row.isEmpty { row.append(field); rows.append(row) }
        return rows
    }
}
