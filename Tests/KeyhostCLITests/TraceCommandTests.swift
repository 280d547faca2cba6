import Foundation
import Testing

/// `KEYHOST_TRACE` end to end: a script on the virtual card, the trace on standard error.
@Suite struct TraceCommandTests {
    static let script = """
        local card = require "keyhost.card"
        local s <close> = card.open { reader = "virtual", applet = "3.2", seed = 5 }
        s:init { pin = "246813", puk = "864209753124", pairing_password = "KeycardTest" }
        s:auto { pin = "246813", pairing_password = "KeycardTest" }
        local _, indexes = s:generate_mnemonic(12)
        local hex = {}
        for i, index in ipairs(indexes) do hex[i] = string.format("%04X", index) end
        print(table.concat(hex))
        -- An ISO VERIFY sent raw, outside the secure channel and with CLA 00.
        s:transmit("\\x00\\x20\\x00\\x80\\x06" .. "975312")
        """

    @Test(arguments: ["apdu", "apdu,plaintext"])
    func generatedMnemonicAndRawVerifyStayOutOfTheTrace(_ mode: String) throws {
        let dir = try Keyhost.scratch(["trace.lua": Self.script])
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try Keyhost.run(["run", "trace.lua"], cwd: dir, environment: ["KEYHOST_TRACE": mode])
        #expect(run.status == 0, "\(run.stderr)")
        let indexes = run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(indexes.count == 48)
        let trace = String(run.stderr.uppercased().filter(\.isHexDigit))
        #expect(run.stderr.contains(">> 00 20 00 80 06 [6 bytes redacted]"), "\(run.stderr)")
        #expect(!trace.contains("393735333132"), "the raw VERIFY's PIN")
        #expect(!trace.contains("323436383133"), "the PIN")
        #expect(!trace.contains(indexes), "GENERATE MNEMONIC's word indexes")
        if mode == "apdu,plaintext" {
            #expect(run.stderr.contains("   plaintext >> 80 D2 04 00"), "\(run.stderr)")
            #expect(run.stderr.contains("   plaintext << [24 bytes redacted] 9000"), "\(run.stderr)")
        }
    }
}
