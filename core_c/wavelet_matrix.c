/*
 * wavelet_matrix.c -- static wavelet matrix (seed paper §3.2; Claude & Navarro 2012).
 *
 * Level 0 stores the most significant bit of every symbol in sequence order. Before level l+1 the
 * sequence is stably partitioned by bit l (zeros first); zeros[l] is the number of zeros at level l.
 * A position p at level l therefore continues at
 *     rank0_l(p)                 if bit_l(p) == 0
 *     zeros[l] + rank1_l(p)      if bit_l(p) == 1
 * which is the step used by access (Algorithm 3), rank/count (Algorithm 1) and, inverted with
 * select, by select (Algorithm 2).
 */
#include "hippo_internal.h"

#define HIPPO_GROUP 16 /* queries interleaved per batch step so their cache misses overlap */

static int check_symbol(uint32_t bits, uint32_t symbol) {
    return bits >= 32 || (symbol >> bits) == 0;
}

/* ---- build -------------------------------------------------------------------------------- */

/* Sequential writer of payload words into a hippo_bv. */
static void write_level(hippo_bv *bv, const uint32_t *cur, uint64_t n, unsigned shift, uint64_t *zeros) {
    uint64_t i = 0, k = 0, z = 0;
    while (i < n) {
        uint64_t word = 0;
        unsigned j, lim = (n - i) < 64 ? (unsigned)(n - i) : 64;
        for (j = 0; j < lim; j++) word |= (uint64_t)((cur[i + j] >> shift) & 1u) << j;
        z += lim - hippo_popcount64(word);
        bv->lines[(k / 7) * HIPPO_BV_LINE_WORDS + 1 + (k % 7)] = word;
        k++;
        i += lim;
    }
    *zeros = z;
}

/* Stable partition by bit `shift`, zeros first. Branch-free: the bit is random, so a branch would
 * mispredict on every other symbol. */
static void partition_level(const uint32_t *cur, uint32_t *nxt, uint64_t n, unsigned shift, uint64_t zeros) {
    uint64_t zi = 0, oi = zeros, i;
    for (i = 0; i < n; i++) {
        uint32_t v = cur[i];
        unsigned b = (v >> shift) & 1u;
        nxt[hippo_pick(b, oi, zi)] = v;
        oi += b;
        zi += 1u - b;
    }
}

void hippo_wm_free(hippo_wm *wm) {
    if (!wm) return;
    for (uint32_t l = 0; l < 32; l++) hippo_bv_free(&wm->level[l]);
    free(wm->table);
    free(wm->starts);
    free(wm);
}

/* Builds from `work` (n symbols), which is clobbered; `tmp` is scratch of n symbols. */
static int build_inplace(uint32_t *work, uint32_t *tmp, uint64_t n, uint32_t bits, hippo_wm **out) {
    hippo_wm *wm = (hippo_wm *)calloc(1, sizeof(hippo_wm));
    if (!wm) return HIPPO_ENOMEM;
    wm->n = n;
    wm->bits = bits;
    int st = HIPPO_OK;
    uint32_t *cur = work, *nxt = tmp;
    for (uint32_t l = 0; l < bits; l++) {
        unsigned shift = bits - 1 - l;
        if ((st = hippo_bv_init(&wm->level[l], n)) != HIPPO_OK) goto fail;
        write_level(&wm->level[l], cur, n, shift, &wm->zeros[l]);
        if ((st = hippo_bv_finish(&wm->level[l])) != HIPPO_OK) goto fail;
        partition_level(cur, nxt, n, shift, wm->zeros[l]);
        uint32_t *t = cur; cur = nxt; nxt = t;
    }
    /* node-start table of the top levels (see hippo_internal.h) */
    {
        uint32_t top = 0;
        /* table of (2^(top+1) - 2) * 8 bytes, kept within 1/64 of the n * bits raw bits */
        while (top < bits && top < 20 && ((uint64_t)1 << (top + 14)) <= n * bits) top++;
        if (top) {
            wm->starts = (uint64_t *)malloc((size_t)(((uint64_t)2 << top) - 2) * 8);
            if (wm->starts) {
                wm->top = top;
                for (uint32_t l = 1; l <= top; l++) {
                    const hippo_bv *bv = &wm->level[l - 1];
                    uint64_t *cur_l = wm->starts + ((uint64_t)1 << l) - 2;
                    const uint64_t *prev = l > 1 ? wm->starts + ((uint64_t)1 << (l - 1)) - 2 : NULL;
                    for (uint64_t p = 0; p < ((uint64_t)1 << l); p++) {
                        uint64_t a = prev ? prev[p >> 1] : 0, r = hippo_bv_rank1(bv, a);
                        cur_l[p] = (p & 1) ? wm->zeros[l - 1] + r : a - r;
                    }
                }
            }
        }
    }
    /* cur now groups equal symbols together (ordered by bit-reversed symbol): the distinct-symbol
     * table is a run-length pass. Kept only while it is small next to the matrix itself. */
    if (n > 0 && n < ((uint64_t)1 << 32)) {
        uint64_t d = 1, i;
        for (i = 1; i < n; i++) d += cur[i] != cur[i - 1];
        if (d * 64 * 10 <= n * bits) {
            wm->table = (hippo_symcount *)malloc((size_t)d * sizeof(hippo_symcount));
            if (wm->table) {
                uint64_t j = 0;
                wm->table[0].symbol = cur[0];
                wm->table[0].count = 1;
                for (i = 1; i < n; i++) {
                    if (cur[i] != cur[i - 1]) {
                        j++;
                        wm->table[j].symbol = cur[i];
                        wm->table[j].count = 0;
                    }
                    wm->table[j].count++;
                }
                wm->ndistinct = d;
            }
        }
    }
    *out = wm;
    return HIPPO_OK;
fail:
    hippo_wm_free(wm);
    return st;
}

