import KeyhostCrypto
import KeyhostRecord

/// The renderings the CLI prints: CSV for spreadsheets, a table for people (JSON is `record`, the one both
/// front ends print).
extension DiscoveryResult {
    /// One row per used address: account,chain,index,path,address,account_xpub (RFC 4180, CRLF-free).
    public func csv() -> String {
        var lines = ["account,chain,index,path,address,account_xpub"]
        for account in accounts {
            for used in account.usedAddresses {
                lines.append([account.account.map(String.init) ?? "", used.chain == 0 ? "receive" : "change", String(used.index),
                              used.path, used.address, account.extendedPublicKey ?? ""].map(Self.csvField).joined(separator: ","))
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A fixed-width table of accounts and their used addresses, then totals and notes, for a terminal.
    public func table() -> String {
        var out = ["\(scheme) \(template) (\(addressKind), \(coin))",
                   "keys: \(keySource)", "usage: \(usageSource)",
                   "gap limits: receive \(receiveGapLimit), change \(changeGapLimit), accounts \(accountGapLimit)", ""]
        let header = ["account", "chain", "index", "path", "address"]
        var rows = [[String]]()
        for account in accounts {
            let name = account.account.map(String.init) ?? "-"
            if account.usedAddresses.isEmpty {
                rows.append([name, "", "", account.keyPath, "(empty: \(account.receiveAddressesChecked + account.changeAddressesChecked) checked)"])
            }
            for used in account.usedAddresses {
                rows.append([name, used.chain == 0 ? "receive" : "change", String(used.index), used.path, used.address])
            }
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { $0 + String(repeating: " ", count: max(0, $1 - $0.count)) }.joined(separator: "  ")
                .trimmingWhitespace()
        }
        out.append(line(header))
        out.append(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  "))
        out += rows.map(line)
        out.append("")
        for account in accounts where account.isUsed {
            let last = [account.lastUsedReceiveIndex.map { "receive \($0)" }, account.lastUsedChangeIndex.map { "change \($0)" }]
                .compactMap { $0 }.joined(separator: ", ")
            out.append("account \(account.account.map(String.init) ?? account.keyPath): \(account.usedAddresses.count) used, last used \(last)"
                + (account.extendedPublicKey.map { "\n  \($0)" } ?? "")
                + (account.descriptors.map { list in "\n  descriptors:" + list.map { "\n    \($0)" }.joined() } ?? ""))
        }
        out.append("totals: \(totals.accountsUsed) of \(totals.accountsScanned) accounts used, \(totals.usedAddresses) used addresses, "
            + "\(totals.addressesChecked) checked (\(totals.addressesQueried) queried, \(totals.addressesFromCheckpoint) from checkpoint)")
        out += notes.map { "note: \($0)" }
        // The key source's label, the source's name and notes quote what users and servers wrote.
        return TerminalText.escaped(out.joined(separator: "\n") + "\n", keepingLineBreaks: true)
    }

    /// One CSV field, quoted when it holds a comma, a quote or a line break (RFC 4180).
    public static func csvField(_ text: String) -> String {
        text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" })
            ? "\"" + text.replacing("\"", with: "\"\"") + "\"" : text
    }
}
