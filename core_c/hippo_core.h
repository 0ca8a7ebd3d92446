/*
 * hippo_core.h -- the public contract of hippo's C core (C99, libc only).
 *
 * Structures
 *   hippo_wm    static wavelet matrix over symbols of 1..32 bits
 *   hippo_dwm   append-only dynamic wavelet matrix (log-structured static segments + tail)
 *   hippo_bix   flat index of packed binary codes (64..1024 bits) with Hamming top-k / radius
 * Functions
 *   hippo_ri_signatures[_segmented]   random-indexing token signatures (seed paper §3.3)
 *   hippo_read_bandwidth              fastest plain read loop, for bandwidth measurement
 *
 * Conventions (every entry point)
 *   - Returns an int status: HIPPO_OK (0) or a negative HIPPO_E* code; results go through out-pointers.
 *     Nothing aborts, exits or prints.
 *   - Arguments are validated before any memory is touched: NULL pointers, widths, lengths and positions.
 *     On any error the structure is left exactly as it was.
 *   - Positions are 0-based; ranges are half-open [start, end). rank(c, i) counts occurrences in [0, i).
 *     select(c, k) takes k >= 1 (the k-th occurrence, as in the seed paper's Algorithm 2).
 *   - Readers may run concurrently on one structure; a writer (append/extend/add) must be exclusive.
 *     The C core holds no locks: callers (the Python layer) serialize writers.
 *   - Outputs of unknown size use caller buffers: (out, capacity, *out_needed). The call succeeds,
 *     writes min(capacity, needed) items and reports needed; the caller retries with a larger buffer.
 *
 * Space
 *   Bit vector: 512-bit cache lines holding a 64-bit header (relative rank + in-line word counts)
 *   and 448 payload bits (+14.3%), one 64-bit absolute count per 36 lines (+0.4%), and one 32-bit
 *   select sample per 4096 ones and per 4096 zeros (<= +1.6%). Rank is constant work on one line.
 *   A wavelet matrix of n symbols x b bits therefore takes ~1.16 * n * b bits, plus a table of the
 *   node starts of its top levels (<= 1/64 of the raw bits) that saves one rank per level in rank
 *   queries: ~1.17 * n * b bits in all (measured 1.172 at 1e6 x 17 bits).
 *   Every static matrix (and so every dynamic segment) may add a distinct-symbol table with counts
 *   (8 bytes per distinct symbol, used by the Hamming-ball scan), kept only while it costs at most
 *   1/10 of the raw bits. The dynamic matrix adds a tail buffer of HIPPO_DWM_TAIL uint32 symbols.
 */
#ifndef HIPPO_CORE_H
#define HIPPO_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status codes ------------------------------------------------------------------------- */
#define HIPPO_OK        0
#define HIPPO_EINVAL   (-1)  /* bad argument: NULL pointer, width, dtype-level mismatch, bad parameter */
#define HIPPO_ERANGE   (-2)  /* position / occurrence number / k outside the valid range */
#define HIPPO_ENOMEM   (-3)  /* allocation failed (or a size would overflow) */
#define HIPPO_ECORRUPT (-4)  /* serialized blob failed validation: magic, length, offset or checksum */
#define HIPPO_EVERSION (-5)  /* serialized blob has an unsupported format version */
#define HIPPO_EEMPTY   (-6)  /* the operation needs a non-empty structure */
#define HIPPO_EINTERNAL (-7) /* invariant violated inside the core (a bug) */

/* Static, never NULL, describes a status code ("unknown status" for others). */
const char *hippo_strerror(int status);

/* ---- checksum ----------------------------------------------------------------------------- */
/* 64-bit non-cryptographic hash used for blob checksums (xxh64-style: 4 multiply-rotate lanes,
 * ~6.6 GB/s measured on the reference machine). Deterministic across platforms (reads
 * little-endian). NULL hashes as empty input. */
uint64_t hippo_hash64(const void *data, size_t len, uint64_t seed);

/* ---- CPU dispatch for the popcount kernels -------------------------------------------------- */
#define HIPPO_KERNEL_PORTABLE 0   /* plain C, SWAR popcount */
#define HIPPO_KERNEL_AVX2     1   /* AVX2 pshufb popcount + scalar POPCNT */
#define HIPPO_KERNEL_AVX512   2   /* AVX-512F + VPOPCNTDQ */