/* Internal: build from symbols already validated. */
int hippo_wm_build_trusted(const uint32_t *symbols, uint64_t n, uint32_t bits, hippo_wm **out);
int hippo_wm_build_trusted(const uint32_t *symbols, uint64_t n, uint32_t bits, hippo_wm **out) {
    uint64_t bytes;
    if (!hippo_mul_ok(n ? n : 1, 8, &bytes) || bytes > SIZE_MAX) return HIPPO_ENOMEM;
    uint32_t *buf = (uint32_t *)malloc((size_t)bytes);
    if (!buf) return HIPPO_ENOMEM;
    if (n) memcpy(buf, symbols, (size_t)n * 4);
    int st = build_inplace(buf, buf + n, n, bits, out);
    free(buf);
    return st;
}

int hippo_wm_build(const uint32_t *symbols, uint64_t n, uint32_t bits, hippo_wm **out) {
    if (!out || bits < 1 || bits > 32 || n > HIPPO_MAX_N || (n > 0 && !symbols)) return HIPPO_EINVAL;
    if (bits < 32)
        for (uint64_t i = 0; i < n; i++)
            if (symbols[i] >> bits) return HIPPO_EINVAL;
    return hippo_wm_build_trusted(symbols, n, bits, out);
}

uint64_t hippo_wm_len(const hippo_wm *wm) { return wm ? wm->n : 0; }
uint32_t hippo_wm_bits(const hippo_wm *wm) { return wm ? wm->bits : 0; }

uint64_t hippo_wm_nbytes(const hippo_wm *wm) {
    if (!wm) return 0;
    uint64_t b = sizeof(hippo_wm);
    for (uint32_t l = 0; l < wm->bits; l++) b += hippo_bv_nbytes(&wm->level[l]);
    return b + wm->ndistinct * sizeof(hippo_symcount) + (wm->top ? (((uint64_t)2 << wm->top) - 2) * 8 : 0);
}

/* ---- single queries ----------------------------------------------------------------------- */

HIPPO_CLONES uint32_t hippo_wm_access_unchecked(const hippo_wm *wm, uint64_t p) {
    uint32_t v = 0;
    for (uint32_t l = 0; l < wm->bits; l++) {
        uint64_t r;
        unsigned b = hippo_bv_get_rank1(&wm->level[l], p, &r);
        v = (v << 1) | b;
        p = hippo_pick(b, wm->zeros[l] + r, p - r);
    }
    return v;
}

/* Maps [s, e) at level 0 to the interval of `symbol` at the bottom (Algorithm 1). */
HIPPO_INLINE uint32_t rev32(uint32_t x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
    x = ((x >> 8) & 0x00FF00FFu) | ((x & 0x00FF00FFu) << 8);
    return (x >> 16) | (x << 16);
}

/* First position at level l (1 <= l <= top) of the node of l-bit prefix p. */
HIPPO_INLINE uint64_t node_start(const hippo_wm *wm, uint32_t l, uint32_t p) {
    return wm->starts[((uint64_t)1 << l) - 2 + p];
}

/* One past the last position of that node: nodes are laid out in bit-reversed prefix order, so the
 * next node is the one whose reversed prefix is one larger (or the end of the level). */
HIPPO_INLINE uint64_t node_end(const hippo_wm *wm, uint32_t l, uint32_t p) {
    uint32_t r = rev32(p) >> (32 - l);
    if (r == ((uint32_t)1 << l) - 1) return wm->n;
    return node_start(wm, l, rev32(r + 1) >> (32 - l));
}

HIPPO_INLINE void descend(const hippo_wm *wm, uint32_t symbol, uint64_t *s, uint64_t *e) {
    uint64_t a = *s, b = *e;
    uint32_t l = 0;
    if (a == 0 && b == wm->n && wm->top) {
        /* the whole sequence: the top levels' intervals are nodes, read from the table */
        l = wm->top;
        uint32_t p = symbol >> (wm->bits - l);
        a = node_start(wm, l, p);
        b = node_end(wm, l, p);
    }
    for (; l < wm->bits; l++) {
        unsigned bit = (symbol >> (wm->bits - 1 - l)) & 1u;
        uint64_t ra = hippo_bv_rank1(&wm->level[l], a), rb = hippo_bv_rank1(&wm->level[l], b);
        a = hippo_pick(bit, wm->zeros[l] + ra, a - ra);
        b = hippo_pick(bit, wm->zeros[l] + rb, b - rb);
    }
    *s = a;
    *e = b;
}

HIPPO_CLONES uint64_t hippo_wm_count_unchecked(const hippo_wm *wm, uint32_t symbol, uint64_t start, uint64_t end) {
    if (start >= end) return 0;
    uint64_t s = start, e = end;
    descend(wm, symbol, &s, &e);
    return e - s;
}

HIPPO_CLONES uint64_t hippo_wm_rank_unchecked(const hippo_wm *wm, uint32_t symbol, uint64_t i) {
    if (i == 0) return 0;
    if (i == wm->n) return hippo_wm_count_unchecked(wm, symbol, 0, i);
    uint64_t a = 0, b = i;
    for (uint32_t l = 0; l < wm->bits; l++) {
        const hippo_bv *bv = &wm->level[l];
        unsigned shift = wm->bits - 1 - l, bit = (symbol >> shift) & 1u;
        uint64_t rb = hippo_bv_rank1(bv, b);
        if (l < wm->top) {
            a = wm->starts[((uint64_t)2 << l) - 2 + (symbol >> shift)];
        } else {
            uint64_t ra = hippo_bv_rank1(bv, a);
            a = hippo_pick(bit, wm->zeros[l] + ra, a - ra);
        }
        b = hippo_pick(bit, wm->zeros[l] + rb, b - rb);
        if (a == b) return 0;
    }
    return b - a;
}

HIPPO_CLONES uint64_t hippo_wm_select_unchecked(const hippo_wm *wm, uint32_t symbol, uint64_t k) {
    uint64_t s = 0, e = wm->n;
    descend(wm, symbol, &s, &e);
    if (k < 1 || k > e - s) return UINT64_MAX;
    /* Algorithm 2: lift the bottom position of the k-th occurrence back to level 0. */
    uint64_t p = s + k - 1;
    for (uint32_t l = wm->bits; l-- > 0;) {
        unsigned bit = (symbol >> (wm->bits - 1 - l)) & 1u;
        if (bit) p = hippo_bv_select1(&wm->level[l], p - wm->zeros[l] + 1);
        else p = hippo_bv_select0(&wm->level[l], p + 1);
    }
    return p;
}

