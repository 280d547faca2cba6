/// Splits Lua source into string literals, comments and the code between them (a lexer for just that much).
enum LuaLiterals {
    struct Piece {
        enum Kind { case code, string, comment }
        let kind: Kind
        let text: [UInt8]
        var isLiteral: Bool { kind != .code }
        var isString: Bool { kind == .string }
    }

    static func split(_ s: [UInt8]) -> [Piece] {
        var pieces: [Piece] = []
        var code: [UInt8] = []
        var i = 0
        func flushCode() {
            if !code.isEmpty { pieces.append(Piece(kind: .code, text: code)) }
            code = []
        }
        /// The level of a long bracket `[==[` starting at `at`, or nil.
        func longBracket(_ at: Int) -> Int? {
            guard at < s.count, s[at] == 0x5B else { return nil }
            var j = at + 1
            while j < s.count && s[j] == 0x3D { j += 1 }
            return j < s.count && s[j] == 0x5B ? j - at - 1 : nil
        }
        /// Reads a long-bracket body from `start` (just after the opening bracket); returns its text and the end.
        func longBody(_ start: Int, level: Int) -> ([UInt8], Int) {
            let close = [0x5D] + [UInt8](repeating: 0x3D, count: level) + [0x5D]
            var j = start
            while j + close.count <= s.count {
                if s[j] == 0x5D && Array(s[j..<j + close.count]) == close { return (Array(s[start..<j]), j + close.count) }
                j += 1
            }
            return (Array(s[start...]), s.count)
        }
        while i < s.count {
            let c = s[i]
            if c == 0x2D && i + 1 < s.count && s[i + 1] == 0x2D {  // --
                flushCode()
                if let level = longBracket(i + 2) {
                    let (body, end) = longBody(i + 2 + level + 2, level: level)
                    pieces.append(Piece(kind: .comment, text: body))
                    i = end
                } else {
                    var j = i + 2
                    while j < s.count && s[j] != 0x0A { j += 1 }
                    pieces.append(Piece(kind: .comment, text: Array(s[(i + 2)..<j])))
                    i = j
                }
            } else if c == 0x22 || c == 0x27 {  // " or '
                flushCode()
                var body: [UInt8] = []
                var j = i + 1
                while j < s.count && s[j] != c && s[j] != 0x0A {
                    if s[j] == 0x5C, j + 1 < s.count { body.append(s[j + 1]); j += 2 } else { body.append(s[j]); j += 1 }
                }
                pieces.append(Piece(kind: .string, text: body))
                i = j + 1
            } else if let level = longBracket(i) {
                flushCode()
                let (body, end) = longBody(i + level + 2, level: level)
                pieces.append(Piece(kind: .string, text: body))
                i = end
            } else {
                code.append(c)
                i += 1
            }
        }
        flushCode()
        return pieces
    }
}
