import Testing
@testable import keyhost

/// `keyhost token run`'s hand-read shape takes exactly ids and one --wallet, and leaves every other
/// command line to the argument parser (so help, typos and options keep the parser's behaviour).
@Suite struct TokenRunPlainTests {
    @Test func idsAndOneWalletAreRead() {
        #expect(TokenRun.Plain(["abcd"]) == TokenRun.Plain(wallet: nil, ids: ["abcd"]))
        #expect(TokenRun.Plain(["--wallet", "w.db", "abcd", "ef01"]) == TokenRun.Plain(wallet: "w.db", ids: ["abcd", "ef01"]))
        #expect(TokenRun.Plain(["abcd", "--wallet", "w.db"]) == TokenRun.Plain(wallet: "w.db", ids: ["abcd"]))
        #expect(TokenRun.Plain(["--wallet=dir/w.db", "abcd"]) == TokenRun.Plain(wallet: "dir/w.db", ids: ["abcd"]))
    }

    @Test(arguments: [
        [], ["--wallet", "w.db"], ["abcd", "--json"], ["abcd", "--help"], ["-h"], ["abcd", "--wallet"], ["abcd", "--wallet", "-x"],
        ["abcd", "--wallet="], ["abcd", "--wallet", "a", "--wallet", "b"], ["abcd", "--arg", "k=v"], ["abcd", "--int", "n=1"],
        ["abcd", "--receipt", "r"], ["abcd", "--reader", "virtual"], ["abcd", "--card-state", "s"], ["--", "abcd"], ["abcd", ""],
        ["abcd", "--walet", "w.db"], ["abcd", "-w", "w.db"],
    ])
    func everythingElseGoesToTheParser(arguments: [String]) {
        #expect(TokenRun.Plain(arguments) == nil, "\(arguments)")
    }
}
