import KeyhostCard
import KeyhostRecord
import LuaRuntime

/// `card.tlv_parse`, `card.tlv_build` and `card.sw_name`: BER-TLV and status words for any card's raw
/// APDUs (`s:transmit`), not only Keycard's.
enum TLVFunctions {
    /// Deepest nesting `tlv_parse` follows: far beyond any card's templates, well inside Lua's table limits.
    static let maxDepth = 32

    static func register(in module: inout LuaModule) {
        module.function("tlv_parse") { ctx in
            let bytes = try ctx.bytes(1)
            let parser = Parser(bytes: bytes)
            return try ctx.return(.table(LuaTable(array: try parser.elements(from: 0, until: bytes.count, depth: 0, parent: nil))))
        }
        module.function("tlv_build") { ctx in
            let list = try ctx.table(1)
            // One element ({tag = ..., value = ...}) or a list of them.
            let elements = list.array.isEmpty && !list["tag"].isNil ? [LuaValue.table(list)] : list.array
            if list.array.isEmpty && list["tag"].isNil && !list.fields.isEmpty {
                throw LuaArgumentError(1, "a list of elements {tag = ..., value = ... or children = {...}}, or one element, expected")
            }
            var out: [UInt8] = []
            for (i, element) in elements.enumerated() {
                out += try encode(element, where: "element \(i + 1)", depth: 0)
            }
            ctx.push(bytes: out)
            return 1
        }
        module.function("sw_name") { ctx in
            let raw = try ctx.integer(1)
            guard (0...0xFFFF).contains(raw) else {
                throw LuaArgumentError(1, "status word \(raw) is out of range; use 0x0000...0xFFFF (SW1 SW2, e.g. 0x6A82)")
            }
            let sw = StatusWord(UInt16(raw))
            if let name = sw.name ?? groupName(sw) { ctx.push(name) } else { ctx.pushNil() }
            return 1
        }
    }

    // MARK: parsing

    /// Walks `bytes`, keeping offsets absolute so every message points into the caller's string.
    struct Parser {
        let bytes: [UInt8]

        /// The elements from `start` up to `end` (the input's end or the parent's value end).
        func elements(from start: Int, until end: Int, depth: Int, parent: (tag: UInt32, offset: Int)?) throws -> [LuaValue] {
            var offset = start
            var out: [LuaValue] = []
            while offset < end {
                out.append(try element(at: &offset, end: end, depth: depth, parent: parent))
            }
            return out
        }

        private func element(at offset: inout Int, end: Int, depth: Int, parent: (tag: UInt32, offset: Int)?) throws -> LuaValue {
            let start = offset
            let within = parent.map { " of tag \(hex($0.tag)) (at offset \($0.offset))" } ?? ""
            let limit = parent == nil ? "the input" : "the value\(within)"
            // Tag: one byte, or more while the first byte's low five bits are all set and then while bit 8 is set.
            var tag = UInt32(bytes[offset])
            offset += 1
            if tag & 0x1F == 0x1F {
                var more = true
                while more {
                    guard offset < end else {
                        throw TLVParseError(offset: start, "tag at offset \(start) is cut short: \(limit) ends inside it")
                    }
                    guard offset - start < 4 else { throw TLVParseError(offset: start, "tag at offset \(start) is longer than 4 bytes") }
                    tag = tag << 8 | UInt32(bytes[offset])
                    more = bytes[offset] & 0x80 != 0
                    offset += 1
                }
            }
            // Length: short form 00-7F, or 81-84 followed by 1-4 bytes.
            let lengthOffset = offset
            guard offset < end else {
                throw TLVParseError(offset: lengthOffset, "tag \(hex(tag)) at offset \(start) has no length: \(limit) ends at offset \(end)")
            }
            let first = bytes[offset]
            offset += 1
            var length = 0
            if first >= 0x80 {
                let count = Int(first & 0x7F)
                guard (1...4).contains(count) else {
                    throw TLVParseError(offset: lengthOffset, "length byte \(hexByte(first)) of tag \(hex(tag)) at offset \(lengthOffset) is not a "
                        + "definite length (00-7F, or 81-84 and 1-4 length bytes)")
                }
                guard offset + count <= end else {
                    throw TLVParseError(offset: lengthOffset, "length of tag \(hex(tag)) at offset \(lengthOffset) is cut short: \(hexByte(first)) "
                        + "announces \(count) length bytes, \(bytesText(end - offset)) remain in \(limit)")
                }
                for i in 0..<count { length = length << 8 | Int(bytes[offset + i]) }
                offset += count
            } else {
                length = Int(first)
            }
            let valueOffset = offset
            guard length <= end - valueOffset else {
                throw TLVParseError(offset: lengthOffset, "length \(length) of tag \(hex(tag)) at offset \(start) runs past the end of "
                    + "\(limit): the value would start at offset \(valueOffset), but \(bytesText(end - valueOffset)) remain")
            }
            offset = valueOffset + length
            var table = LuaTable([
                "tag": .integer(Int64(tag)),
                "value": .string(Array(bytes[valueOffset..<offset])),
            ])
            if TLV(tag: tag, value: []).isConstructed {
                guard depth < TLVFunctions.maxDepth else {
                    throw TLVParseError(offset: start, "tag \(hex(tag)) at offset \(start) is nested deeper than \(TLVFunctions.maxDepth) levels")
                }
                let children = try elements(from: valueOffset, until: offset, depth: depth + 1, parent: (tag, start))
                table["children"] = .table(LuaTable(array: children))
            }
            return .table(table)
        }
    }

