/*
 * hippo_internal.h -- shared internals of the C core: allocation helpers, popcount, the rank/select
 * bit vector (inline hot paths), the static wavelet matrix struct and the blob reader/writer.
 * Not part of the public contract.
 */
#ifndef HIPPO_INTERNAL_H
#define HIPPO_INTERNAL_H

#include "hippo_core.h"

#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define HIPPO_LIKELY(x) __builtin_expect(!!(x), 1)
#define HIPPO_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define HIPPO_INLINE static inline __attribute__((always_inline))
#else
#define HIPPO_LIKELY(x) (x)
#define HIPPO_UNLIKELY(x) (x)
#define HIPPO_INLINE static inline
#endif

/* Hot query entry points are compiled twice on x86-64 ELF targets (default + POPCNT) and chosen by
 * the loader (ifunc), so the shared object still runs on any x86-64 while using POPCNT where it
 * exists. Elsewhere (or under sanitizers) they are compiled once. */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__ELF__) && defined(__GLIBC__) && \
    !defined(__SANITIZE_ADDRESS__) && !defined(HIPPO_NO_CLONES)
#define HIPPO_CLONES __attribute__((target_clones("popcnt", "default")))
#else
#define HIPPO_CLONES
#endif

/* Largest n accepted by the sequence structures (positions fit comfortably in int64 and in the
 * 64-bit rank directory). */
#define HIPPO_MAX_N (((uint64_t)1) << 40)

/* ---- allocation ---------------------------------------------------------------------------- */
/* 64-byte aligned allocation without C11 aligned_alloc: the original pointer is stored just before
 * the returned block. Returns NULL on overflow or failure. */
void *hippo_aligned_alloc(size_t bytes);
void hippo_aligned_free(void *p);
/* Overflow-checked a * b into *out; returns 0 on overflow. */
HIPPO_INLINE int hippo_mul_ok(uint64_t a, uint64_t b, uint64_t *out) {
    if (a != 0 && b > UINT64_MAX / a) return 0;
    *out = a * b;
    return 1;
}

/* ---- popcount ---------------------------------------------------------------------------- */
HIPPO_INLINE unsigned hippo_popcount_swar(uint64_t x) {
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (unsigned)((x * 0x0101010101010101ULL) >> 56);
}
#if defined(__GNUC__) || defined(__clang__)
#define hippo_popcount64(x) ((unsigned)__builtin_popcountll((unsigned long long)(x)))
#define hippo_ctz64(x) ((unsigned)__builtin_ctzll((unsigned long long)(x)))
#else
#define hippo_popcount64(x) hippo_popcount_swar(x)
HIPPO_INLINE unsigned hippo_ctz64(uint64_t x) {
    unsigned n = 0;
    while (!(x & 1)) { x >>= 1; n++; }
    return n;
}
#endif

/* Position (0..63) of the (k+1)-th set bit of x; requires k < popcount(x). Broadword: byte
 * popcounts, a prefix sum by multiplication, then a byte-level lookup. */
