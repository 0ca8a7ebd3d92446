/*
 * ri.c -- random-indexing token signatures (seed paper §3.3).
 *
 * Every token t has a sparse ternary base vector of nnz distinct indices in [0, dim), the first half
 * +1 and the second half -1, derived from splitmix64(seed, t, slot): no table is stored. A position's
 * context vector is self_weight * base(t_i) plus the base vectors of the tokens within `window` on
 * each side (never across a segment boundary), accumulated in int32 so the result does not depend on
 * summation order or platform. The top_m components by |value| (ties to the lower index) are kept and
 * hashed by sign random projection (SimHash): bit b = [sum_k v_k * R(idx_k, b) > 0], R = +-1 from
 * bit b of splitmix64(seed', idx). Identical contexts therefore give identical signatures, and
 * contexts that share most of their tokens give signatures at small Hamming distance (seed App. G).
 */
#include "hippo_internal.h"

/* The projection loop gets an AVX2 build where the CPU has it (integer arithmetic: identical results). */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__ELF__) && defined(__GLIBC__) && \
    !defined(__SANITIZE_ADDRESS__) && !defined(HIPPO_NO_CLONES)
#define HIPPO_RI_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define HIPPO_RI_CLONES
#endif

static uint64_t splitmix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

static int params_ok(const hippo_ri_params *p) {
    return p->dim >= 2 && p->dim <= 65536 && p->nnz >= 2 && p->nnz % 2 == 0 && p->nnz <= 256 &&
           p->nnz <= p->dim && p->window <= 1024 && p->self_weight <= 65536 && p->top_m >= 1 &&
           p->top_m <= p->dim && p->sig_bits >= 1 && p->sig_bits <= 32;
}

/* nnz distinct indices of base(t); slots [0, nnz/2) carry +1, the rest -1. */
static void base_vector(const hippo_ri_params *p, uint32_t token, uint32_t *idx) {
    uint64_t key = splitmix64(p->seed ^ splitmix64((uint64_t)token * 0xD1B54A32D192ED03ULL + 1));
    uint64_t ctr = 0;
    for (uint32_t s = 0; s < p->nnz; s++) {
        for (;;) {
            uint64_t h = splitmix64(key + ++ctr);
            uint32_t cand = (uint32_t)(((h >> 32) * (uint64_t)p->dim) >> 32);
            uint32_t j;
            for (j = 0; j < s; j++)
                if (idx[j] == cand) break;
            if (j == s) { idx[s] = cand; break; }
        }
    }
}

#define RI_CACHE 4096u /* base vectors cached per call; token streams are Zipfian, so most hit */

typedef struct ri_work {
    int32_t *acc;        /* dim */
    uint32_t *touched;   /* (2 * window + 1) * nnz indices of the current window (with repeats) */
    uint32_t *ring;      /* (2 * window + 1) * nnz base indices */
    uint32_t *hist;      /* |value| histogram, self_weight + 2 * window + 2 bins */
    uint32_t *ties;      /* candidates at the threshold value */
    int32_t *neg;        /* dim x 32: 0 where R(idx, b) = +1, -1 where R(idx, b) = -1 */
    uint32_t *kidx;      /* kept indices of the current position */
    int32_t *kval;       /* their values */
    uint64_t *tiebits;   /* dim bits: the tie candidates of the current position */
    int16_t *sgn16;      /* dim x 32: R(idx, b) as +1 / -1, for the narrow projection */
    uint32_t *cache_tok;  /* direct-mapped cache of base vectors: token per slot (UINT32_MAX empty) */
    uint32_t *cache_idx;  /* RI_CACHE x nnz indices */
    int narrow;          /* sums provably fit int16: top_m * (self_weight + 2 * window) < 32768 */
} ri_work;

static void free_work(ri_work *w) {
    free(w->acc); free(w->touched); free(w->ring); free(w->hist); free(w->ties); hippo_aligned_free(w->neg); free(w->kidx); free(w->kval); free(w->tiebits); hippo_aligned_free(w->sgn16); free(w->cache_tok); free(w->cache_idx);
}