    // MARK: building

    static let elementFields: Set<String> = ["tag", "value", "children"]

    static func encode(_ value: LuaValue, where name: String, depth: Int) throws -> [UInt8] {
        guard depth <= maxDepth else { throw LuaArgumentError(1, "\(name) is nested deeper than \(maxDepth) levels") }
        guard case .table(let element) = value else {
            throw LuaArgumentError(1, "\(name) must be a table {tag = ..., value = ... or children = {...}}, got \(value.typeName)")
        }
        for key in element.fields.keys {
            guard let field = key.stringValue, elementFields.contains(field) else {
                let shown = key.stringValue.map { "'\($0)'" } ?? "of type \(key.typeName)"
                throw LuaArgumentError(1, "\(name) has an unknown field \(shown); an element has tag, value and children")
            }
        }
        guard !element.array.isEmpty || !element.fields.isEmpty else {
            throw LuaArgumentError(1, "\(name) is empty; an element is {tag = ..., value = ... or children = {...}}")
        }
        guard element.array.isEmpty else {
            throw LuaArgumentError(1, "\(name) has list items; an element is {tag = ..., value = ... or children = {...}}")
        }
        let tag = try tagValue(element["tag"], where: name)
        let constructed = TLV(tag: tag, value: []).isConstructed
        var bytes: [UInt8]?
        switch element["value"] {
        case .nil: break
        case .string(let given): bytes = given
        case let other: throw LuaArgumentError(1, "\(name): 'value' must be a string of bytes, got \(other.typeName)")
        }
        switch element["children"] {
        case .nil:
            guard let bytes else { throw LuaArgumentError(1, "\(name) (tag \(hex(tag))) needs 'value' (bytes) or 'children' (a list)") }
            return TLV(tag: tag, value: bytes).encoded()
        case .table(let list):
            guard constructed else {
                throw LuaArgumentError(1, "\(name): tag \(hex(tag)) is primitive (bit 6 of its first byte is clear), so it takes "
                    + "'value', not 'children'")
            }
            guard list.fields.isEmpty else { throw LuaArgumentError(1, "\(name): 'children' must be a list of elements") }
            var inner: [UInt8] = []
            for (i, child) in list.array.enumerated() {
                inner += try encode(child, where: "\(name).children[\(i + 1)]", depth: depth + 1)
            }
            // tlv_parse gives both for constructed tags; accept that as long as they agree.
            if let bytes, bytes != inner {
                throw LuaArgumentError(1, "\(name) (tag \(hex(tag))) has 'value' and 'children' that disagree; give only one")
            }
            return TLV(tag: tag, value: inner).encoded()
        case let other:
            throw LuaArgumentError(1, "\(name): 'children' must be a list of elements, got \(other.typeName)")
        }
    }