/* Kernel in use. Chosen once (first call into the core) from CPUID; HIPPO_FORCE_PORTABLE=1 in the
 * environment forces HIPPO_KERNEL_PORTABLE. */
int hippo_active_kernel(void);
/* Best kernel this CPU supports (ignores the environment variable). */
int hippo_best_kernel(void);
/* Select a kernel for the Hamming / bandwidth functions. EINVAL if the CPU lacks it.
 * Not thread-safe against concurrent searches (meant for tests and benchmarks). */
int hippo_set_kernel(int kernel);
/* "portable", "avx2", "avx512_vpopcntdq" */
const char *hippo_kernel_name(int kernel);

/* Read nbytes of buf as fast as one core can (wide loads, several accumulators) and store a
 * checksum of the data in *out_sum so the loop cannot be elided: the XOR of its aligned 64-bit words
 * plus the sum of the bytes before and after them (the same value on every kernel). O(nbytes). */
int hippo_read_bandwidth(const void *buf, size_t nbytes, uint64_t *out_sum);

/* ---- static wavelet matrix ---------------------------------------------------------------- */
/* Wavelet matrix (Claude & Navarro 2012; seed paper §3.2): `bits` bit vectors of length n; level 0
 * holds the most significant bit. Each level is stably partitioned (zeros first) by its bit before
 * the next level, so every query is one top-down (or bottom-up) pass of rank/select per level. */
typedef struct hippo_wm hippo_wm;

/* Build from symbols[0..n). Every symbol must be < 2^bits (EINVAL otherwise), 1 <= bits <= 32,
 * n <= 2^40. symbols may be NULL iff n == 0. O(n * bits) time, O(n) extra words during the build. */
int hippo_wm_build(const uint32_t *symbols, uint64_t n, uint32_t bits, hippo_wm **out);
void hippo_wm_free(hippo_wm *wm);
uint64_t hippo_wm_len(const hippo_wm *wm);
uint32_t hippo_wm_bits(const hippo_wm *wm);
/* Heap bytes held by the structure. */
uint64_t hippo_wm_nbytes(const hippo_wm *wm);

/* symbol at position i (i < n). O(bits) rank operations (seed §3.2.2, Algorithm 3). */
int hippo_wm_access(const hippo_wm *wm, uint64_t i, uint32_t *out);
/* out[j] = symbol at positions[j] for j < m. All positions checked before any work. Queries are
 * processed in interleaved groups so their cache misses overlap. */
int hippo_wm_access_many(const hippo_wm *wm, const int64_t *positions, uint64_t m, uint32_t *out);
/* out[0..end-start) = symbols of [start, end); start <= end <= n. O((end-start) * bits) with one
 * rank per maximal run per level (level-wise range decoding), not one per symbol. */
int hippo_wm_access_range(const hippo_wm *wm, uint64_t start, uint64_t end, uint32_t *out);
/* The ranges [starts[j], ends[j]) one after another in out (sum of their lengths symbols). Every range
 * is checked before any work. One call for the many short ranges of a message set. */
int hippo_wm_access_ranges(const hippo_wm *wm, const uint64_t *starts, const uint64_t *ends, uint64_t m,
                           uint32_t *out);
/* occurrences of symbol in [0, i); i <= n. A symbol wider than bits is EINVAL. O(bits) (Algorithm 1). */
int hippo_wm_rank(const hippo_wm *wm, uint32_t symbol, uint64_t i, uint64_t *out);
/* out[j] = rank(symbols[j], positions[j]). */
int hippo_wm_rank_many(const hippo_wm *wm, const uint32_t *symbols, const int64_t *positions,
                       uint64_t m, uint64_t *out);
/* position of the k-th occurrence (k >= 1) of symbol; ERANGE if k < 1 or k > count. O(bits) select
 * operations (Algorithm 2). */
int hippo_wm_select(const hippo_wm *wm, uint32_t symbol, uint64_t k, uint64_t *out);
/* occurrences of symbol in [start, end); start <= end <= n. O(bits). */
int hippo_wm_count(const hippo_wm *wm, uint32_t symbol, uint64_t start, uint64_t end, uint64_t *out);
/* out[j] = count(symbols[j], start, end). */
int hippo_wm_count_many(const hippo_wm *wm, const uint32_t *symbols, uint64_t m, uint64_t start,
                        uint64_t end, uint64_t *out);

