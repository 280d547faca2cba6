import KeyhostCard
import KeyhostServices
import LuaRuntime

/// A card failure as Lua sees it: a table with `kind`, `sw`, `sw_name`, `retries_left`, `command`, `ca_key` and
/// `message`, whose `tostring` reads `wrong PIN: 2 tries left (SW 63C2 from VERIFY PIN)` (the service's fields).
extension CardServiceError: LuaErrorConvertible {}

/// Runs `body`, turning card-stack errors into structured Lua errors; Lua's own errors pass as they are.
func cardCall<R>(_ command: String?, _ body: () throws -> R) throws -> R {
    do {
        return try body()
    } catch let error where error is LuaArgumentError || error is LuaRaisedError || error is LuaErrorConvertible {
        throw error
    } catch {
        throw CardServiceError.from(error, command: command)
    }
}