    /// A tag as an integer holding its 1-4 bytes (0x80, 0xA4, 0x5F20, 0x9F7F2A): the bytes must read back
    /// as exactly one BER tag, so that tlv_parse gives the same tag.
    static func tagValue(_ value: LuaValue, where name: String) throws -> UInt32 {
        let raw: Int64
        switch value {
        case .integer(let n): raw = n
        case .number(let n) where Int64(exactly: n) != nil: raw = Int64(n)
        case .nil: throw LuaArgumentError(1, "\(name) has no 'tag'")
        default: throw LuaArgumentError(1, "\(name): 'tag' must be an integer such as 0x80 or 0x5F20, got \(value.typeName)")
        }
        guard (0...0xFFFF_FFFF).contains(raw) else {
            throw LuaArgumentError(1, "\(name): tag \(raw) is out of range; a tag has 1 to 4 bytes (0x00...0xFFFFFFFF)")
        }
        var tagBytes: [UInt8] = []
        var rest = UInt32(raw)
        repeat {
            tagBytes.insert(UInt8(truncatingIfNeeded: rest), at: 0)
            rest >>= 8
        } while rest > 0
        let multi = tagBytes[0] & 0x1F == 0x1F
        let valid: Bool
        if tagBytes.count == 1 {
            valid = !multi
        } else {
            valid = multi && tagBytes.dropFirst().dropLast().allSatisfy { $0 & 0x80 != 0 } && tagBytes.last! & 0x80 == 0
        }
        guard valid else {
            let why = tagBytes.count == 1
                ? "its low five bits are all set, which announces more tag bytes"
                : "a multi-byte tag starts with a byte whose low five bits are all set (xF or x1F), and every later byte but the last has bit 8 set"
            throw LuaArgumentError(1, "\(name): \(hex(UInt32(raw))) is not a BER-TLV tag: \(why)")
        }
        return UInt32(raw)
    }

    // MARK: status words

    /// ISO 7816-4's meaning of SW1 when SW2 has no name of its own.
    static func groupName(_ sw: StatusWord) -> String? {
        let group: String
        switch sw.sw1 {
        case 0x61: return sw.sw2 == 0 ? "256 or more response bytes still available" : "\(sw.sw2) response bytes still available"
        case 0x6C: return "wrong Le field; \(sw.sw2 == 0 ? 256 : Int(sw.sw2)) is the exact length available"
        case 0x62: group = "warning, non-volatile memory unchanged"
        case 0x63: group = "warning, non-volatile memory changed"
        case 0x64: group = "execution error, non-volatile memory unchanged"
        case 0x65: group = "execution error, non-volatile memory changed"
        case 0x66: group = "security-related issue"
        case 0x67: group = "wrong length"
        case 0x68: group = "functions in CLA not supported"
        case 0x69: group = "command not allowed"
        case 0x6A: group = "wrong parameters P1-P2"
        case 0x6B: group = "wrong parameters P1-P2"
        case 0x6D: group = "instruction code not supported"
        case 0x6E: group = "class not supported"
        case 0x6F: group = "no precise diagnosis"
        default: return nil
        }
        return "\(group) (SW2 \(hexByte(sw.sw2).dropFirst(2)))"
    }
}

/// Malformed BER-TLV given to `tlv_parse`: `{kind = "invalid_tlv", offset = n, message = ...}`, offset 0-based
/// into the string passed; raised as its StructuredError table (RecordLua's default).
struct TLVParseError: StructuredError, LuaErrorConvertible {
    let offset: Int
    let text: String

    init(offset: Int, _ text: String) {
        self.offset = offset
        self.text = text
    }

    var description: String { "malformed BER-TLV at offset \(offset): \(text)" }
    var errorKind: String { "invalid_tlv" }
    var errorFields: [(String, Record)] { [("offset", .integer(Int64(offset)))] }
}

private func hex(_ tag: UInt32) -> String {
    var digits = String(tag, radix: 16, uppercase: true)
    if digits.count % 2 == 1 { digits = "0" + digits }
    return "0x" + digits
}

private func bytesText(_ n: Int) -> String { n == 1 ? "1 byte" : "\(n) bytes" }

private func hexByte(_ byte: UInt8) -> String {
    let digits = String(byte, radix: 16, uppercase: true)
    return "0x" + (digits.count == 1 ? "0" + digits : digits)
}