/* Interleaved access: HIPPO_GROUP independent descents advance one level at a time, so the
 * out-of-order core keeps several cache misses in flight instead of one. */
HIPPO_CLONES void hippo_wm_access_many_unchecked(const hippo_wm *wm, const int64_t *positions, uint64_t m,
                                                 int64_t offset, uint32_t *out) {
    uint64_t i = 0;
    uint64_t p[HIPPO_GROUP];
    uint32_t v[HIPPO_GROUP];
    for (; i + HIPPO_GROUP <= m; i += HIPPO_GROUP) {
        int j;
        for (j = 0; j < HIPPO_GROUP; j++) { p[j] = (uint64_t)(positions[i + j] - offset); v[j] = 0; }
        for (uint32_t l = 0; l < wm->bits; l++) {
            const hippo_bv *bv = &wm->level[l];
            uint64_t z = wm->zeros[l];
            for (j = 0; j < HIPPO_GROUP; j++) hippo_bv_prefetch(bv, p[j]);
            for (j = 0; j < HIPPO_GROUP; j++) {
                uint64_t r;
                unsigned b = hippo_bv_get_rank1(bv, p[j], &r);
                v[j] = (v[j] << 1) | b;
                p[j] = hippo_pick(b, z + r, p[j] - r);
            }
        }
        for (j = 0; j < HIPPO_GROUP; j++) out[i + j] = v[j];
    }
    for (; i < m; i++) out[i] = hippo_wm_access_unchecked(wm, (uint64_t)(positions[i] - offset));
}

/* Interleaved rank for up to HIPPO_GROUP queries: out[j] = rank(sym[j], pos[j]). */
static HIPPO_CLONES void rank_group(const hippo_wm *wm, const uint32_t *sym, const uint64_t *pos, int cnt,
                                    uint64_t *out) {
    uint64_t a[HIPPO_GROUP], b[HIPPO_GROUP];
    int j;
    uint32_t l0 = 0;
    for (j = 0; j < cnt; j++) { a[j] = 0; b[j] = pos[j]; }
    if (wm->top) {
        /* a query over the whole sequence starts below the table levels: its intervals there are
         * whole nodes */
        int all_full = 1;
        for (j = 0; j < cnt; j++) all_full &= pos[j] == wm->n;
        if (all_full) {
            l0 = wm->top;
            for (j = 0; j < cnt; j++) {
                uint32_t p = sym[j] >> (wm->bits - l0);
                a[j] = node_start(wm, l0, p);
                b[j] = node_end(wm, l0, p);
            }
        }
    }
    for (uint32_t l = l0; l < wm->bits; l++) {
        const hippo_bv *bv = &wm->level[l];
        uint64_t z = wm->zeros[l];
        unsigned shift = wm->bits - 1 - l;
        if (l < wm->top) {
            /* the interval start comes from the node-start table: one rank per query */
            const uint64_t *st = wm->starts + ((uint64_t)2 << l) - 2;
            for (j = 0; j < cnt; j++) hippo_bv_prefetch(bv, b[j]);
            for (j = 0; j < cnt; j++) {
                if (a[j] == b[j]) continue; /* empty interval: the rank is 0 from here on */
                uint64_t rb = hippo_bv_rank1(bv, b[j]);
                unsigned bit = (sym[j] >> shift) & 1u;
                a[j] = st[sym[j] >> shift];
                b[j] = hippo_pick(bit, z + rb, b[j] - rb);
            }
            continue;
        }
        for (j = 0; j < cnt; j++) {
            hippo_bv_prefetch(bv, a[j]);
            hippo_bv_prefetch(bv, b[j]);
        }
        for (j = 0; j < cnt; j++) {
            if (a[j] == b[j]) continue; /* empty interval: the rank is 0 from here on */
            uint64_t ra = hippo_bv_rank1(bv, a[j]), rb = hippo_bv_rank1(bv, b[j]);
            unsigned bit = (sym[j] >> shift) & 1u;
            a[j] = hippo_pick(bit, z + ra, a[j] - ra);
            b[j] = hippo_pick(bit, z + rb, b[j] - rb);
        }
    }
    for (j = 0; j < cnt; j++) out[j] = b[j] - a[j];
}

/* ---- range decoding ----------------------------------------------------------------------- */
/* Decodes [start, end) level by level. The elements of the range, kept in level order, form runs of
 * consecutive positions (one run per distinct prefix, at most min(2^l, m) runs at level l), so the
 * rank of the next element is the previous rank plus the previous bit except at run starts, which
 * need one directory rank. Each level is a stable partition by the bit just read, exactly like the
 * build. Cost O(m * bits) plus O(runs) directory ranks. Scratch: 2 x (u32 value, u32 index, u64 pos). */
#define DECODE_CHUNK 65536u

static HIPPO_CLONES void decode_chunk(const hippo_wm *wm, uint64_t start, uint32_t m, uint32_t *out, uint32_t *val,
                                      uint32_t *idx, uint64_t *pos, uint32_t *val2, uint32_t *idx2, uint64_t *pos2) {
    uint32_t i;
    for (i = 0; i < m; i++) { val[i] = 0; idx[i] = i; pos[i] = start + i; }
    for (uint32_t l = 0; l < wm->bits; l++) {
        const hippo_bv *bv = &wm->level[l];
        uint64_t z = wm->zeros[l];
        uint64_t prev_p = UINT64_MAX - 1, prev_r = 0;
        unsigned prev_b = 0;
        uint32_t nz = 0;
        /* pass 1: read bits, compute next-level positions */
        for (i = 0; i < m; i++) {
            uint64_t p = pos[i], r;
            unsigned b;
            if (p == prev_p + 1) {
                r = prev_r + prev_b;
                b = hippo_bv_get(bv, p);
            } else {
                b = hippo_bv_get_rank1(bv, p, &r);
            }
            prev_p = p; prev_r = r; prev_b = b;
            val[i] = (val[i] << 1) | b;
            nz += !b;
            pos[i] = b ? z + r : p - r; /* next-level position, stored in place */
        }
        /* pass 2: stable partition (zeros first) */
        uint32_t zi = 0, oi = nz;
        for (i = 0; i < m; i++) {
            uint32_t t = (val[i] & 1u) ? oi++ : zi++;
            val2[t] = val[i]; idx2[t] = idx[i]; pos2[t] = pos[i];
        }
        uint32_t *tv = val; val = val2; val2 = tv;
        uint32_t *ti = idx; idx = idx2; idx2 = ti;
        uint64_t *tp = pos; pos = pos2; pos2 = tp;
    }
    for (i = 0; i < m; i++) out[idx[i]] = val[i];
}

