import COpenSSL
import CPCSCLite
import KeyhostBindings
import LuaRuntime

/// What `keyhost --version` prints: keyhost and the libraries it runs with, for bug reports.
enum VersionText {
    static var text: String {
        """
        keyhost \(KeyhostModules.version) (commit \(BuildInfo.commit))
        \(LuaState.release)
        libsecp256k1 \(BuildInfo.secp256k1) (pkg-config at build time; the library has no version call)
        \(String(cString: OpenSSL_version(Int32(OPENSSL_VERSION))))
        pcsc-lite \(PCSCLITE_VERSION_NUMBER) (headers at build time)
        """
    }
}