static int alloc_work(ri_work *w, const hippo_ri_params *p) {
    memset(w, 0, sizeof(*w));
    uint64_t span = 2 * (uint64_t)p->window + 1;
    uint64_t vmax = (uint64_t)p->self_weight + 2 * (uint64_t)p->window + 2;
    w->acc = (int32_t *)calloc(p->dim, 4);
    w->touched = (uint32_t *)malloc((size_t)(span * p->nnz) * 4);
    w->ring = (uint32_t *)malloc((size_t)(span * p->nnz) * 4);
    w->hist = (uint32_t *)calloc((size_t)vmax, 4);
    w->ties = (uint32_t *)malloc((size_t)(span * p->nnz) * 4);
    w->neg = (int32_t *)hippo_aligned_alloc((size_t)p->dim * 32 * 4);
    w->kidx = (uint32_t *)malloc((size_t)(span * p->nnz) * 4);
    w->kval = (int32_t *)malloc((size_t)(2 * span * p->nnz) * 4);
    w->tiebits = (uint64_t *)calloc((size_t)p->dim / 64 + 1, 8);
    w->cache_tok = (uint32_t *)malloc(RI_CACHE * 4);
    w->cache_idx = (uint32_t *)malloc((size_t)RI_CACHE * p->nnz * 4);
    if (w->cache_tok) memset(w->cache_tok, 0xFF, RI_CACHE * 4);
    w->sgn16 = (int16_t *)hippo_aligned_alloc((size_t)p->dim * 32 * 2);
    if (!w->acc || !w->touched || !w->ring || !w->hist || !w->ties || !w->neg || !w->kidx || !w->kval ||
        !w->tiebits || !w->sgn16 || !w->cache_tok || !w->cache_idx) {
        free_work(w);
        return HIPPO_ENOMEM;
    }
    w->narrow = (uint64_t)p->top_m * ((uint64_t)p->self_weight + 2 * (uint64_t)p->window) < 32768;
    uint64_t rseed = splitmix64(p->seed ^ 0x5DEECE66DULL);
    for (uint32_t i = 0; i < p->dim; i++) {
        uint32_t mask = (uint32_t)splitmix64(rseed + i);
        for (unsigned b = 0; b < 32; b++) {
            w->neg[(size_t)i * 32 + b] = ((mask >> b) & 1u) ? 0 : -1;
            w->sgn16[(size_t)i * 32 + b] = (int16_t)(((mask >> b) & 1u) ? 1 : -1);
        }
    }
    return HIPPO_OK;
}

static uint32_t absv(int32_t v) { return v < 0 ? (uint32_t)(-(int64_t)v) : (uint32_t)v; }

/* sum_k v_k * R(idx_k, b) for the 32 hyperplanes: a conditional negate and add per lane, a loop
 * the compiler vectorizes (no multiply, no per-bit shift). */
static HIPPO_RI_CLONES uint32_t project(const int32_t *neg, const uint32_t *kidx, const int32_t *kval, uint32_t kept,
                                        uint32_t sig_bits) {
    int32_t sum[32];
    unsigned b;
    for (b = 0; b < 32; b++) sum[b] = 0;
    for (uint32_t k = 0; k < kept; k++) {
        const int32_t *m = neg + (size_t)kidx[k] * 32;
        int32_t v = kval[k];
        for (b = 0; b < 32; b++) sum[b] += (v ^ m[b]) - m[b];
    }
    uint32_t sig = 0;
    for (b = 0; b < sig_bits; b++)
        if (sum[b] > 0) sig |= (uint32_t)1 << b;
    return sig;
}

/* The same with 16-bit lanes, used when every partial sum provably fits (twice the lanes per
 * register). */
#if defined(__GNUC__) || defined(__clang__)
typedef int16_t hippo_v16 __attribute__((vector_size(32)));
#endif

