/// A command APDU (ISO 7816-4 cases 1–4) in short or extended form.
///
/// Short form carries up to 255 data bytes and Le up to 256; longer values, or `forceExtended`,
/// select the extended form (3-byte Lc `00 hi lo`, 2- or 3-byte Le).
public struct CommandAPDU: Equatable, Sendable, CustomStringConvertible {
    public var cla: UInt8
    public var ins: UInt8
    public var p1: UInt8
    public var p2: UInt8
    public var data: [UInt8]
    /// Expected response length: nil for none (cases 1 and 3); 256 (short) or 65 536 (extended) mean "all".
    public var le: Int?
    /// Use the extended encoding even when the short one would do.
    public var forceExtended: Bool

    public static let maxShortData = 255
    public static let maxExtendedData = 65_535

    public init(cla: UInt8, ins: UInt8, p1: UInt8 = 0, p2: UInt8 = 0, data: [UInt8] = [], le: Int? = nil,
                forceExtended: Bool = false) {
        self.cla = cla; self.ins = ins; self.p1 = p1; self.p2 = p2
        self.data = data; self.le = le; self.forceExtended = forceExtended
    }

    /// Whether `encoded()` uses the extended form.
    public var isExtended: Bool {
        forceExtended || data.count > CommandAPDU.maxShortData || (le ?? 0) > 256
    }

    /// The bytes to send.
    public func encoded() throws -> [UInt8] {
        guard data.count <= CommandAPDU.maxExtendedData else {
            throw APDUError.dataTooLong(data.count, maximum: CommandAPDU.maxExtendedData)
        }
        if let le, !(0...65_536).contains(le) { throw APDUError.expectedLengthOutOfRange(le) }
        var out: [UInt8] = [cla, ins, p1, p2]
        if !isExtended {
            if !data.isEmpty { out.append(UInt8(data.count)); out += data }
            if let le { out.append(UInt8(truncatingIfNeeded: le)) }  // 256 encodes as 00
            return out
        }
        let count = UInt32(data.count)
        if !data.isEmpty {
            out += [0x00, UInt8(truncatingIfNeeded: count >> 8), UInt8(truncatingIfNeeded: count)]
            out += data
        }
        if let le {
            let value = UInt32(le)  // 65 536 encodes as 00 00
            if data.isEmpty { out.append(0x00) }
            out += [UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
        }
        return out
    }

    /// Parses any of the seven ISO 7816-4 encodings (what a card or a replay sees).
    public init(bytes: [UInt8]) throws {
        guard bytes.count >= 4 else { throw APDUError.truncated(bytes.count, needed: 4) }
        self.init(cla: bytes[0], ins: bytes[1], p1: bytes[2], p2: bytes[3])
        let body = Array(bytes[4...])
        switch body.count {
        case 0:
            return
        case 1:
            le = body[0] == 0 ? 256 : Int(body[0])
            return
        default:
            break
        }
        if body[0] != 0 {
            // Short: Lc data [Le]
            let lc = Int(body[0])
            guard body.count == 1 + lc || body.count == 2 + lc else {
                throw APDUError.malformedCommand("short Lc \(lc) does not match \(body.count - 1) remaining bytes")
            }
            data = Array(body[1..<(1 + lc)])
            if body.count == 2 + lc { le = body[1 + lc] == 0 ? 256 : Int(body[1 + lc]) }
            return
        }
        // Extended: body[0] == 0
        forceExtended = true
        if body.count == 3 {
            let value = Int(body[1]) << 8 | Int(body[2])
            le = value == 0 ? 65_536 : value
            return
        }
        guard body.count >= 3 else { throw APDUError.malformedCommand("extended length field cut short") }
        let lc = Int(body[1]) << 8 | Int(body[2])
        guard lc > 0, body.count == 3 + lc || body.count == 5 + lc else {
            throw APDUError.malformedCommand("extended Lc \(lc) does not match \(body.count - 3) remaining bytes")
        }
        data = Array(body[3..<(3 + lc)])
        if body.count == 5 + lc {
            let value = Int(body[3 + lc]) << 8 | Int(body[4 + lc])
            le = value == 0 ? 65_536 : value
        }
    }

    /// Header and length only: command data may hold PINs and keys.
    public var description: String {
        let head = [cla, ins, p1, p2].map { byteHex($0) }.joined(separator: " ")
        return "CommandAPDU(\(head), \(data.count) data bytes\(le.map { ", Le \($0)" } ?? ""))"
    }
}

func byteHex(_ b: UInt8) -> String {
    let digits = Array("0123456789ABCDEF")
    return String([digits[Int(b >> 4)], digits[Int(b & 0x0F)]])
}
