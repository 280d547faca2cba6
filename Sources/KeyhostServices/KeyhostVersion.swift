/// keyhost's version: `keyhost --version`, `require "keyhost".version`, the Electrum client name.
public enum KeyhostVersion {
    public static let text = "0.1.0"
}