static HIPPO_RI_CLONES uint32_t project16(const int16_t *sgn, const uint32_t *kidx, const int32_t *kval, uint32_t kept,
                                          uint32_t sig_bits) {
    int16_t sum[32];
    unsigned b;
#if defined(__GNUC__) || defined(__clang__)
    /* two 16-lane vectors (one AVX2 register each; pairs of SSE2 registers in the default build) */
    hippo_v16 s0 = {0}, s1 = {0};
    for (uint32_t k = 0; k < kept; k++) {
        hippo_v16 r0, r1;
        memcpy(&r0, sgn + (size_t)kidx[k] * 32, 32);
        memcpy(&r1, sgn + (size_t)kidx[k] * 32 + 16, 32);
        int16_t v = (int16_t)kval[k];
        hippo_v16 vv = {v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v};
        s0 += r0 * vv;
        s1 += r1 * vv;
    }
    memcpy(sum, &s0, 32);
    memcpy(sum + 16, &s1, 32);
#else
    for (b = 0; b < 32; b++) sum[b] = 0;
    for (uint32_t k = 0; k < kept; k++) {
        const int16_t *r = sgn + (size_t)kidx[k] * 32;
        int16_t v = (int16_t)kval[k];
        for (b = 0; b < 32; b++) sum[b] = (int16_t)(sum[b] + v * r[b]);
    }
#endif
    uint32_t sig = 0;
    for (b = 0; b < sig_bits; b++)
        if (sum[b] > 0) sig |= (uint32_t)1 << b;
    return sig;
}

/* Signature of one accumulated context (acc over touched[0..nt)). Resets acc. Branch-free where the
 * outcome is data-dependent (values, ties): mispredictions dominated the cost otherwise. */
static uint32_t finish_position(const hippo_ri_params *p, ri_work *w, uint32_t nt) {
    uint32_t m = p->top_m, i, kept = 0, nties = 0;
    uint32_t nonzero = 0, vmax = 0;
    /* compact the distinct nonzero components and clear acc in the same pass: a repeated index reads
     * the 0 left by its first visit and drops out, as do components that cancelled to 0 */
    uint32_t *cidx = w->touched;      /* compacted in place: nonzero <= read position */
    int32_t *cval = w->kval + nt;     /* scratch after the kept prefix (kval holds 2 * span * nnz) */
    for (i = 0; i < nt; i++) {
        uint32_t idx = w->touched[i];
        int32_t v = w->acc[idx];
        w->acc[idx] = 0;
        uint32_t a = absv(v);
        cidx[nonzero] = idx;
        cval[nonzero] = v;
        w->hist[a]++;
        nonzero += a != 0;
        vmax = a > vmax ? a : vmax;
    }
    w->hist[0] = 0;
    nt = nonzero;
    /* keep |v| > thr, plus the lowest-index ties at |v| == thr when more than m are nonzero */
    uint32_t thr = 0, need_ties = 0;
    if (nonzero > m) {
        uint32_t c = 0;
        for (thr = vmax; thr >= 1; thr--) {
            if (c + w->hist[thr] >= m) break;
            c += w->hist[thr];
        }
        need_ties = m - c;
    }
    for (i = 0; i < nt; i++) {
        uint32_t idx = cidx[i];
        int32_t v = cval[i];
        uint32_t a = absv(v);
        w->hist[a] = 0;
        w->kidx[kept] = idx;
        w->kval[kept] = v;
        kept += a > thr;
        w->ties[nties] = i;
        nties += (a == thr) & (thr != 0);
    }
    /* lowest indices among the ties: through a bitmap over [0, dim) scanned from the bottom; the
     * value of each tie is found again through a small open-addressed lookup of its slot */
    if (need_ties) {
        for (i = 0; i < nties; i++) {
            uint32_t idx = cidx[w->ties[i]];
            w->tiebits[idx >> 6] |= (uint64_t)1 << (idx & 63);
            w->acc[idx] = cval[w->ties[i]]; /* park the value; cleared below */
        }
        uint32_t got = 0;
        for (uint32_t word = 0; got < need_ties; word++) {
            uint64_t x = w->tiebits[word];
            while (x && got < need_ties) {
                uint32_t idx = word * 64 + hippo_ctz64(x);
                x &= x - 1;
                w->kidx[kept] = idx;
                w->kval[kept++] = w->acc[idx];
                got++;
            }
        }
        for (i = 0; i < nties; i++) {
            uint32_t idx = cidx[w->ties[i]];
            w->tiebits[idx >> 6] = 0;
            w->acc[idx] = 0;
        }
    }
    if (w->narrow) return project16(w->sgn16, w->kidx, w->kval, kept, p->sig_bits);
    return project(w->neg, w->kidx, w->kval, kept, p->sig_bits);
}