/* Hamming-ball search method. AUTO picks by the cost model documented in wavelet_matrix.c. */
#define HIPPO_HB_AUTO        0
#define HIPPO_HB_BRANCH      1  /* branch-and-bound over the levels, two ranks per visited node */
#define HIPPO_HB_SCAN_TABLE  2  /* XOR-popcount scan of the distinct-symbol table (falls back to 3) */
#define HIPPO_HB_SCAN_DECODE 3  /* decode [start, end) and XOR-popcount every symbol */

/* Every distinct symbol s with popcount(s ^ symbol) <= radius occurring in [start, end), with its
 * number of occurrences there, sorted by symbol ascending. Writes min(capacity, needed) pairs.
 * radius may exceed bits (then every distinct symbol matches). */
int hippo_wm_hamming_ball(const hippo_wm *wm, uint32_t symbol, uint32_t radius, uint64_t start,
                          uint64_t end, int method, uint32_t *out_symbols, uint64_t *out_counts,
                          uint64_t capacity, uint64_t *out_needed);

/* Serialization: magic "HIPPOWM\0", version, bits, n, bit-packed symbols, 64-bit checksum.
 * hippo_wm_serialized_size gives the exact size; serialize writes it into buf (cap >= size). */
int hippo_wm_serialized_size(const hippo_wm *wm, uint64_t *out_size);
int hippo_wm_serialize(const hippo_wm *wm, uint8_t *buf, uint64_t cap, uint64_t *out_written);
/* Validates magic, version, every length against len, and the checksum before allocating.
 * ECORRUPT / EVERSION on failure; never reads outside [blob, blob+len). */
int hippo_wm_deserialize(const uint8_t *blob, uint64_t len, hippo_wm **out);
/* The symbols of a hippo_wm_serialize blob without building the matrix (the payload is bit-packed symbols):
 * validates exactly as hippo_wm_deserialize, sets *out_n and *out_bits, and unpacks the n symbols into out
 * when capacity >= n (call with capacity 0 to learn n). O(n); never reads outside [blob, blob+len). */
int hippo_wm_decode_blob(const uint8_t *blob, uint64_t len, uint32_t *out, uint64_t capacity, uint64_t *out_n,
                         uint32_t *out_bits);

/* ---- dynamic wavelet matrix --------------------------------------------------------------- */
/* Append-only dynamic wavelet matrix (seed §3.2.1 asks for appends that keep queries available).
 *
 * Design: a log-structured list of static wavelet-matrix segments (oldest and largest first) plus a
 * tail buffer of up to HIPPO_DWM_TAIL raw symbols. An append writes into the tail; a full tail
 * becomes a segment; then, like carries in a binary counter (a binomial heap), the two newest
 * segments are merged (decode both, build one) while the newer one is at least as large as the
 * older one. A symbol is therefore rewritten only when its segment at least doubles: at most
 * log2(n / TAIL) times, amortized O(bits * log(n / TAIL)) per append, and segment sizes fall
 * geometrically, so there are at most ~log2(n / TAIL) + 1 segments (<= HIPPO_DWM_MAX_SEGMENTS is
 * enforced for irregular extend sizes). extend() of a large array builds one segment directly.
 *
 * Queries: access and select cost one static query (plus a binary search over segment offsets /
 * a per-segment count); rank and count cost one static rank per overlapping segment plus a scan of
 * at most TAIL tail symbols; segments smaller than the largest are mostly cache-resident.
 * The alternative, a dynamic bit vector per level (a B-tree of blocks, as in the DYNAMIC library),
 * pays a tree descent for every rank at every level; for an append-only stream the static segments
 * keep the flat, one-cache-line rank directory instead. Measured at 1e6 x 17-bit symbols: bulk extend
 * ~40-75 ns/symbol, batched access ~90 ns and rank ~120 ns per element with one segment (~120-230 ns
 * with five), against 10-35 us per access/rank call of the PyPI wavelet-matrix DynamicWaveletMatrix.
 * Every query sees every appended symbol immediately. */
typedef struct hippo_dwm hippo_dwm;

#define HIPPO_DWM_TAIL  2048u
#define HIPPO_DWM_MAX_SEGMENTS 24u

int hippo_dwm_new(uint32_t bits, hippo_dwm **out);
void hippo_dwm_free(hippo_dwm *d);
uint64_t hippo_dwm_len(const hippo_dwm *d);
uint32_t hippo_dwm_bits(const hippo_dwm *d);
/* Heap bytes: segments (bit vectors + directories + distinct tables) + tail buffer. */
uint64_t hippo_dwm_nbytes(const hippo_dwm *d);
/* Bytes of the bit vectors and their rank/select directories only (the stored stream). */
uint64_t hippo_dwm_stream_bytes(const hippo_dwm *d);
uint32_t hippo_dwm_segments(const hippo_dwm *d);

