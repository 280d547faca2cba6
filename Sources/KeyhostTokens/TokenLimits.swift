/// Sizes a token may have; each is checked before the bytes are parsed or run.
public enum TokenLimits {
    /// The largest encoded token (envelope included).
    public static let maxEncodedBytes = 256 << 10
    /// The largest program, source or bytecode.
    public static let maxProgramBytes = 128 << 10
    /// The largest issuer metadata, encoded.
    public static let maxMetadataBytes = 16 << 10
    /// The longest unit name.
    public static let maxUnitLength = 32
    /// The largest effects of one run (the emitted records as one CBOR array).
    public static let maxEffectsBytes = 64 << 10
    /// The most records one run may emit.
    public static let maxEffectRecords = 1024
    /// The largest arguments of one run, encoded.
    public static let maxArgumentsBytes = 16 << 10
    /// Nesting allowed in metadata, arguments and records.
    public static let maxDepth = 16
}