/* Whole-matrix decode, bottom-up: the level-l order is the merge of the two halves of the
 * level-(l+1) order (zeros part from 0, ones part from zeros[l]), steered by the level-l bits read
 * sequentially. Each level prepends its bit. No index array, sequential access only. */
static HIPPO_CLONES void decode_all(const hippo_wm *wm, uint32_t *out, uint32_t *tmp) {
    uint64_t n = wm->n, i;
    uint32_t *cur = (wm->bits & 1) ? out : tmp, *prev = (wm->bits & 1) ? tmp : out;
    /* after `bits` levels the result must land in `out`: start in the buffer of matching parity */
    memset(prev, 0, (size_t)n * 4);
    for (uint32_t l = wm->bits; l-- > 0;) {
        const hippo_bv *bv = &wm->level[l];
        uint32_t bitval = (uint32_t)1 << (wm->bits - 1 - l);
        uint64_t zi = 0, oi = wm->zeros[l], k = 0;
        for (i = 0; i < n; k++) {
            uint64_t word = bv->lines[(k / 7) * HIPPO_BV_LINE_WORDS + 1 + (k % 7)];
            uint64_t lim = n - i < 64 ? n - i : 64;
            for (uint64_t j = 0; j < lim; j++, i++) {
                unsigned b = (unsigned)((word >> j) & 1u);
                uint64_t src = hippo_pick(b, oi, zi);
                cur[i] = prev[src] | (bitval & (0u - b));
                oi += b;
                zi += 1u - b;
            }
        }
        uint32_t *t = cur; cur = prev; prev = t;
    }
}

int hippo_wm_decode_range(const hippo_wm *wm, uint64_t start, uint64_t end, uint32_t *out) {
    if (start >= end) return HIPPO_OK;
    if (start == 0 && end == wm->n) {
        uint32_t *tmp = (uint32_t *)malloc((size_t)wm->n * 4);
        if (tmp) {
            decode_all(wm, out, tmp);
            free(tmp);
            return HIPPO_OK;
        }
    }
    uint64_t m = end - start;
    uint32_t c = m < DECODE_CHUNK ? (uint32_t)m : DECODE_CHUNK;
    unsigned char *scratch = (unsigned char *)malloc((size_t)c * 32);
    if (!scratch) return HIPPO_ENOMEM;
    uint64_t *pos = (uint64_t *)scratch, *pos2 = pos + c;
    uint32_t *val = (uint32_t *)(pos2 + c), *idx = val + c, *val2 = idx + c, *idx2 = val2 + c;
    for (uint64_t s = start; s < end; s += c) {
        uint32_t len = (end - s) < c ? (uint32_t)(end - s) : c;
        decode_chunk(wm, s, len, out + (s - start), val, idx, pos, val2, idx2, pos2);
    }
    free(scratch);
    return HIPPO_OK;
}

/* ---- checked public queries --------------------------------------------------------------- */

int hippo_wm_access(const hippo_wm *wm, uint64_t i, uint32_t *out) {
    if (!wm || !out) return HIPPO_EINVAL;
    if (i >= wm->n) return HIPPO_ERANGE;
    *out = hippo_wm_access_unchecked(wm, i);
    return HIPPO_OK;
}

int hippo_wm_access_many(const hippo_wm *wm, const int64_t *positions, uint64_t m, uint32_t *out) {
    if (!wm || (m && (!positions || !out))) return HIPPO_EINVAL;
    for (uint64_t i = 0; i < m; i++)
        if (positions[i] < 0 || (uint64_t)positions[i] >= wm->n) return HIPPO_ERANGE;
    hippo_wm_access_many_unchecked(wm, positions, m, 0, out);
    return HIPPO_OK;
}

int hippo_wm_access_range(const hippo_wm *wm, uint64_t start, uint64_t end, uint32_t *out) {
    if (!wm || (end > start && !out)) return HIPPO_EINVAL;
    if (start > end || end > wm->n) return HIPPO_ERANGE;
    return hippo_wm_decode_range(wm, start, end, out);
}

int hippo_wm_access_ranges(const hippo_wm *wm, const uint64_t *starts, const uint64_t *ends, uint64_t m,
                           uint32_t *out) {
    if (!wm || (m && (!starts || !ends))) return HIPPO_EINVAL;
    uint64_t total;
    if (hippo_check_ranges(starts, ends, m, wm->n, &total)) return HIPPO_ERANGE;
    if (total && !out) return HIPPO_EINVAL;
    for (uint64_t j = 0; j < m; j++) {
        int st = hippo_wm_decode_range(wm, starts[j], ends[j], out);
        if (st) return st;
        out += ends[j] - starts[j];
    }
    return HIPPO_OK;
}

int hippo_wm_rank(const hippo_wm *wm, uint32_t symbol, uint64_t i, uint64_t *out) {
    if (!wm || !out || !check_symbol(wm->bits, symbol)) return HIPPO_EINVAL;
    if (i > wm->n) return HIPPO_ERANGE;
    *out = hippo_wm_rank_unchecked(wm, symbol, i);
    return HIPPO_OK;
}

