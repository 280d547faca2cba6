import CPCSCLite

#if canImport(Glibc)
import Glibc
#endif

/// How a connection shares the card with other applications.
public enum PCSCShareMode: Sendable {
    case shared, exclusive

    var rawValue: UInt32 { self == .shared ? 0x0002 : 0x0001 }  // SCARD_SHARE_SHARED / _EXCLUSIVE
}

/// Transmission protocols to offer in SCardConnect; the card and reader pick one.
public struct PCSCProtocols: OptionSet, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let t0 = PCSCProtocols(rawValue: 0x0001)  // SCARD_PROTOCOL_T0
    public static let t1 = PCSCProtocols(rawValue: 0x0002)  // SCARD_PROTOCOL_T1
    public static let any: PCSCProtocols = [.t0, .t1]

    public var description: String {
        switch self {
        case .t0: return "T=0"
        case .t1: return "T=1"
        case .any: return "T=0|T=1"
        default: return "protocols 0x\(String(rawValue, radix: 16))"
        }
    }
}

/// One reader and what is in it.
public struct PCSCReaderState: Equatable, Sendable {
    public var name: String
    public var cardPresent: Bool
    /// Another application holds the card exclusively.
    public var exclusive: Bool
    /// The card's ATR when one is present.
    public var atr: [UInt8]
}

// pcsc-lite's SCARD_STATE_* bits.
private let stateUnaware: UInt32 = 0x0000
private let stateChanged: UInt32 = 0x0002
private let stateUnknown: UInt32 = 0x0004
private let statePresent: UInt32 = 0x0020
private let stateExclusive: UInt32 = 0x0080
private let infinite: UInt32 = 0xFFFF_FFFF

/// A PC/SC resource manager context (SCARDCONTEXT), released in `deinit`. Not for concurrent use.
public final class PCSCContext {
    let handle: SCARDCONTEXT

    /// Establishes a user-scope context; throws `.noService` when pcscd is not running.
    public init() throws {
        var context: SCARDCONTEXT = 0
        try pcscCheck(SCardEstablishContext(0x0000 /* SCARD_SCOPE_USER */, nil, nil, &context), "SCardEstablishContext")
        handle = context
    }

    deinit { _ = SCardReleaseContext(handle) }

    /// Reader names, in pcscd's order; empty when no reader is connected.
    public func readers() throws -> [String] {
        var length: DWORD = 0
        var result = SCardListReaders(handle, nil, nil, &length)
        if PCSCResultCode(rawValue: UInt32(truncatingIfNeeded: result)) == .noReadersAvailable { return [] }
        try pcscCheck(result, "SCardListReaders")
        var buffer = [CChar](repeating: 0, count: Int(length))
        result = SCardListReaders(handle, nil, &buffer, &length)
        if PCSCResultCode(rawValue: UInt32(truncatingIfNeeded: result)) == .noReadersAvailable { return [] }
        try pcscCheck(result, "SCardListReaders")
        return PCSCContext.splitMultiString(Array(buffer.prefix(Int(length))))
    }

    /// Splits a PC/SC multi-string (names each ended by NUL, the list by an extra NUL).
    static func splitMultiString(_ chars: [CChar]) -> [String] {
        var names: [String] = []
        var current: [UInt8] = []
        for c in chars {
            if c == 0 {
                if current.isEmpty { break }
                names.append(String(decoding: current, as: UTF8.self))
                current = []
            } else {
                current.append(UInt8(bitPattern: c))
            }
        }
        if !current.isEmpty { names.append(String(decoding: current, as: UTF8.self)) }
        return names
    }

    /// Every reader with whether a card is in it.
    public func readerStates() throws -> [PCSCReaderState] {
        let names = try readers()
        if names.isEmpty { return [] }
        return try statusChange(names, known: nil, timeoutMilliseconds: 0)
    }