static void run_segment(const hippo_ri_params *p, ri_work *w, const uint32_t *tokens, uint64_t a, uint64_t e,
                        uint32_t *out) {
    uint64_t span = 2 * (uint64_t)p->window + 1, win = p->window;
    uint32_t nnz = p->nnz, half = nnz / 2;
    /* ring slot of position j: j % span; positions [a, min(e, a + win + 1)) first */
    uint64_t filled = a;
    for (uint64_t i = a; i < e; i++) {
        uint64_t hi = i + win + 1 < e ? i + win + 1 : e;
        while (filled < hi) {
            uint32_t t = tokens[filled], slot = (uint32_t)((t * 0x9E3779B1u) >> 20) & (RI_CACHE - 1);
            uint32_t *dst = w->ring + (filled % span) * nnz, *c = w->cache_idx + (size_t)slot * nnz;
            if (w->cache_tok[slot] != t || t == UINT32_MAX) {
                base_vector(p, t, c);
                w->cache_tok[slot] = t;
            }
            memcpy(dst, c, (size_t)nnz * 4);
            filled++;
        }
        uint64_t lo = i >= a + win ? i - win : a;
        uint32_t nt = 0;
        for (uint64_t j = lo; j < hi; j++) {
            const uint32_t *bv = w->ring + (j % span) * nnz;
            int32_t wt = j == i ? (int32_t)p->self_weight : 1;
            if (wt == 0) continue;
            memcpy(w->touched + nt, bv, (size_t)nnz * 4); /* may repeat an index: compacted later */
            nt += nnz;
            for (uint32_t s = 0; s < half; s++) w->acc[bv[s]] += wt;
            for (uint32_t s = half; s < nnz; s++) w->acc[bv[s]] -= wt;
        }
        out[i] = finish_position(p, w, nt);
    }
}

int hippo_ri_signatures_segmented(const uint32_t *tokens, uint64_t n, const uint64_t *seg_ends, uint64_t nseg,
                                  const hippo_ri_params *p, uint32_t *out_sigs) {
    if (!p || (n && (!tokens || !out_sigs)) || (nseg && !seg_ends)) return HIPPO_EINVAL;
    if (!params_ok(p)) return HIPPO_EINVAL;
    if (n > HIPPO_MAX_N) return HIPPO_EINVAL;
    if (n == 0) return nseg == 0 ? HIPPO_OK : HIPPO_EINVAL;
    if (nseg == 0 || seg_ends[nseg - 1] != n) return HIPPO_EINVAL;
    for (uint64_t s = 0; s < nseg; s++)
        if (seg_ends[s] == 0 || (s > 0 && seg_ends[s] <= seg_ends[s - 1])) return HIPPO_EINVAL;
    ri_work w;
    int st = alloc_work(&w, p);
    if (st) return st;
    uint64_t a = 0;
    for (uint64_t s = 0; s < nseg; s++) {
        run_segment(p, &w, tokens, a, seg_ends[s], out_sigs);
        a = seg_ends[s];
    }
    free_work(&w);
    return HIPPO_OK;
}

int hippo_ri_signatures(const uint32_t *tokens, uint64_t n, const hippo_ri_params *p, uint32_t *out_sigs) {
    uint64_t end = n;
    return hippo_ri_signatures_segmented(tokens, n, &end, n ? 1 : 0, p, out_sigs);
}