/* Shared by the static and dynamic batch rank: out[j] (+)= rank within wm of local positions. */
void hippo_wm_rank_many_local(const hippo_wm *wm, const uint32_t *symbols, const int64_t *positions,
                              uint64_t m, int64_t offset, uint64_t *out, int accumulate);
void hippo_wm_rank_many_local(const hippo_wm *wm, const uint32_t *symbols, const int64_t *positions,
                              uint64_t m, int64_t offset, uint64_t *out, int accumulate) {
    /* two groups: queries covering the whole matrix (cheaper, see rank_group) and the rest */
    uint32_t sym[2][HIPPO_GROUP];
    uint64_t pos[2][HIPPO_GROUP], res[HIPPO_GROUP];
    uint64_t idx[2][HIPPO_GROUP];
    int cnt[2] = {0, 0};
    for (uint64_t i = 0; i <= m; i++) {
        int g = 0;
        if (i < m) {
            int64_t local = positions[i] - offset;
            if (local <= 0) continue;
            if ((uint64_t)local > wm->n) local = (int64_t)wm->n;
            g = (uint64_t)local == wm->n;
            sym[g][cnt[g]] = symbols[i];
            pos[g][cnt[g]] = (uint64_t)local;
            idx[g][cnt[g]] = i;
            cnt[g]++;
        }
        for (int h = 0; h < 2; h++) {
            if (cnt[h] == HIPPO_GROUP || (i == m && cnt[h] > 0)) {
                rank_group(wm, sym[h], pos[h], cnt[h], res);
                for (int j = 0; j < cnt[h]; j++) {
                    if (accumulate) out[idx[h][j]] += res[j]; else out[idx[h][j]] = res[j];
                }
                cnt[h] = 0;
            }
        }
    }
}

int hippo_wm_rank_many(const hippo_wm *wm, const uint32_t *symbols, const int64_t *positions, uint64_t m,
                       uint64_t *out) {
    if (!wm || (m && (!symbols || !positions || !out))) return HIPPO_EINVAL;
    for (uint64_t i = 0; i < m; i++) {
        if (!check_symbol(wm->bits, symbols[i])) return HIPPO_EINVAL;
        if (positions[i] < 0 || (uint64_t)positions[i] > wm->n) return HIPPO_ERANGE;
    }
    if (m) memset(out, 0, (size_t)m * 8);
    hippo_wm_rank_many_local(wm, symbols, positions, m, 0, out, 0);
    return HIPPO_OK;
}

int hippo_wm_select(const hippo_wm *wm, uint32_t symbol, uint64_t k, uint64_t *out) {
    if (!wm || !out || !check_symbol(wm->bits, symbol)) return HIPPO_EINVAL;
    if (k < 1) return HIPPO_ERANGE;
    uint64_t p = hippo_wm_select_unchecked(wm, symbol, k);
    if (p == UINT64_MAX) return HIPPO_ERANGE;
    *out = p;
    return HIPPO_OK;
}

int hippo_wm_count(const hippo_wm *wm, uint32_t symbol, uint64_t start, uint64_t end, uint64_t *out) {
    if (!wm || !out || !check_symbol(wm->bits, symbol)) return HIPPO_EINVAL;
    if (start > end || end > wm->n) return HIPPO_ERANGE;
    *out = hippo_wm_count_unchecked(wm, symbol, start, end);
    return HIPPO_OK;
}

int hippo_wm_count_many(const hippo_wm *wm, const uint32_t *symbols, uint64_t m, uint64_t start, uint64_t end,
                        uint64_t *out) {
    if (!wm || (m && (!symbols || !out))) return HIPPO_EINVAL;
    for (uint64_t i = 0; i < m; i++)
        if (!check_symbol(wm->bits, symbols[i])) return HIPPO_EINVAL;
    if (start > end || end > wm->n) return HIPPO_ERANGE;
    for (uint64_t i = 0; i < m; i++) out[i] = hippo_wm_count_unchecked(wm, symbols[i], start, end);
    return HIPPO_OK;
}

/* ---- Hamming ball ------------------------------------------------------------------------- */

struct hippo_hb_acc {
    uint32_t *keys;
    uint64_t *vals;
    uint8_t *used;
    uint64_t cap, size;
};

int hippo_hb_acc_init(hippo_hb_acc **acc) {
    hippo_hb_acc *a = (hippo_hb_acc *)calloc(1, sizeof(*a));
    if (!a) return HIPPO_ENOMEM;
    a->cap = 64;
    a->keys = (uint32_t *)malloc(64 * 4);
    a->vals = (uint64_t *)malloc(64 * 8);
    a->used = (uint8_t *)calloc(64, 1);
    if (!a->keys || !a->vals || !a->used) { hippo_hb_acc_free(a); return HIPPO_ENOMEM; }
    *acc = a;
    return HIPPO_OK;
}

void hippo_hb_acc_free(hippo_hb_acc *a) {
    if (!a) return;
    free(a->keys); free(a->vals); free(a->used); free(a);
}

static uint64_t hash32(uint32_t x) { return ((uint64_t)x * 0x9E3779B97F4A7C15ULL) >> 17; }

static int acc_grow(hippo_hb_acc *a) {
    uint64_t ncap = a->cap * 2;
    uint32_t *k = (uint32_t *)malloc((size_t)ncap * 4);
    uint64_t *v = (uint64_t *)malloc((size_t)ncap * 8);
    uint8_t *u = (uint8_t *)calloc((size_t)ncap, 1);
    if (!k || !v || !u) { free(k); free(v); free(u); return HIPPO_ENOMEM; }
    for (uint64_t i = 0; i < a->cap; i++) {
        if (!a->used[i]) continue;
        uint64_t h = hash32(a->keys[i]) & (ncap - 1);
        while (u[h]) h = (h + 1) & (ncap - 1);
        u[h] = 1; k[h] = a->keys[i]; v[h] = a->vals[i];
    }
    free(a->keys); free(a->vals); free(a->used);
    a->keys = k; a->vals = v; a->used = u; a->cap = ncap;
    return HIPPO_OK;
}