    /// Calls SCardGetStatusChange for `names`; `known` are the event states from a previous call (nil: unaware).
    /// A timeout answers the states as they are.
    private func statusChange(_ names: [String], known: [UInt32]?, timeoutMilliseconds: UInt32) throws -> [PCSCReaderState] {
        let cNames = names.map { strdup($0) }
        defer { cNames.forEach { free($0) } }
        var states = cNames.enumerated().map { i, name -> SCARD_READERSTATE in
            var state = SCARD_READERSTATE()
            state.szReader = UnsafePointer(name)
            state.dwCurrentState = DWORD(known?[i] ?? stateUnaware)
            return state
        }
        let result = SCardGetStatusChange(handle, DWORD(timeoutMilliseconds), &states, DWORD(states.count))
        let code = PCSCResultCode(rawValue: UInt32(truncatingIfNeeded: result))
        if code != .timeout { try pcscCheck(result, "SCardGetStatusChange") }
        return zip(names, states).map { name, state in
            let event = UInt32(truncatingIfNeeded: state.dwEventState)
            var atr = withUnsafeBytes(of: state.rgbAtr) { Array($0) }
            atr = Array(atr.prefix(min(Int(state.cbAtr), atr.count)))
            let present = event & statePresent != 0
            return PCSCReaderState(name: name, cardPresent: present, exclusive: event & stateExclusive != 0, atr: present ? atr : [])
        }
    }

    /// The event bits of `names` right now (for waiting on changes).
    private func eventBits(_ names: [String]) throws -> [UInt32] {
        try statusChange(names, known: nil, timeoutMilliseconds: 0).map { state in
            (state.cardPresent ? statePresent : 0) | (state.exclusive ? stateExclusive : 0)
        }
    }

    /// Waits until a card is in `reader` (or, with nil, in any reader) and returns that reader's name.
    /// `timeout` nil waits forever; otherwise throws `.timeout` after that many seconds.
    public func waitForCard(reader: String? = nil, timeout: Double? = nil) throws -> String {
        let deadline = timeout.map { monotonicSeconds() + $0 }
        while true {
            let names = try reader.map { [try resolve(reader: $0)] } ?? readers()
            if !names.isEmpty {
                let states = try statusChange(names, known: nil, timeoutMilliseconds: 0)
                if let found = states.first(where: { $0.cardPresent }) { return found.name }
            }
            let remaining = deadline.map { $0 - monotonicSeconds() }
            if let remaining, remaining <= 0 {
                throw PCSCError(.timeout, operation: "waiting for a card" + (reader.map { " in \($0)" } ?? ""),
                                detail: "waited \(timeout ?? 0) s")
            }
            // Sleep in SCardGetStatusChange until something changes (or 1 s, to notice new readers).
            let slice = min(remaining ?? 1, 1)
            let ms = UInt32(max(1, slice * 1000))
            if names.isEmpty {
                usleep(ms * 1000)
            } else {
                _ = try statusChange(names, known: try eventBits(names), timeoutMilliseconds: ms)
            }
        }
    }

    /// The exact reader name, or `.unknownReader` listing the readers there are.
    func resolve(reader name: String) throws -> String {
        let names = try readers()
        if names.contains(name) { return name }
        throw PCSCError(.unknownReader, operation: "finding reader \"\(name)\"",
                        detail: names.isEmpty ? "no readers are connected" : "readers: " + names.map { "\"\($0)\"" }.joined(separator: ", "))
    }

    /// Connects to the card in the reader called exactly `reader`.
    public func connect(reader: String, mode: PCSCShareMode = .shared, protocols: PCSCProtocols = .any) throws -> PCSCCard {
        try PCSCCard(context: self, reader: reader, mode: mode, protocols: protocols)
    }

    /// Connects to the card in the reader at `index` of `readers()`.
    public func connect(index: Int, mode: PCSCShareMode = .shared, protocols: PCSCProtocols = .any) throws -> PCSCCard {
        let names = try readers()
        guard !names.isEmpty else { throw PCSCError(.noReadersAvailable, operation: "connecting to reader #\(index)") }
        guard names.indices.contains(index) else {
            throw PCSCError(.unknownReader, operation: "connecting to reader #\(index)",
                            detail: "there are \(names.count) readers, numbered from 0")
        }
        return try connect(reader: names[index], mode: mode, protocols: protocols)
    }

    /// Connects to the first reader (in pcscd's order) that holds a card.
    public func connectFirstCard(mode: PCSCShareMode = .shared, protocols: PCSCProtocols = .any) throws -> PCSCCard {
        let states = try readerStates()
        guard !states.isEmpty else { throw PCSCError(.noReadersAvailable, operation: "looking for a card") }
        guard let reader = states.first(where: { $0.cardPresent }) else {
            throw PCSCError(.noSmartcard, operation: "looking for a card",
                            detail: "readers without a card: " + states.map { "\"\($0.name)\"" }.joined(separator: ", "))
        }
        return try connect(reader: reader.name, mode: mode, protocols: protocols)
    }
}

func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
