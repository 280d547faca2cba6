import KeyhostRecord

/// The one shape of a discovery result: `discovery.scan` returns it as a Lua table, `keyhost discover --json` prints it.
extension DiscoveryResult {
    public var record: Record {
        let t = totals
        return .object([
            ("scheme", .string(scheme)), ("template", .string(template)), ("coin", .string(coin)), ("kind", .string(addressKind)),
            ("key_source", .string(keySource)), ("usage_source", .string(usageSource)),
            ("gap_limits", .object([("receive", .integer(receiveGapLimit)), ("change", .integer(changeGapLimit)),
                                    ("account", .integer(accountGapLimit))])),
            ("accounts", .array(accounts.map(\.record))),
            ("totals", .object([
                ("accounts_scanned", .integer(t.accountsScanned)), ("accounts_used", .integer(t.accountsUsed)),
                ("addresses_checked", .integer(t.addressesChecked)), ("used_addresses", .integer(t.usedAddresses)),
                ("addresses_queried", .integer(t.addressesQueried)), ("addresses_from_checkpoint", .integer(t.addressesFromCheckpoint)),
            ])),
            ("notes", .array(notes.map { .string($0) })),
        ])
    }
}

extension AccountReport {
    public var record: Record {
        .object([
            ("account", .integer(account)),
            ("path", .string(keyPath)),
            ("xpub", .string(extendedPublicKey)),
            ("used", .array(usedAddresses.map(\.record))),
            ("last_used", .object([("receive", .integer(lastUsedReceiveIndex)), ("change", .integer(lastUsedChangeIndex))])),
            ("receive_checked", .integer(receiveAddressesChecked)),
            ("change_checked", .integer(changeAddressesChecked)),
            ("gap_reached", .bool(gapReached)),
            ("is_used", .bool(isUsed)),
            ("descriptors", descriptors.map { list in
                .object([("receive", .string(list.first)), ("change", .string(list.count > 1 ? list[1] : nil))])
            } ?? .null),
        ])
    }
}

extension UsedAddress {
    public var record: Record {
        .object([("address", .string(address)), ("chain", .string(chain == 0 ? "receive" : "change")),
                 ("index", .integer(Int64(index))), ("path", .string(path))])
    }
}
