import Testing

/// Every suite of this target nests here so they run one at a time: the batch speed-up test measures
/// wall-clock time on all cores, and parallel suites would distort it. (They are CPU-bound and short,
/// so serial running costs little; the Python oracle run dominates.)
@Suite(.serialized)
struct KeyhostCryptoTests {}
