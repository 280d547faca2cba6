import KeyhostFiles
import KeyhostLedger
import KeyhostRecord
import KeyhostServices
import Testing

/// Results both front ends print from the services: the ledger's stats and a token program named by module.
@Suite struct SharedRecordTests {
    @Test func ledgerStatsHaveTheServicesShape() throws {
        let stats = LedgerStats(tokens: 3, totals: ["EUR-cent": "18446744073709551620", "CHF-rappen": "7"],
                                tokensByUnit: ["EUR-cent": 2, "CHF-rappen": 1], doubleSpends: 1)
        // The same shape as the ledger service's GET /v1/stats (docs/ledger.md): units sorted, totals as decimal
        // text, since a sum of 64-bit values can pass 2^64 (as the EUR total here does).
        let json = Record(ledgerStats: stats).json(pretty: false)
        #expect(json == #"{"double_spends": 1, "tokens": 3, "units": [{"tokens": 1, "total": "7", "unit": "CHF-rappen"}, {"tokens": 2, "total": "18446744073709551620", "unit": "EUR-cent"}]}"#)
    }

    @Test func aModuleNameIsThatStdlibFile() throws {
        let stdlib = try #require(KeyhostStdlib.directory)
        let file = try BoundedFile.read(stdlib + "/keyhost/cash.lua", limit: BoundedFile.mebibyte)
        #expect(try TokenProgramSource.program(text: Array("keyhost.cash".utf8)) == file)
        // Anything that is not a dotted name is the program itself: a lone name is valid Lua.
        for text in ["return", "return 1", "keyhost.cash()", "keyhost..cash", ".cash"] {
            #expect(try TokenProgramSource.program(text: Array(text.utf8)) == Array(text.utf8), "\(text)")
        }
        let error = #expect(throws: TokenProgramSourceError.self) { try TokenProgramSource.program(text: Array("keyhost.nosuch".utf8)) }
        #expect(error?.description.hasPrefix("no module keyhost.nosuch in keyhost's stdlib") == true)
    }
}