int hippo_hb_acc_add(hippo_hb_acc *a, uint32_t symbol, uint64_t count) {
    if (count == 0) return HIPPO_OK;
    if ((a->size + 1) * 4 > a->cap * 3) {
        int st = acc_grow(a);
        if (st) return st;
    }
    uint64_t h = hash32(symbol) & (a->cap - 1);
    while (a->used[h]) {
        if (a->keys[h] == symbol) { a->vals[h] += count; return HIPPO_OK; }
        h = (h + 1) & (a->cap - 1);
    }
    a->used[h] = 1; a->keys[h] = symbol; a->vals[h] = count; a->size++;
    return HIPPO_OK;
}

static int cmp_u32(const void *x, const void *y) {
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

int hippo_hb_acc_emit(hippo_hb_acc *a, uint32_t *out_symbols, uint64_t *out_counts, uint64_t capacity,
                      uint64_t *out_needed) {
    *out_needed = a->size;
    if (capacity == 0 || a->size == 0) return HIPPO_OK;
    /* compact keys to the front, sort, then look counts up again */
    uint32_t *keys = (uint32_t *)malloc((size_t)a->size * 4);
    uint64_t j = 0, i;
    if (!keys) return HIPPO_ENOMEM;  /* nothing written: the caller must not read the outputs */
    for (i = 0; i < a->cap; i++) if (a->used[i]) keys[j++] = a->keys[i];
    qsort(keys, (size_t)j, 4, cmp_u32);
    uint64_t w = capacity < j ? capacity : j;
    for (i = 0; i < w; i++) {
        uint64_t h = hash32(keys[i]) & (a->cap - 1);
        while (a->keys[h] != keys[i] || !a->used[h]) h = (h + 1) & (a->cap - 1);
        out_symbols[i] = keys[i];
        out_counts[i] = a->vals[h];
    }
    free(keys);
    return HIPPO_OK;
}

/* Branch-and-bound over the levels (seed §3.3 Hamming ball, evaluated in the compressed domain):
 * a node is a symbol prefix with its interval at that level; both children cost two ranks; a child
 * is pruned when its interval is empty or its accumulated mismatches exceed the radius. */
static HIPPO_CLONES int hb_branch(const hippo_wm *wm, uint32_t q, uint32_t radius, uint64_t start, uint64_t end,
                                  hippo_hb_acc *acc) {
    struct node { uint64_t lo, hi; uint32_t prefix, level, mism; } stack[2 * 33 + 2];
    int top = 0, st;
    stack[top].lo = start; stack[top].hi = end; stack[top].prefix = 0; stack[top].level = 0; stack[top].mism = 0;
    top++;
    while (top > 0) {
        struct node nd = stack[--top];
        if (nd.level == wm->bits) {
            if ((st = hippo_hb_acc_add(acc, nd.prefix, nd.hi - nd.lo)) != HIPPO_OK) return st;
            continue;
        }
        const hippo_bv *bv = &wm->level[nd.level];
        uint64_t rlo = hippo_bv_rank1(bv, nd.lo), rhi = hippo_bv_rank1(bv, nd.hi);
        unsigned qb = (q >> (wm->bits - 1 - nd.level)) & 1u;
        uint64_t zlo = nd.lo - rlo, zhi = nd.hi - rhi;
        uint64_t olo = wm->zeros[nd.level] + rlo, ohi = wm->zeros[nd.level] + rhi;
        uint32_t mz = nd.mism + (qb != 0), mo = nd.mism + (qb != 1);
        /* push the mismatching child first so the matching one is explored first */
        if (qb) {
            if (zhi > zlo && mz <= radius) { stack[top].lo = zlo; stack[top].hi = zhi; stack[top].prefix = nd.prefix << 1; stack[top].level = nd.level + 1; stack[top].mism = mz; top++; }
            if (ohi > olo && mo <= radius) { stack[top].lo = olo; stack[top].hi = ohi; stack[top].prefix = (nd.prefix << 1) | 1u; stack[top].level = nd.level + 1; stack[top].mism = mo; top++; }
        } else {
            if (ohi > olo && mo <= radius) { stack[top].lo = olo; stack[top].hi = ohi; stack[top].prefix = (nd.prefix << 1) | 1u; stack[top].level = nd.level + 1; stack[top].mism = mo; top++; }
            if (zhi > zlo && mz <= radius) { stack[top].lo = zlo; stack[top].hi = zhi; stack[top].prefix = nd.prefix << 1; stack[top].level = nd.level + 1; stack[top].mism = mz; top++; }
        }
    }
    return HIPPO_OK;
}

static int hb_scan_decode(const hippo_wm *wm, uint32_t q, uint32_t radius, uint64_t start, uint64_t end,
                          hippo_hb_acc *acc) {
    /* whole matrix: one bottom-up decode; otherwise level-wise range decoding in chunks */
    uint64_t chunk = (start == 0 && end == wm->n) ? wm->n : (end - start < DECODE_CHUNK ? end - start : DECODE_CHUNK);
    uint32_t *buf = (uint32_t *)malloc((size_t)chunk * 4);
    if (!buf) return HIPPO_ENOMEM;
    int st = HIPPO_OK;
    for (uint64_t s = start; s < end && st == HIPPO_OK; s += chunk) {
        uint64_t e = end - s < chunk ? end : s + chunk;
        st = hippo_wm_decode_range(wm, s, e, buf);
        for (uint64_t i = 0; i < e - s && st == HIPPO_OK; i++)
            if (hippo_popcount64((uint64_t)(buf[i] ^ q)) <= radius) st = hippo_hb_acc_add(acc, buf[i], 1);
    }
    free(buf);
    return st;
}

static int hb_scan_table(const hippo_wm *wm, uint32_t q, uint32_t radius, uint64_t start, uint64_t end,
                         hippo_hb_acc *acc) {
    int full = (start == 0 && end == wm->n), st;
    for (uint64_t i = 0; i < wm->ndistinct; i++) {
        uint32_t s = wm->table[i].symbol;
        if (hippo_popcount64((uint64_t)(s ^ q)) > radius) continue;
        uint64_t c = full ? wm->table[i].count : hippo_wm_count_unchecked(wm, s, start, end);
        if ((st = hippo_hb_acc_add(acc, s, c)) != HIPPO_OK) return st;
    }
    return HIPPO_OK;
}

/* sum_{j <= r} C(n, j), saturating at 2^62 */
static double ball_size(uint32_t n, uint32_t r) {
    double total = 0, c = 1;
    for (uint32_t j = 0; j <= r && j <= n; j++) {
        total += c;
        c = c * (double)(n - j) / (double)(j + 1);
    }
    return total;
}

/* Cost model, in approximate nanoseconds from the C timing loop on the reference machine:
 *   branch: ~15 per directory rank, 2 ranks per visited node. The nodes at depth l are the prefixes
 *           within distance r of the query's prefix (sum_{j<=r} C(l, j), at most 2^l) that occur in the
 *           interval: expected fraction min(1, m / 2^l) for m symbols (m = distinct count when known).
 *   table:  ~1 per distinct symbol (XOR + popcount, sequential); for a partial interval add a count
 *           (2 * bits ranks) per expected hit.
 *   decode: ~1.6 per element and level for a whole matrix (bottom-up decode), ~9 for a partial range
 *           (level-wise range decoding), plus the XOR-popcount filter. */
static int hb_choose(const hippo_wm *wm, uint32_t radius, uint64_t start, uint64_t end) {
    uint64_t m = end - start;
    int whole = start == 0 && end == wm->n;
    double present = (double)m;
    if (wm->table && (double)wm->ndistinct < present) present = (double)wm->ndistinct;
    double nodes = 0;
    for (uint32_t l = 1; l <= wm->bits; l++) {
        double p2 = l < 60 ? (double)((uint64_t)1 << l) : 1e18;
        double x = ball_size(l, radius);
        if (p2 < x) x = p2;
        double frac = present / p2;
        x *= frac < 1 ? frac : 1;
        nodes += x < 1 ? 1 : x;
    }
    double cost_branch = 2.0 * 15.0 * nodes;
    double cost_decode = (whole ? 1.6 : 9.0) * (double)m * wm->bits + 1.0 * (double)m;
    double cost_table = 1e300;
    if (wm->table) {
        cost_table = 1.0 * (double)wm->ndistinct;
        if (!whole) {
            double hits = (double)wm->ndistinct * ball_size(wm->bits, radius) / (double)((uint64_t)1 << wm->bits);
            if (hits > (double)wm->ndistinct) hits = (double)wm->ndistinct;
            cost_table += hits * 2.0 * 15.0 * wm->bits;
        }
    }
    if (cost_branch <= cost_decode && cost_branch <= cost_table) return HIPPO_HB_BRANCH;
    return cost_table <= cost_decode ? HIPPO_HB_SCAN_TABLE : HIPPO_HB_SCAN_DECODE;
}

int hippo_wm_hamming_ball_acc(const hippo_wm *wm, uint32_t symbol, uint32_t radius, uint64_t start,
                              uint64_t end, int method, hippo_hb_acc *acc) {
    if (start >= end) return HIPPO_OK;
    if (radius > wm->bits) radius = wm->bits;
    if (method == HIPPO_HB_AUTO) method = hb_choose(wm, radius, start, end);
    switch (method) {
    case HIPPO_HB_BRANCH: return hb_branch(wm, symbol, radius, start, end, acc);
    case HIPPO_HB_SCAN_TABLE:
        if (wm->table) return hb_scan_table(wm, symbol, radius, start, end, acc);
        return hb_scan_decode(wm, symbol, radius, start, end, acc);
    default: return hb_scan_decode(wm, symbol, radius, start, end, acc);
    }
}

int hippo_wm_hamming_ball(const hippo_wm *wm, uint32_t symbol, uint32_t radius, uint64_t start, uint64_t end,
                          int method, uint32_t *out_symbols, uint64_t *out_counts, uint64_t capacity,
                          uint64_t *out_needed) {
    if (!wm || !out_needed || !check_symbol(wm->bits, symbol)) return HIPPO_EINVAL;
    if (method < HIPPO_HB_AUTO || method > HIPPO_HB_SCAN_DECODE) return HIPPO_EINVAL;
    if (capacity && (!out_symbols || !out_counts)) return HIPPO_EINVAL;
    if (start > end || end > wm->n) return HIPPO_ERANGE;
    hippo_hb_acc *acc;
    int st = hippo_hb_acc_init(&acc);
    if (st) return st;
    st = hippo_wm_hamming_ball_acc(wm, symbol, radius, start, end, method, acc);
    if (st == HIPPO_OK) st = hippo_hb_acc_emit(acc, out_symbols, out_counts, capacity, out_needed);
    hippo_hb_acc_free(acc);
    return st;
}

/* ---- serialization ------------------------------------------------------------------------ */
/* magic | version | reserved | u32 bits | u32 0 | u64 n | packed symbols | checksum */
#define WM_HEADER (8 + 4 + 4 + 4 + 4 + 8)

int hippo_seq_serialized_size(uint64_t n, uint32_t bits, uint64_t *out);
int hippo_seq_serialized_size(uint64_t n, uint32_t bits, uint64_t *out) {
    *out = WM_HEADER + hippo_packed_words(n, bits) * 8 + 8;
    return HIPPO_OK;
}

/* Writes a sequence blob from a materialized symbol array. */
int hippo_seq_serialize(const char magic[8], const uint32_t *symbols, uint64_t n, uint32_t bits, uint8_t *buf,
                        uint64_t cap, uint64_t *out_written);
int hippo_seq_serialize(const char magic[8], const uint32_t *symbols, uint64_t n, uint32_t bits, uint8_t *buf,
                        uint64_t cap, uint64_t *out_written) {
    uint64_t need;
    hippo_seq_serialized_size(n, bits, &need);
    if (cap < need) return HIPPO_ERANGE;
    hippo_writer w = {buf, cap, 0};
    hippo_put_bytes(&w, magic, 8);
    hippo_put_u32(&w, HIPPO_BLOB_VERSION);
    hippo_put_u32(&w, 0);
    hippo_put_u32(&w, bits);
    hippo_put_u32(&w, 0);
    hippo_put_u64(&w, n);
    hippo_pack_symbols(symbols, n, bits, buf + w.pos);
    w.pos += hippo_packed_words(n, bits) * 8;
    hippo_put_checksum(&w);
    if (w.pos != need) return HIPPO_EINTERNAL;
    if (out_written) *out_written = w.pos;
    return HIPPO_OK;
}

/* Validates a sequence blob (checksum, header, exact payload length); gives its payload, n and bits. */
static int seq_open(const char magic[8], const uint8_t *blob, uint64_t len, const uint8_t **out_payload,
                    uint64_t *out_n, uint32_t *out_bits) {
    hippo_reader r;
    int st = hippo_open_blob(&r, blob, len, magic);
    if (st) return st;
    uint32_t bits, pad;
    uint64_t n;
    if (!hippo_get_u32(&r, &bits) || !hippo_get_u32(&r, &pad) || !hippo_get_u64(&r, &n)) return HIPPO_ECORRUPT;
    if (bits < 1 || bits > 32 || pad != 0 || n > HIPPO_MAX_N) return HIPPO_ECORRUPT;
    uint64_t words = hippo_packed_words(n, bits);
    if (r.len - r.pos != words * 8) return HIPPO_ECORRUPT; /* exact payload, checked before allocating */
    const uint8_t *payload = hippo_get_bytes(&r, words * 8);
    if (!payload) return HIPPO_ECORRUPT;
    *out_payload = payload;
    *out_n = n;
    *out_bits = bits;
    return HIPPO_OK;
}

/* Validates a sequence blob and returns the unpacked symbols (malloc'd). */
int hippo_seq_deserialize(const char magic[8], const uint8_t *blob, uint64_t len, uint32_t **out_symbols,
                          uint64_t *out_n, uint32_t *out_bits);
int hippo_seq_deserialize(const char magic[8], const uint8_t *blob, uint64_t len, uint32_t **out_symbols,
                          uint64_t *out_n, uint32_t *out_bits) {
    const uint8_t *payload;
    uint64_t n;
    uint32_t bits;
    int st = seq_open(magic, blob, len, &payload, &n, &bits);
    if (st) return st;
    uint32_t *sym = (uint32_t *)malloc((size_t)(n ? n : 1) * 4);
    if (!sym) return HIPPO_ENOMEM;
    hippo_unpack_symbols(payload, n, bits, sym);
    *out_symbols = sym;
    *out_n = n;
    *out_bits = bits;
    return HIPPO_OK;
}

static const char WM_MAGIC[8] = {'H', 'I', 'P', 'P', 'O', 'W', 'M', 0};

int hippo_wm_serialized_size(const hippo_wm *wm, uint64_t *out_size) {
    if (!wm || !out_size) return HIPPO_EINVAL;
    return hippo_seq_serialized_size(wm->n, wm->bits, out_size);
}

int hippo_wm_serialize(const hippo_wm *wm, uint8_t *buf, uint64_t cap, uint64_t *out_written) {
    if (!wm || !buf) return HIPPO_EINVAL;
    uint32_t *sym = (uint32_t *)malloc((size_t)(wm->n ? wm->n : 1) * 4);
    if (!sym) return HIPPO_ENOMEM;
    int st = hippo_wm_decode_range(wm, 0, wm->n, sym);
    if (st == HIPPO_OK) st = hippo_seq_serialize(WM_MAGIC, sym, wm->n, wm->bits, buf, cap, out_written);
    free(sym);
    return st;
}

int hippo_wm_decode_blob(const uint8_t *blob, uint64_t len, uint32_t *out, uint64_t capacity, uint64_t *out_n,
                         uint32_t *out_bits) {
    if (!blob || !out_n || !out_bits || (capacity && !out)) return HIPPO_EINVAL;
    const uint8_t *payload;
    uint64_t n;
    uint32_t bits;
    int st = seq_open(WM_MAGIC, blob, len, &payload, &n, &bits);
    if (st) return st;
    *out_n = n;
    *out_bits = bits;
    if (capacity >= n && n) hippo_unpack_symbols(payload, n, bits, out);
    return HIPPO_OK;
}

int hippo_wm_deserialize(const uint8_t *blob, uint64_t len, hippo_wm **out) {
    if (!blob || !out) return HIPPO_EINVAL;
    uint32_t *sym, bits;
    uint64_t n;
    int st = hippo_seq_deserialize(WM_MAGIC, blob, len, &sym, &n, &bits);
    if (st) return st;
    st = hippo_wm_build_trusted(sym, n, bits, out);
    free(sym);
    return st;
}

HIPPO_CLONES void hippo_wm_locate_unchecked(const hippo_wm *wm, uint32_t symbol, uint64_t first, uint64_t m,
                                            uint64_t *out) {
    uint64_t s = 0, e = wm->n;
    descend(wm, symbol, &s, &e);
    for (uint64_t j = 0; j < m; j++) out[j] = s + first + j;
    /* Algorithm 2 of seed 000 §3.2.2, applied to a run of consecutive bottom positions at once. The positions stay
     * ascending level by level (a node keeps its elements' order), so each level's selects take ascending ranks:
     * hippo_bv_select_sorted reuses the line of one answer for the next (dense near the leaves). */
    for (uint32_t l = wm->bits; l-- > 0;) {
        const hippo_bv *bv = &wm->level[l];
        if ((symbol >> (wm->bits - 1 - l)) & 1u) {
            uint64_t z = wm->zeros[l];
            for (uint64_t j = 0; j < m; j++) out[j] = out[j] - z + 1;
            hippo_bv_select_sorted(bv, out, m, 0);
        } else {
            for (uint64_t j = 0; j < m; j++) out[j] = out[j] + 1;
            hippo_bv_select_sorted(bv, out, m, 1);
        }
    }
}
