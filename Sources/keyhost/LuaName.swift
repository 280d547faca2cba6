/// Lua names as the command line takes them (`-l NAME=MODULE`, `--program keyhost.cash`): ASCII
/// letters, digits and `_`, not starting with a digit; a module name is such names joined by dots.
enum LuaName {
    static func isName(_ text: some StringProtocol) -> Bool {
        guard let first = text.first, first == "_" || (first.isASCII && first.isLetter) else { return false }
        return text.allSatisfy { $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) }
    }

    static func isModule(_ text: String) -> Bool {
        text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { isName($0) }
    }
}
