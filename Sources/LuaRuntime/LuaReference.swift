import CKeyhostLua
import CLua

/// A Lua value kept alive in the registry (a function, userdata, thread or a table kept as is).
public final class LuaReference: Hashable, @unchecked Sendable {
    let ref: Int32
    let owner: LuaState.Owner
    /// Lua's type name of the referenced value.
    public let typeName: String

    init(ref: Int32, typeName: String, owner: LuaState.Owner) {
        self.ref = ref
        self.typeName = typeName
        self.owner = owner
    }

    deinit {
        // The state may already be closed; then there is nothing to release.
        if let L = owner.L { luaL_unref(L, kh_registryindex(), ref) }
    }

    public static func == (a: LuaReference, b: LuaReference) -> Bool { a === b }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
