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

typedef struct ri_work {
    int32_t *acc;        /* dim */
    uint32_t *stamp;     /* dim: generation of the last touch */
    uint32_t *touched;   /* (2 * window + 1) * nnz */
    uint32_t *ring;      /* (2 * window + 1) * nnz base indices */
    uint32_t *hist;      /* |value| histogram, self_weight + 2 * window + 2 */
    uint32_t *ties;      /* candidates at the threshold value */
    uint32_t *rmask;     /* dim hyperplane sign masks */
    uint32_t gen;
} ri_work;

static void free_work(ri_work *w) {
    free(w->acc); free(w->stamp); free(w->touched); free(w->ring); free(w->hist); free(w->ties); free(w->rmask);
}

static int alloc_work(ri_work *w, const hippo_ri_params *p) {
    memset(w, 0, sizeof(*w));
    uint64_t span = 2 * (uint64_t)p->window + 1;
    uint64_t vmax = (uint64_t)p->self_weight + 2 * (uint64_t)p->window + 2;
    w->acc = (int32_t *)calloc(p->dim, 4);
    w->stamp = (uint32_t *)calloc(p->dim, 4);
    w->touched = (uint32_t *)malloc((size_t)(span * p->nnz) * 4);
    w->ring = (uint32_t *)malloc((size_t)(span * p->nnz) * 4);
    w->hist = (uint32_t *)calloc((size_t)vmax, 4);
    w->ties = (uint32_t *)malloc((size_t)(span * p->nnz) * 4);
    w->rmask = (uint32_t *)malloc((size_t)p->dim * 4);
    if (!w->acc || !w->stamp || !w->touched || !w->ring || !w->hist || !w->ties || !w->rmask) {
        free_work(w);
        return HIPPO_ENOMEM;
    }
    uint64_t rseed = splitmix64(p->seed ^ 0x5DEECE66DULL);
    for (uint32_t i = 0; i < p->dim; i++) w->rmask[i] = (uint32_t)splitmix64(rseed + i);
    return HIPPO_OK;
}

static uint32_t absv(int32_t v) { return v < 0 ? (uint32_t)(-(int64_t)v) : (uint32_t)v; }

/* Signature of one accumulated context (acc over touched[0..nt)). Resets acc. */
static uint32_t finish_position(const hippo_ri_params *p, ri_work *w, uint32_t nt) {
    uint32_t m = p->top_m;
    int32_t pos_sum[32], total = 0;
    uint32_t b, i, kept = 0;
    for (b = 0; b < 32; b++) pos_sum[b] = 0;
    /* threshold by histogram of |value| */
    uint32_t nonzero = 0, vmax = 0;
    for (i = 0; i < nt; i++) {
        uint32_t a = absv(w->acc[w->touched[i]]);
        if (a) { w->hist[a]++; nonzero++; if (a > vmax) vmax = a; }
    }
    uint32_t thr = 1, above = 0; /* keep |v| > thr-ish: find thr with count(> thr) < m <= count(>= thr) */
    if (nonzero > m) {
        uint32_t c = 0;
        for (thr = vmax; thr >= 1; thr--) {
            if (c + w->hist[thr] >= m) break;
            c += w->hist[thr];
        }
        above = c;
    }
    uint32_t need_ties = nonzero > m ? m - above : 0, nties = 0;
    for (i = 0; i < nt; i++) {
        uint32_t idx = w->touched[i];
        int32_t v = w->acc[idx];
        uint32_t a = absv(v);
        if (a) w->hist[a] = 0;
        if (!a) continue;
        if (nonzero > m) {
            if (a < thr) continue;
            if (a == thr) { w->ties[nties++] = idx; continue; }
        }
        uint32_t mask = w->rmask[idx];
        total += v;
        for (b = 0; b < 32; b++) pos_sum[b] += (int32_t)((mask >> b) & 1u) * v;
        kept++;
    }
    if (need_ties) {
        /* lowest indices among the ties: partial selection sort (ties are few) */
        for (uint32_t t = 0; t < need_ties; t++) {
            uint32_t best = t;
            for (uint32_t u = t + 1; u < nties; u++)
                if (w->ties[u] < w->ties[best]) best = u;
            uint32_t x = w->ties[t]; w->ties[t] = w->ties[best]; w->ties[best] = x;
            uint32_t idx = w->ties[t];
            int32_t v = w->acc[idx];
            uint32_t mask = w->rmask[idx];
            total += v;
            for (b = 0; b < 32; b++) pos_sum[b] += (int32_t)((mask >> b) & 1u) * v;
        }
    }
    for (i = 0; i < nt; i++) w->acc[w->touched[i]] = 0;
    /* sum_k v_k * R = 2 * (sum over R = +1) - total */
    uint32_t sig = 0;
    for (b = 0; b < p->sig_bits; b++)
        if (2 * (int64_t)pos_sum[b] - total > 0) sig |= (uint32_t)1 << b;
    (void)kept;
    return sig;
}

static void run_segment(const hippo_ri_params *p, ri_work *w, const uint32_t *tokens, uint64_t a, uint64_t e,
                        uint32_t *out) {
    uint64_t span = 2 * (uint64_t)p->window + 1, win = p->window;
    uint32_t nnz = p->nnz, half = nnz / 2;
    /* ring slot of position j: j % span; positions [a, min(e, a + win + 1)) first */
    uint64_t filled = a;
    for (uint64_t i = a; i < e; i++) {
        uint64_t hi = i + win + 1 < e ? i + win + 1 : e;
        while (filled < hi) { base_vector(p, tokens[filled], w->ring + (filled % span) * nnz); filled++; }
        uint64_t lo = i >= a + win ? i - win : a;
        uint32_t nt = 0;
        if (++w->gen == 0) { memset(w->stamp, 0, (size_t)p->dim * 4); w->gen = 1; }
        for (uint64_t j = lo; j < hi; j++) {
            const uint32_t *bv = w->ring + (j % span) * nnz;
            int32_t wt = j == i ? (int32_t)p->self_weight : 1;
            if (wt == 0) continue;
            for (uint32_t s = 0; s < nnz; s++) {
                uint32_t idx = bv[s];
                if (w->stamp[idx] != w->gen) { w->stamp[idx] = w->gen; w->touched[nt++] = idx; }
                w->acc[idx] += s < half ? wt : -wt;
            }
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
