"""The numba kernel's data layout: the slots of its work array and the packing of its table.

Apart from :mod:`stammtisch.solve._kernel` so that the solver can fill the work array without
importing numba (the kernel may run from its compiled library, ``_kernel_lib``).
"""

# cfg indices (the first slots of the work array)
(C_M, C_TRUMP, C_MAX, C_COUNT, C_TRICKW, C_BONUS, C_MUST, C_HEAD, C_FORCED, C_ACE, C_GEN, C_TTMASK, C_NSUITS,
 C_ZDIGITS) = range(14)
CFG_SIZE = 16
MAX_DEPTH = 64
# offsets in the work array
W_PTS = CFG_SIZE
W_SUIT = W_PTS + 64
W_RANK = W_SUIT + 64
W_LOWS = W_RANK + 64  # per suit: its lowest cards with no card points, up to the first that has some
W_HANDS = W_LOWS + 8  # the part before this is fixed by the goal
W_OWNER = W_HANDS + 8  # per card still in a hand: the player holding it
W_STATS = W_OWNER + 64  # nodes, table probes, table hits, …
W_HIST = W_STATS + 16  # per card: the tricks left, squared, summed over the cut-offs its lead made
W_SCRATCH = W_HIST + 64
SCRATCH_STRIDE = 128  # per depth: up to 64 (card, score) pairs
W_SIZE = W_SCRATCH + MAX_DEPTH * SCRATCH_STRIDE
MUST_ALWAYS, MUST_UNTRUMPED, MUST_NEVER = 0, 1, 2
BIG = 1 << 30
HASH_MULT = -7046029254386353131  # 0x9E3779B97F4A7C15 as int64
HASH_MULT2 = -4658895280553007687  # 0xBF58476D1CE4E5B9 as int64
TT_STRIDE = 4  # key, holders of the low cards, entry, unused: a bucket of two is one cache line
# a table entry: low and high bound (12 bits each), best lead + 1 (7), tricks left (5), generation (27)
VALUE_BITS = 12
VALUE_MASK = (1 << VALUE_BITS) - 1
GEN_SHIFT = 36
GEN_MASK = (1 << 27) - 1
