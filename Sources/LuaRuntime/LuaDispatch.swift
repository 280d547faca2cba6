import CKeyhostLua
import CLua

/// A Swift function callable from Lua: reads arguments from the context, pushes results, returns their count.
public typealias LuaFunctionBody = (LuaContext) throws -> Int32

/// Boxes a Swift closure so a C closure's upvalue can carry it.
final class FunctionBox {
    let body: LuaFunctionBody
    init(_ body: @escaping LuaFunctionBody) { self.body = body }
}

/// The one entry point from C into Swift bindings.
enum LuaDispatch {
    private static let installed: Void = {
        kh_install(dispatch, release)
    }()

    static func install() { _ = installed }

    static func push(_ body: @escaping LuaFunctionBody, on L: OpaquePointer) {
        kh_push_swift_function(L, Unmanaged.passRetained(FunctionBox(body)).toOpaque())
    }

    /// Never raises: every outcome becomes a count or a KH_* status for the trampoline.
    private static let dispatch: kh_dispatch_fn = { L, box, argn in
        guard let L, let box else { return KH_RAISE_VALUE }
        let context = LuaContext(L: L)
        do {
            // The closure's upvalue keeps the box alive for the whole call: no retain needed.
            return try Unmanaged<FunctionBox>.fromOpaque(box)._withUnsafeGuaranteedRef { try $0.body(context) }
        } catch {
            return context.report(error, argumentIndex: argn)
        }
    }

    private static let release: kh_release_fn = { box in
        guard let box else { return }
        Unmanaged<AnyObject>.fromOpaque(box).release()
    }
}
