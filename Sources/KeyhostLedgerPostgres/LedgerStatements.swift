// The statements every deposit sends, prepared once per connection: PostgreSQL then parses and
// plans them once, not at each deposit, and the client sends and decodes fewer messages.

import KeyhostLedger
import PostgresNIO

/// `INSERT … ON CONFLICT DO NOTHING RETURNING 1`: a row when the deposit is new, none when its
/// token id is recorded already.
struct InsertDeposit: PostgresPreparedStatement {
    static let name = "keyhost_insert_deposit"
    static let sql = """
        INSERT INTO deposits (token_id, chain_hash, chain, issuer, value, unit, deposit_time)
        VALUES ($1, $2, $3, $4, $5::numeric, $6, $7)
        ON CONFLICT (token_id) DO NOTHING RETURNING 1
        """
    typealias Row = Int32

    let deposit: DepositRecord

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 7)
        bindings.append(ByteBuffer(bytes: deposit.tokenID))
        bindings.append(ByteBuffer(bytes: deposit.chainHash))
        bindings.append(ByteBuffer(bytes: deposit.chain))
        bindings.append(ByteBuffer(bytes: deposit.issuer))
        bindings.append(String(deposit.value))
        bindings.append(deposit.unit)
        bindings.append(deposit.depositTime)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Int32 { try row.decode(Int32.self) }
}

/// A statement without parameters or rows (BEGIN, COMMIT).
protocol PlainStatement: PostgresPreparedStatement where Row == () {}

extension PlainStatement {
    func makeBindings() throws -> PostgresBindings { PostgresBindings() }
    func decodeRow(_ row: PostgresRow) throws {}
}

struct Begin: PlainStatement {
    static let name = "keyhost_begin"
    static let sql = "BEGIN"
}

struct Commit: PlainStatement {
    static let name = "keyhost_commit"
    static let sql = "COMMIT"
}
