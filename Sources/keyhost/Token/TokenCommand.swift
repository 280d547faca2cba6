import ArgumentParser

/// `keyhost token …`: one-time token programs.
struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Issue and inspect one-time token programs.",
        subcommands: [TokenInspect.self, TokenIssue.self, TokenWorkerCommand.self]
    )
}
