import ArgumentParser

/// `keyhost token …`: one-time token programs.
struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "One-time token programs: issue, import, run once, and check receipts.",
        subcommands: [
            TokenWalletCommand.self, TokenIssue.self, TokenImport.self, TokenList.self, TokenInspect.self, TokenRun.self,
            TokenReceipt.self, TokenVerifyReceipt.self, TokenTrust.self, TokenKeys.self, TokenRequest.self, TokenPay.self, TokenReceive.self, TokenWorkerCommand.self,
            TokenDepositChains.self, TokenDeposit.self, TokenVerifyProof.self, TokenLedgerCommand.self,
        ]
    )
}
