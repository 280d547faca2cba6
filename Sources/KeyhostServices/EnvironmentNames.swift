/// The environment variables the services read on their own, for both front ends; the card's secrets and defaults
/// are in `CardFrontEnd`, where each front end words them.
public enum EnvironmentNames {
    /// A directory of Lua modules that replaces the stdlib keyhost finds beside itself.
    public static let stdlib = "KEYHOST_STDLIB"
}