/* Append one symbol (< 2^bits). Amortized O(bits * log n). */
int hippo_dwm_append(hippo_dwm *d, uint32_t symbol);
/* Append symbols[0..m). All symbols are validated first; on error nothing is appended. */
int hippo_dwm_extend(hippo_dwm *d, const uint32_t *symbols, uint64_t m);

/* Same contracts as the hippo_wm_* functions above, over the whole appended sequence. */
int hippo_dwm_access(const hippo_dwm *d, uint64_t i, uint32_t *out);
int hippo_dwm_access_many(const hippo_dwm *d, const int64_t *positions, uint64_t m, uint32_t *out);
int hippo_dwm_access_range(const hippo_dwm *d, uint64_t start, uint64_t end, uint32_t *out);
int hippo_dwm_access_ranges(const hippo_dwm *d, const uint64_t *starts, const uint64_t *ends, uint64_t m,
                            uint32_t *out);
int hippo_dwm_rank(const hippo_dwm *d, uint32_t symbol, uint64_t i, uint64_t *out);
int hippo_dwm_rank_many(const hippo_dwm *d, const uint32_t *symbols, const int64_t *positions,
                        uint64_t m, uint64_t *out);
int hippo_dwm_select(const hippo_dwm *d, uint32_t symbol, uint64_t k, uint64_t *out);
/* Every position p in [start, end) with S[p] == symbol, ascending, written to out[0 .. min(needed, capacity)).
 * *out_needed receives the number of occurrences; call again with a larger buffer when it exceeds capacity.
 * O(occ * log sigma): one select per occurrence inside each static segment, a scan of the tail. */
int hippo_dwm_locate(const hippo_dwm *d, uint32_t symbol, uint64_t start, uint64_t end, uint64_t *out,
                     uint64_t capacity, uint64_t *out_needed);
int hippo_dwm_count(const hippo_dwm *d, uint32_t symbol, uint64_t start, uint64_t end, uint64_t *out);
int hippo_dwm_count_many(const hippo_dwm *d, const uint32_t *symbols, uint64_t m, uint64_t start,
                         uint64_t end, uint64_t *out);
int hippo_dwm_hamming_ball(const hippo_dwm *d, uint32_t symbol, uint32_t radius, uint64_t start,
                           uint64_t end, int method, uint32_t *out_symbols, uint64_t *out_counts,
                           uint64_t capacity, uint64_t *out_needed);

/* Serialization: magic "HIPPODWM", same payload layout as the static matrix (bit-packed symbols).
 * Loading rebuilds a single segment. */
int hippo_dwm_serialized_size(const hippo_dwm *d, uint64_t *out_size);
int hippo_dwm_serialize(const hippo_dwm *d, uint8_t *buf, uint64_t cap, uint64_t *out_written);
int hippo_dwm_deserialize(const uint8_t *blob, uint64_t len, hippo_dwm **out);

/* ---- binary code index (Hamming kernels) ---------------------------------------------------- */
/* Codes of `bits` bits (64..1024, multiple of 64) stored contiguously as little-endian uint64 words
 * (equivalently: bits/8 bytes per code, byte j holding bits 8j..8j+7). Ids are insertion order. */
typedef struct hippo_bix hippo_bix;

int hippo_bix_new(uint32_t bits, hippo_bix **out);
void hippo_bix_free(hippo_bix *b);
uint64_t hippo_bix_len(const hippo_bix *b);
uint32_t hippo_bix_bits(const hippo_bix *b);
uint64_t hippo_bix_nbytes(const hippo_bix *b);
/* Append n codes (n * bits/8 bytes); *out_first_id (optional) receives the id of the first. */
int hippo_bix_add(hippo_bix *b, const uint8_t *codes, uint64_t n, uint64_t *out_first_id);
/* Copy the codes of ids[0..m) into out (m * bits/8 bytes). ERANGE on any id outside [0, len). */
int hippo_bix_get(const hippo_bix *b, const int64_t *ids, uint64_t m, uint8_t *out);