extern const uint8_t hippo_select_in_byte[256 * 8];
HIPPO_INLINE unsigned hippo_select64(uint64_t x, unsigned k) {
    uint64_t s = x - ((x >> 1) & 0x5555555555555555ULL);
    s = (s & 0x3333333333333333ULL) + ((s >> 2) & 0x3333333333333333ULL);
    s = (s + (s >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    uint64_t prefix = s * 0x0101010101010101ULL; /* byte j = popcount of bytes 0..j */
    unsigned byte = 0;
    while (byte < 7 && ((prefix >> (8 * byte)) & 0xFF) <= k) byte++;
    unsigned before = byte ? (unsigned)((prefix >> (8 * (byte - 1))) & 0xFF) : 0;
    unsigned b = (unsigned)((x >> (8 * byte)) & 0xFF);
    return 8 * byte + hippo_select_in_byte[b * 8 + (k - before)];
}

/* ---- rank/select bit vector --------------------------------------------------------------- */
/* Layout: an array of 64-byte lines, each one header word and 7 payload words (448 bits), so a rank
 * touches one cache line. Payload bit i lives in line i / 448, word (i % 448) / 64.
 * Header word (little fields first):
 *     bits  0..13  ones from the start of the superblock to the start of the line (< 16384)
 *     bits 14..63  ones in payload words 0..k of the line, k = 0..5, in fields of 7, 8, 8, 9, 9, 9 bits
 * A superblock is 36 lines (16128 bits); super[] holds the absolute ones before each (one uint64 per
 * 16128 bits, +0.4%). rank = super + relative + one field + one popcount: constant work, no loop,
 * no branch. One extra line at the end holds the total (rank(n) needs no special case).
 * Select: every HIPPO_BV_SAMPLE-th one (and zero) records the line that holds it; a select searches
 * from the line the sample's density predicts, walks to the right line, and finishes with the
 * in-line fields and a broadword select. */
#define HIPPO_BV_LINE_BITS 448u
#define HIPPO_BV_LINE_WORDS 8u
#define HIPPO_BV_SUPER_LINES 36u
#define HIPPO_BV_SAMPLE 4096u

typedef struct hippo_bv {
    uint64_t n;         /* bits */
    uint64_t ones;      /* total ones */
    uint64_t nlines;    /* payload lines (ceil(n / 448)); lines[] holds nlines + 1 lines */
    uint64_t *lines;    /* 64-byte aligned */
    uint64_t *super;    /* nlines / 36 + 1 absolute counts */
    uint32_t *sel1;     /* line index of the (j * SAMPLE + 1)-th one, j < ceil(ones / SAMPLE) */
    uint32_t *sel0;     /* same for zeros */
    uint64_t nsel1, nsel0;
} hippo_bv;

/* Allocate a zeroed bit vector of n bits (payload writable with hippo_bv_set). 0 or HIPPO_ENOMEM. */
int hippo_bv_init(hippo_bv *bv, uint64_t n);
/* Compute the rank headers and select samples after the payload is written. */
int hippo_bv_finish(hippo_bv *bv);
void hippo_bv_free(hippo_bv *bv);
uint64_t hippo_bv_nbytes(const hippo_bv *bv);

/* Field k (word prefix count of words 0..k-1) of a header, k = 0..6; k = 0 yields 0. */
extern const uint8_t hippo_bv_field_shift[7];
extern const uint16_t hippo_bv_field_mask[7];

HIPPO_INLINE void hippo_bv_set(hippo_bv *bv, uint64_t i) {
    uint64_t line = i / HIPPO_BV_LINE_BITS, off = i % HIPPO_BV_LINE_BITS;
    bv->lines[line * HIPPO_BV_LINE_WORDS + 1 + (off >> 6)] |= (uint64_t)1 << (off & 63);
}

HIPPO_INLINE unsigned hippo_bv_get(const hippo_bv *bv, uint64_t i) {
    uint64_t line = i / HIPPO_BV_LINE_BITS, off = i % HIPPO_BV_LINE_BITS;
    return (unsigned)((bv->lines[line * HIPPO_BV_LINE_WORDS + 1 + (off >> 6)] >> (off & 63)) & 1);
}

/* Ones before line j. */
HIPPO_INLINE uint64_t hippo_bv_line_ones(const hippo_bv *bv, uint64_t j) {
    return bv->super[j / HIPPO_BV_SUPER_LINES] + (bv->lines[j * HIPPO_BV_LINE_WORDS] & 0x3FFFu);
}

/* Ones in [0, i), i <= n. */
HIPPO_INLINE uint64_t hippo_bv_rank1(const hippo_bv *bv, uint64_t i) {
    uint64_t line = i / HIPPO_BV_LINE_BITS;
    unsigned off = (unsigned)(i - line * HIPPO_BV_LINE_BITS), w = off >> 6;
    const uint64_t *l = bv->lines + line * HIPPO_BV_LINE_WORDS;
    uint64_t h = l[0];
    return bv->super[line / HIPPO_BV_SUPER_LINES] + (h & 0x3FFFu) +
           ((h >> hippo_bv_field_shift[w]) & hippo_bv_field_mask[w]) +
           hippo_popcount64(l[1 + w] & ((((uint64_t)1) << (off & 63)) - 1));
}

/* Bit at i and ones in [0, i) in one line access. */
HIPPO_INLINE unsigned hippo_bv_get_rank1(const hippo_bv *bv, uint64_t i, uint64_t *rank) {
    uint64_t line = i / HIPPO_BV_LINE_BITS;
    unsigned off = (unsigned)(i - line * HIPPO_BV_LINE_BITS), w = off >> 6;
    const uint64_t *l = bv->lines + line * HIPPO_BV_LINE_WORDS;
    uint64_t h = l[0], word = l[1 + w];
    *rank = bv->super[line / HIPPO_BV_SUPER_LINES] + (h & 0x3FFFu) +
            ((h >> hippo_bv_field_shift[w]) & hippo_bv_field_mask[w]) +
            hippo_popcount64(word & ((((uint64_t)1) << (off & 63)) - 1));
    return (unsigned)((word >> (off & 63)) & 1);
}

/* The ranges [starts[j], ends[j]) of an access_ranges call, checked against a sequence of n symbols
 * (HIPPO_ERANGE unless start <= end <= n for every one); their total length in *total. */
HIPPO_INLINE int hippo_check_ranges(const uint64_t *starts, const uint64_t *ends, uint64_t m, uint64_t n,
                                    uint64_t *total) {
    uint64_t t = 0;
    for (uint64_t j = 0; j < m; j++) {
        if (starts[j] > ends[j] || ends[j] > n) return HIPPO_ERANGE;
        t += ends[j] - starts[j];
    }
    *total = t;
    return HIPPO_OK;
}

/* Start loading the line that holds bit i (batch queries issue these for a whole group first, so the
 * misses overlap instead of queuing behind the rank arithmetic). */
#if defined(__GNUC__) || defined(__clang__)
#define hippo_bv_prefetch(bv, i) __builtin_prefetch((bv)->lines + ((i) / HIPPO_BV_LINE_BITS) * HIPPO_BV_LINE_WORDS)
#else
#define hippo_bv_prefetch(bv, i) ((void)0)
#endif

/* Branch-free select between two values by a 0/1 flag. */
HIPPO_INLINE uint64_t hippo_pick(unsigned flag, uint64_t if1, uint64_t if0) {
    uint64_t m = (uint64_t)0 - (uint64_t)flag;
    return (if1 & m) | (if0 & ~m);
}

/* Ones in payload words 0..w-1 of the line whose header is h. */
HIPPO_INLINE unsigned hippo_bv_field(uint64_t h, unsigned w) {
    return (unsigned)((h >> hippo_bv_field_shift[w]) & hippo_bv_field_mask[w]);
}

/* Ones (zeros = 0) or zeros (zeros = 1) before line j. */
HIPPO_INLINE uint64_t hippo_bv_before(const hippo_bv *bv, uint64_t j, unsigned zeros) {
    uint64_t ones = hippo_bv_line_ones(bv, j);
    return zeros ? j * (uint64_t)HIPPO_BV_LINE_BITS - ones : ones;
}

/* Last line in [lo, hi) with fewer than k ones (or zeros) before it; the caller guarantees lo
 * qualifies. Starts where the sample's density puts the answer (usually within a line or two), then
 * gallops outwards and finishes by bisection, so a skewed vector costs O(log(hi - lo)) probes. */
HIPPO_INLINE uint64_t hippo_bv_find_line(const hippo_bv *bv, uint64_t lo, uint64_t hi, uint64_t k, unsigned zeros) {
    uint64_t est = lo + ((k - 1) % HIPPO_BV_SAMPLE) * (hi - lo) / HIPPO_BV_SAMPLE;
    if (est >= hi) est = hi - 1;
    if (hippo_bv_before(bv, est, zeros) < k) {
        uint64_t step = 1;
        lo = est;
        while (lo + step < hi && hippo_bv_before(bv, lo + step, zeros) < k) { lo += step; step *= 2; }
        if (lo + step < hi) hi = lo + step;
    } else {
        uint64_t step = 1;
        hi = est;
        while (hi - lo > step && hippo_bv_before(bv, hi - step, zeros) >= k) { hi -= step; step *= 2; }
        if (hi - lo > step) lo = hi - step;
    }
    /* now before(lo) < k and (hi == end of range or before(hi) >= k) */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (hippo_bv_before(bv, mid, zeros) < k) lo = mid; else hi = mid;
    }
    return lo;
}

/* Position of the rem-th one (zeros = 0) or zero (zeros = 1) inside line `line` (1 <= rem <= its count): the
 * header's word prefix counts give the word, select64 the bit. Zeros in words 0..w-1 are 64 w - field(w); padding
 * past n is never reached since the caller's rank is at most the vector's count. */
HIPPO_INLINE uint64_t hippo_bv_line_select(const hippo_bv *bv, uint64_t line, unsigned rem, unsigned zeros) {
    const uint64_t *l = bv->lines + line * HIPPO_BV_LINE_WORDS;
    unsigned w = 0;
    if (zeros) {
        while (w < 6 && 64u * (w + 1) - hippo_bv_field(l[0], w + 1) < rem) w++;
        rem -= 64u * w - hippo_bv_field(l[0], w);
        return line * HIPPO_BV_LINE_BITS + 64u * w + hippo_select64(~l[1 + w], rem - 1);
    }
    while (w < 6 && hippo_bv_field(l[0], w + 1) < rem) w++;
    rem -= hippo_bv_field(l[0], w);
    return line * HIPPO_BV_LINE_BITS + 64u * w + hippo_select64(l[1 + w], rem - 1);
}

/* The line holding the k-th one (zeros = 0) or zero (zeros = 1), 1 <= k <= that count: the select sample, then
 * hippo_bv_find_line. */
HIPPO_INLINE uint64_t hippo_bv_select_line(const hippo_bv *bv, uint64_t k, unsigned zeros) {
    uint64_t s = (k - 1) / HIPPO_BV_SAMPLE;
    const uint32_t *sel = zeros ? bv->sel0 : bv->sel1;
    uint64_t nsel = zeros ? bv->nsel0 : bv->nsel1;
    uint64_t hi = (s + 1 < nsel) ? (uint64_t)sel[s + 1] + 1 : bv->nlines;
    return hippo_bv_find_line(bv, sel[s], hi, k, zeros);
}

/* Position of the k-th one (k >= 1, k <= ones). */
HIPPO_INLINE uint64_t hippo_bv_select1(const hippo_bv *bv, uint64_t k) {
    uint64_t line = hippo_bv_select_line(bv, k, 0);
    return hippo_bv_line_select(bv, line, (unsigned)(k - hippo_bv_before(bv, line, 0)), 0); /* rem 1..448 */
}

/* Position of the k-th zero (k >= 1, k <= n - ones). */
HIPPO_INLINE uint64_t hippo_bv_select0(const hippo_bv *bv, uint64_t k) {
    uint64_t line = hippo_bv_select_line(bv, k, 1);
    return hippo_bv_line_select(bv, line, (unsigned)(k - hippo_bv_before(bv, line, 1)), 1);
}

/* select1 (zeros = 0) or select0 (zeros = 1) of every rank in ks[0..m), ascending, each 1 <= k <= ones (zeros),
 * written over ks. Consecutive ranks often fall in one line (the occurrences of one symbol, one wavelet level up):
 * the line found for one answers the next from its header, without the directory search. */
HIPPO_INLINE void hippo_bv_select_sorted(const hippo_bv *bv, uint64_t *ks, uint64_t m, unsigned zeros) {
    uint64_t line = 0, before = 0, in_line = 0; /* in_line == 0: no line yet */
    for (uint64_t j = 0; j < m; j++) {
        uint64_t k = ks[j];
        if (!in_line || k <= before || k > before + in_line) {
            line = hippo_bv_select_line(bv, k, zeros);
            before = hippo_bv_before(bv, line, zeros);
            in_line = hippo_bv_before(bv, line + 1, zeros) - before; /* lines[] holds a closing line */
        }
        ks[j] = hippo_bv_line_select(bv, line, (unsigned)(k - before), zeros);
    }
}

/* ---- static wavelet matrix ------------------------------------------------------------------ */
typedef struct hippo_symcount {
    uint32_t symbol;
    uint32_t count;
} hippo_symcount;

struct hippo_wm {
    uint64_t n;
    uint32_t bits;
    uint64_t zeros[32];      /* zeros at each level (the offset of the one-block at the next level) */
    hippo_bv level[32];
    /* Distinct symbols with their counts over the whole matrix, or NULL when it would cost more than
     * 1/10 of the raw bits (see hippo_wm_build). Counts fit uint32 only when n < 2^32; otherwise the
     * table is not kept. */
    hippo_symcount *table;
    uint64_t ndistinct;
    /* Node starts of the top levels: starts[(1 << l) - 2 + p] = first position at level l of the
     * symbols whose top l bits are p, for l = 1..top (top chosen so the table stays under 1/64 of the
     * raw bits). A rank then needs the rank of its end position only at those levels. */
    uint64_t *starts;
    uint32_t top;
};

/* Decode [start, end) into out, with caller scratch of 3 * (end - start) uint32 + (end - start) uint64
 * (see wavelet_matrix.c). Used by access_range and by segment merges. */
int hippo_wm_decode_range(const hippo_wm *wm, uint64_t start, uint64_t end, uint32_t *out);

/* Accumulating Hamming-ball over [start, end) of one matrix: adds (symbol, count) pairs into acc. */
typedef struct hippo_hb_acc hippo_hb_acc;
int hippo_hb_acc_init(hippo_hb_acc **acc);
int hippo_hb_acc_add(hippo_hb_acc *acc, uint32_t symbol, uint64_t count);
void hippo_hb_acc_free(hippo_hb_acc *acc);
/* Sort by symbol and write min(capacity, n) pairs; *needed = n. HIPPO_ENOMEM, with nothing written, when its
 * sorting buffer cannot be allocated. */
int hippo_hb_acc_emit(hippo_hb_acc *acc, uint32_t *out_symbols, uint64_t *out_counts, uint64_t capacity,
                      uint64_t *out_needed);
int hippo_wm_hamming_ball_acc(const hippo_wm *wm, uint32_t symbol, uint32_t radius, uint64_t start,
                              uint64_t end, int method, hippo_hb_acc *acc);

/* Query internals shared with the dynamic matrix (no argument checks). */
uint32_t hippo_wm_access_unchecked(const hippo_wm *wm, uint64_t i);
uint64_t hippo_wm_rank_unchecked(const hippo_wm *wm, uint32_t symbol, uint64_t i);
uint64_t hippo_wm_count_unchecked(const hippo_wm *wm, uint32_t symbol, uint64_t start, uint64_t end);
/* Position of the k-th occurrence, or UINT64_MAX when there are fewer than k (k >= 1). */
uint64_t hippo_wm_select_unchecked(const hippo_wm *wm, uint32_t symbol, uint64_t k);
/* Positions of the occurrences of symbol with ranks first+1 .. first+m (1-based), ascending, into out:
 * one descent, then the m bottom positions are lifted level by level together (monotone at every level,
 * so the select probes walk memory forward). */
void hippo_wm_locate_unchecked(const hippo_wm *wm, uint32_t symbol, uint64_t first, uint64_t m, uint64_t *out);
void hippo_wm_access_many_unchecked(const hippo_wm *wm, const int64_t *positions, uint64_t m,
                                    int64_t offset, uint32_t *out);

/* ---- blob reader / writer ------------------------------------------------------------------ */
/* Common frame: magic[8] | u32 version | u32 header_bytes | fields... | payload | u64 checksum,
 * little-endian; the checksum is hippo_hash64 over everything before it. */
#define HIPPO_BLOB_VERSION 1u

typedef struct hippo_writer {
    uint8_t *buf;
    uint64_t cap, pos;
} hippo_writer;

typedef struct hippo_reader {
    const uint8_t *buf;
    uint64_t len, pos;
} hippo_reader;

void hippo_put_u32(hippo_writer *w, uint32_t v);
void hippo_put_u64(hippo_writer *w, uint64_t v);
void hippo_put_bytes(hippo_writer *w, const void *p, uint64_t n);
/* Append the checksum of buf[0..pos). */
void hippo_put_checksum(hippo_writer *w);

/* Each returns 0 when reading would pass the end of the blob. */
int hippo_get_u32(hippo_reader *r, uint32_t *v);
int hippo_get_u64(hippo_reader *r, uint64_t *v);
/* Pointer to the next n bytes (no copy); NULL when fewer remain. */
const uint8_t *hippo_get_bytes(hippo_reader *r, uint64_t n);
/* Validates the frame: length >= minimum, trailing checksum, magic, version. On success positions the
 * reader after the version field and shrinks len to exclude the checksum. */
int hippo_open_blob(hippo_reader *r, const uint8_t *blob, uint64_t len, const char magic[8]);

/* Bit-packed symbol payload shared by the WM and DWM blobs: n symbols of `bits` bits, LSB-first,
 * in little-endian 64-bit words (ceil(n * bits / 64) words). */
uint64_t hippo_packed_words(uint64_t n, uint32_t bits);
void hippo_pack_symbols(const uint32_t *symbols, uint64_t n, uint32_t bits, uint8_t *dst);
void hippo_unpack_symbols(const uint8_t *src, uint64_t n, uint32_t bits, uint32_t *out);

/* Kernel selection state (util.c). */
int hippo_kernel_current(void);

#endif /* HIPPO_INTERNAL_H */
