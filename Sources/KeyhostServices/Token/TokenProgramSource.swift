import KeyhostFiles
#if canImport(Glibc)
import Glibc
#endif

/// Where a token's program comes from, for both front ends: `keyhost token issue --program keyhost.cash` and
/// Lua's `token.issue{program = "keyhost.cash"}` name a module of keyhost's stdlib the same way. A dotted Lua
/// name (`a.b`, at least one dot) can never be a program's source (as Lua it is an expression, not a statement; a
/// lone name can be, `return`), so it is taken for the module; anything else is the program itself (Lua) or a
/// file (the command line, which tries a file first).
public enum TokenProgramSource {
    /// The largest program file read.
    public static let limit = 16 * BoundedFile.mebibyte

    /// Whether `text` is a Lua module name: names (ASCII letters, digits and `_`, not starting with a digit)
    /// joined by dots, as `require` takes them.
    public static func isModuleName(_ text: String) -> Bool {
        text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy(isName)
    }

    public static func isName(_ text: some StringProtocol) -> Bool {
        guard let first = text.first, first == "_" || (first.isASCII && first.isLetter) else { return false }
        return text.allSatisfy { $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) }
    }

    /// The source of stdlib module `name` (`keyhost.cash` → stdlib/keyhost/cash.lua), wherever keyhost is installed.
    public static func stdlibModule(_ name: String, stdlib: String? = KeyhostStdlib.directory) throws -> [UInt8] {
        let relative = name.split(separator: ".").joined(separator: "/") + ".lua"
        guard let stdlib, access(stdlib + "/" + relative, F_OK) == 0 else {
            throw TokenProgramSourceError("no module \(name) in keyhost's stdlib\(stdlib.map { " (\($0))" } ?? ""); name one such as keyhost.cash")
        }
        do { return try BoundedFile.read(stdlib + "/" + relative, limit: limit) } catch let error as BoundedFile.ReadError {
            throw TokenProgramSourceError("cannot read \(stdlib)/\(relative): \(error.problem)")
        }
    }

    /// A program given as text (Lua's `program` option): a module name is that stdlib module, anything else the source.
    public static func program(text: [UInt8]) throws -> [UInt8] {
        guard text.count <= 200, let name = String(validating: text, as: UTF8.self), name.contains("."), isModuleName(name) else { return text }
        return try stdlibModule(name)
    }
}

/// A program that cannot be found or read; the text says which and why.
public struct TokenProgramSourceError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