/* k nearest codes to each of nq queries (nq * bits/8 bytes). Results per query sorted by
 * (distance, id) ascending; ties broken by lower id. Rows are k wide: when fewer than k codes exist
 * the rest is padded with distance -1 and id -1. k >= 1 (EINVAL otherwise). O(n * bits/64) per query;
 * batches are blocked over the database so each block is read from memory once for all queries. */
int hippo_bix_search(const hippo_bix *b, const uint8_t *queries, uint64_t nq, uint64_t k,
                     int32_t *out_dist, int64_t *out_ids);
/* All ids with distance <= radius (any radius; >= bits matches everything), sorted by
 * (distance, id). Writes min(capacity, needed) results. */
int hippo_bix_radius(const hippo_bix *b, const uint8_t *query, uint32_t radius, int32_t *out_dist,
                     int64_t *out_ids, uint64_t capacity, uint64_t *out_needed);

/* Serialization: magic "HIPPOBIX", version, bits, n, codes, checksum. */
/* Distances between every code of a (na x words uint64, host order) and every code of b (nb x words):
 * out[i * nb + j] = popcount(a_i ^ b_j). words in 1..16. Runtime-dispatched like the index kernels. */
int hippo_hamming_cross(const uint64_t *a, uint64_t na, const uint64_t *b, uint64_t nb, uint32_t words,
                        int32_t *out);

int hippo_bix_serialized_size(const hippo_bix *b, uint64_t *out_size);
int hippo_bix_serialize(const hippo_bix *b, uint8_t *buf, uint64_t cap, uint64_t *out_written);
int hippo_bix_deserialize(const uint8_t *blob, uint64_t len, hippo_bix **out);

/* ---- random-indexing token signatures (seed §3.3) ----------------------------------------- */
typedef struct hippo_ri_params {
    uint64_t seed;         /* hashing seed: base vectors and hyperplanes derive from it */
    uint32_t dim;          /* embedding dimension, 2..65536 (e.g. 1024) */
    uint32_t nnz;          /* non-zeros per base vector: even, 2..min(dim, 256); half +1, half -1 */
    uint32_t window;       /* context tokens on each side, 0..1024 */
    uint32_t self_weight;  /* weight of the token's own base vector, 0..65536 (e.g. 4) */
    uint32_t top_m;        /* kept components (largest |value|, ties to lower index), 1..dim */
    uint32_t sig_bits;     /* signature width, 1..32 */
} hippo_ri_params;

/* out_sigs[i] = signature of position i (bits >= sig_bits are 0). For position i,
 * c_i = self_weight * base(t_i) + sum_{0 < |j - i| <= window, 0 <= j < n} base(t_j), accumulated in
 * int32 (deterministic everywhere); base(t) has nnz distinct indices from splitmix64(seed, t, slot).
 * The top_m components of c_i by |value| (nonzero only) are kept and signed-random-projected:
 * bit b = [sum_k v_k * R(idx_k, b) > 0] with R = +-1 from splitmix64(seed, idx, b). O(n * window * nnz
 * + n * top_m * sig_bits). */
int hippo_ri_signatures(const uint32_t *tokens, uint64_t n, const hippo_ri_params *p, uint32_t *out_sigs);
/* As above, but the window never crosses a segment boundary. seg_ends: strictly increasing ends of
 * the segments (the first starts at 0), the last equal to n. nseg >= 1 when n > 0. */
int hippo_ri_signatures_segmented(const uint32_t *tokens, uint64_t n, const uint64_t *seg_ends,
                                  uint64_t nseg, const hippo_ri_params *p, uint32_t *out_sigs);

/* ---- byte tables ------------------------------------------------------------------------------ */
/* The bytes of ids[0..n) laid end to end, where id t stands for table[offsets[t] .. offsets[t+1])
 * (offsets: ntable + 1 non-decreasing entries, the last the table's length, < 4 GiB). This is how a
 * token-ID stream becomes text without a round trip through the tokenizer's own decoder. Reports the
 * bytes needed in *out_needed and writes them when they fit in capacity (else the caller retries with a
 * larger buffer). An id >= ntable or with an empty entry is HIPPO_ERANGE, with *out_needed = the index
 * of the first such id. O(n + bytes). */
int hippo_gather_bytes(const uint32_t *ids, uint64_t n, const uint8_t *table, const uint32_t *offsets,
                       uint64_t ntable, uint8_t *out, uint64_t capacity, uint64_t *out_needed);

#ifdef __cplusplus
}
#endif
#endif /* HIPPO_CORE_H */
