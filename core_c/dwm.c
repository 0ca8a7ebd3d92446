/*
 * dwm.c -- append-only dynamic wavelet matrix (seed paper §3.2.1) as a log-structured set of static
 * wavelet-matrix segments plus a raw tail buffer. Design and complexity: see hippo_core.h.
 *
 * Invariants
 *   - segs[0..nsegs) hold consecutive stretches of the sequence, oldest first; segs[j].off is the
 *     position of its first symbol; tail holds the last tail_len symbols, starting at `base`.
 *   - A failed flush or merge leaves every invariant intact: segments are replaced only after the
 *     replacement is fully built.
 */
#include "hippo_internal.h"

int hippo_wm_build_trusted(const uint32_t *symbols, uint64_t n, uint32_t bits, hippo_wm **out);
void hippo_wm_rank_many_local(const hippo_wm *wm, const uint32_t *symbols, const int64_t *positions,
                              uint64_t m, int64_t offset, uint64_t *out, int accumulate);
int hippo_seq_serialized_size(uint64_t n, uint32_t bits, uint64_t *out);
int hippo_seq_serialize(const char magic[8], const uint32_t *symbols, uint64_t n, uint32_t bits, uint8_t *buf,
                        uint64_t cap, uint64_t *out_written);
int hippo_seq_deserialize(const char magic[8], const uint8_t *blob, uint64_t len, uint32_t **out_symbols,
                          uint64_t *out_n, uint32_t *out_bits);

typedef struct dwm_seg {
    hippo_wm *wm;
    uint64_t off;
} dwm_seg;

struct hippo_dwm {
    uint32_t bits;
    uint32_t nsegs, capsegs;
    dwm_seg *segs;
    uint64_t base;      /* symbols held by segments == position of tail[0] */
    uint32_t *tail;     /* HIPPO_DWM_TAIL symbols */
    uint32_t tail_len;
};

static int sym_ok(uint32_t bits, uint32_t s) { return bits >= 32 || (s >> bits) == 0; }

int hippo_dwm_new(uint32_t bits, hippo_dwm **out) {
    if (!out || bits < 1 || bits > 32) return HIPPO_EINVAL;
    hippo_dwm *d = (hippo_dwm *)calloc(1, sizeof(*d));
    if (!d) return HIPPO_ENOMEM;
    d->bits = bits;
    d->tail = (uint32_t *)malloc(HIPPO_DWM_TAIL * 4);
    d->capsegs = 8;
    d->segs = (dwm_seg *)calloc(d->capsegs, sizeof(dwm_seg));
    if (!d->tail || !d->segs) { hippo_dwm_free(d); return HIPPO_ENOMEM; }
    *out = d;
    return HIPPO_OK;
}

void hippo_dwm_free(hippo_dwm *d) {
    if (!d) return;
    for (uint32_t j = 0; j < d->nsegs; j++) hippo_wm_free(d->segs[j].wm);
    free(d->segs);
    free(d->tail);
    free(d);
}

uint64_t hippo_dwm_len(const hippo_dwm *d) { return d ? d->base + d->tail_len : 0; }
uint32_t hippo_dwm_bits(const hippo_dwm *d) { return d ? d->bits : 0; }
uint32_t hippo_dwm_segments(const hippo_dwm *d) { return d ? d->nsegs : 0; }

uint64_t hippo_dwm_nbytes(const hippo_dwm *d) {
    if (!d) return 0;
    uint64_t b = sizeof(*d) + (uint64_t)d->capsegs * sizeof(dwm_seg) + HIPPO_DWM_TAIL * 4;
    for (uint32_t j = 0; j < d->nsegs; j++) b += hippo_wm_nbytes(d->segs[j].wm);
    return b;
}

uint64_t hippo_dwm_stream_bytes(const hippo_dwm *d) {
    if (!d) return 0;
    uint64_t b = 0;
    for (uint32_t j = 0; j < d->nsegs; j++)
        for (uint32_t l = 0; l < d->bits; l++) b += hippo_bv_nbytes(&d->segs[j].wm->level[l]);
    return b + (uint64_t)d->tail_len * 4;
}

/* ---- growth ------------------------------------------------------------------------------- */

static int push_segment(hippo_dwm *d, hippo_wm *wm) {
    if (d->nsegs == d->capsegs) {
        uint32_t nc = d->capsegs * 2;
        dwm_seg *s = (dwm_seg *)realloc(d->segs, nc * sizeof(dwm_seg));
        if (!s) return HIPPO_ENOMEM;
        d->segs = s;
        d->capsegs = nc;
    }
    d->segs[d->nsegs].wm = wm;
    d->segs[d->nsegs].off = d->base;
    d->nsegs++;
    d->base += wm->n;
    return HIPPO_OK;
}

/* Merge the two newest segments while the newest is at least as large as the one before it.
 * A merge that fails for lack of memory is skipped: the structure stays valid, only less compact. */
static void settle(hippo_dwm *d) {
    while (d->nsegs >= 2) {
        dwm_seg *a = &d->segs[d->nsegs - 2], *b = &d->segs[d->nsegs - 1];
        /* binomial rule: merge equal-or-larger newcomers, so a segment at least doubles each time
         * its symbols are rewritten; a hard cap bounds the count for irregular extend sizes */
        if (b->wm->n < a->wm->n && d->nsegs <= HIPPO_DWM_MAX_SEGMENTS) break;
        uint64_t na = a->wm->n, nb = b->wm->n;
        uint32_t *buf = (uint32_t *)malloc((size_t)(na + nb) * 4);
        if (!buf) return;
        hippo_wm *merged = NULL;
        if (hippo_wm_decode_range(a->wm, 0, na, buf) != HIPPO_OK ||
            hippo_wm_decode_range(b->wm, 0, nb, buf + na) != HIPPO_OK ||
            hippo_wm_build_trusted(buf, na + nb, d->bits, &merged) != HIPPO_OK) {
            free(buf);
            return;
        }
        free(buf);
        hippo_wm_free(a->wm);
        hippo_wm_free(b->wm);
        a->wm = merged;
        d->nsegs--;
    }
}

static int flush_tail(hippo_dwm *d) {
    if (d->tail_len == 0) return HIPPO_OK;
    hippo_wm *wm;
    int st = hippo_wm_build_trusted(d->tail, d->tail_len, d->bits, &wm);
    if (st) return st;
    if ((st = push_segment(d, wm)) != HIPPO_OK) { hippo_wm_free(wm); return st; }
    d->tail_len = 0;
    settle(d);
    return HIPPO_OK;
}

int hippo_dwm_append(hippo_dwm *d, uint32_t symbol) {
    if (!d || !sym_ok(d->bits, symbol)) return HIPPO_EINVAL;
    if (d->base + d->tail_len >= HIPPO_MAX_N) return HIPPO_ERANGE;
    if (d->tail_len == HIPPO_DWM_TAIL) {
        int st = flush_tail(d);
        if (st) return st;
    }
    d->tail[d->tail_len++] = symbol;
    return HIPPO_OK;
}

int hippo_dwm_extend(hippo_dwm *d, const uint32_t *symbols, uint64_t m) {
    if (!d || (m && !symbols)) return HIPPO_EINVAL;
    if (m == 0) return HIPPO_OK;
    if (m > HIPPO_MAX_N - (d->base + d->tail_len)) return HIPPO_ERANGE;
    if (d->bits < 32)
        for (uint64_t i = 0; i < m; i++)
            if (symbols[i] >> d->bits) return HIPPO_EINVAL;
    if (d->tail_len + m <= HIPPO_DWM_TAIL) {
        memcpy(d->tail + d->tail_len, symbols, (size_t)m * 4);
        d->tail_len += (uint32_t)m;
        return HIPPO_OK;
    }
    /* tail + symbols become one new segment, built directly */
    uint64_t total = d->tail_len + m;
    uint32_t *buf = (uint32_t *)malloc((size_t)total * 4);
    if (!buf) return HIPPO_ENOMEM;
    memcpy(buf, d->tail, (size_t)d->tail_len * 4);
    memcpy(buf + d->tail_len, symbols, (size_t)m * 4);
    hippo_wm *wm;
    int st = hippo_wm_build_trusted(buf, total, d->bits, &wm);
    free(buf);
    if (st) return st;
    if ((st = push_segment(d, wm)) != HIPPO_OK) { hippo_wm_free(wm); return st; }
    d->tail_len = 0;
    settle(d);
    return HIPPO_OK;
}

/* ---- queries ------------------------------------------------------------------------------ */

/* Index of the segment holding position p < base. */
static uint32_t find_seg(const hippo_dwm *d, uint64_t p) {
    uint32_t lo = 0, hi = d->nsegs; /* answer in [lo, hi) */
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (d->segs[mid].off <= p) lo = mid; else hi = mid;
    }
    return lo;
}

static uint64_t tail_count(const hippo_dwm *d, uint32_t s, uint64_t a, uint64_t b) {
    uint64_t c = 0;
    for (uint64_t i = a; i < b; i++) c += d->tail[i] == s;
    return c;
}

int hippo_dwm_access(const hippo_dwm *d, uint64_t i, uint32_t *out) {
    if (!d || !out) return HIPPO_EINVAL;
    if (i >= d->base + d->tail_len) return HIPPO_ERANGE;
    if (i >= d->base) { *out = d->tail[i - d->base]; return HIPPO_OK; }
    const dwm_seg *s = &d->segs[find_seg(d, i)];
    *out = hippo_wm_access_unchecked(s->wm, i - s->off);
    return HIPPO_OK;
}

int hippo_dwm_access_many(const hippo_dwm *d, const int64_t *positions, uint64_t m, uint32_t *out) {
    if (!d || (m && (!positions || !out))) return HIPPO_EINVAL;
    uint64_t n = d->base + d->tail_len;
    for (uint64_t i = 0; i < m; i++)
        if (positions[i] < 0 || (uint64_t)positions[i] >= n) return HIPPO_ERANGE;
    if (d->nsegs == 1 && d->tail_len == 0) {
        hippo_wm_access_many_unchecked(d->segs[0].wm, positions, m, 0, out);
        return HIPPO_OK;
    }
    /* Chunks of positions are bucketed by segment so each segment's batch stays interleaved. */
    enum { CH = 512 };
    int64_t local[CH];
    uint32_t res[CH];
    uint32_t which[CH];
    for (uint64_t c0 = 0; c0 < m; c0 += CH) {
        uint32_t cn = (uint32_t)((m - c0) < CH ? (m - c0) : CH), i;
        for (i = 0; i < cn; i++) {
            uint64_t p = (uint64_t)positions[c0 + i];
            which[i] = p >= d->base ? UINT32_MAX : find_seg(d, p);
            if (which[i] == UINT32_MAX) out[c0 + i] = d->tail[p - d->base];
        }
        for (uint32_t sgi = 0; sgi < d->nsegs; sgi++) {
            uint32_t k = 0;
            for (i = 0; i < cn; i++)
                if (which[i] == sgi) local[k++] = positions[c0 + i] - (int64_t)d->segs[sgi].off;
            if (!k) continue;
            hippo_wm_access_many_unchecked(d->segs[sgi].wm, local, k, 0, res);
            k = 0;
            for (i = 0; i < cn; i++)
                if (which[i] == sgi) out[c0 + i] = res[k++];
        }
    }
    return HIPPO_OK;
}

int hippo_dwm_access_range(const hippo_dwm *d, uint64_t start, uint64_t end, uint32_t *out) {
    if (!d || (end > start && !out)) return HIPPO_EINVAL;
    uint64_t n = d->base + d->tail_len;
    if (start > end || end > n) return HIPPO_ERANGE;
    for (uint32_t j = 0; j < d->nsegs && start < end; j++) {
        const dwm_seg *s = &d->segs[j];
        uint64_t se = s->off + s->wm->n;
        if (se <= start) continue;
        uint64_t e = end < se ? end : se;
        int st = hippo_wm_decode_range(s->wm, start - s->off, e - s->off, out);
        if (st) return st;
        out += e - start;
        start = e;
    }
    if (start < end) memcpy(out, d->tail + (start - d->base), (size_t)(end - start) * 4);
    return HIPPO_OK;
}

int hippo_dwm_access_ranges(const hippo_dwm *d, const uint64_t *starts, const uint64_t *ends, uint64_t m,
                            uint32_t *out) {
    if (!d || (m && (!starts || !ends))) return HIPPO_EINVAL;
    uint64_t total;
    if (hippo_check_ranges(starts, ends, m, d->base + d->tail_len, &total)) return HIPPO_ERANGE;
    if (total && !out) return HIPPO_EINVAL;
    for (uint64_t j = 0; j < m; j++) {
        int st = hippo_dwm_access_range(d, starts[j], ends[j], out);
        if (st) return st;
        out += ends[j] - starts[j];
    }
    return HIPPO_OK;
}

static uint64_t count_unchecked(const hippo_dwm *d, uint32_t symbol, uint64_t start, uint64_t end) {
    uint64_t c = 0;
    for (uint32_t j = 0; j < d->nsegs; j++) {
        const dwm_seg *s = &d->segs[j];
        uint64_t se = s->off + s->wm->n;
        if (se <= start || s->off >= end) continue;
        uint64_t a = start > s->off ? start - s->off : 0;
        uint64_t b = (end < se ? end : se) - s->off;
        c += hippo_wm_count_unchecked(s->wm, symbol, a, b);
    }
    if (end > d->base) {
        uint64_t a = start > d->base ? start - d->base : 0;
        c += tail_count(d, symbol, a, end - d->base);
    }
    return c;
}

int hippo_dwm_rank(const hippo_dwm *d, uint32_t symbol, uint64_t i, uint64_t *out) {
    if (!d || !out || !sym_ok(d->bits, symbol)) return HIPPO_EINVAL;
    if (i > d->base + d->tail_len) return HIPPO_ERANGE;
    *out = count_unchecked(d, symbol, 0, i);
    return HIPPO_OK;
}

int hippo_dwm_count(const hippo_dwm *d, uint32_t symbol, uint64_t start, uint64_t end, uint64_t *out) {
    if (!d || !out || !sym_ok(d->bits, symbol)) return HIPPO_EINVAL;
    if (start > end || end > d->base + d->tail_len) return HIPPO_ERANGE;
    *out = count_unchecked(d, symbol, start, end);
    return HIPPO_OK;
}

int hippo_dwm_count_many(const hippo_dwm *d, const uint32_t *symbols, uint64_t m, uint64_t start, uint64_t end,
                         uint64_t *out) {
    if (!d || (m && (!symbols || !out))) return HIPPO_EINVAL;
    for (uint64_t i = 0; i < m; i++)
        if (!sym_ok(d->bits, symbols[i])) return HIPPO_EINVAL;
    if (start > end || end > d->base + d->tail_len) return HIPPO_ERANGE;
    for (uint64_t i = 0; i < m; i++) out[i] = count_unchecked(d, symbols[i], start, end);
    return HIPPO_OK;
}

int hippo_dwm_rank_many(const hippo_dwm *d, const uint32_t *symbols, const int64_t *positions, uint64_t m,
                        uint64_t *out) {
    if (!d || (m && (!symbols || !positions || !out))) return HIPPO_EINVAL;
    uint64_t n = d->base + d->tail_len;
    for (uint64_t i = 0; i < m; i++) {
        if (!sym_ok(d->bits, symbols[i])) return HIPPO_EINVAL;
        if (positions[i] < 0 || (uint64_t)positions[i] > n) return HIPPO_ERANGE;
    }
    if (m) memset(out, 0, (size_t)m * 8);
    for (uint32_t j = 0; j < d->nsegs; j++)
        hippo_wm_rank_many_local(d->segs[j].wm, symbols, positions, m, (int64_t)d->segs[j].off, out, 1);
    if (d->tail_len)
        for (uint64_t i = 0; i < m; i++)
            if ((uint64_t)positions[i] > d->base)
                out[i] += tail_count(d, symbols[i], 0, (uint64_t)positions[i] - d->base);
    return HIPPO_OK;
}

int hippo_dwm_select(const hippo_dwm *d, uint32_t symbol, uint64_t k, uint64_t *out) {
    if (!d || !out || !sym_ok(d->bits, symbol)) return HIPPO_EINVAL;
    if (k < 1) return HIPPO_ERANGE;
    for (uint32_t j = 0; j < d->nsegs; j++) {
        const dwm_seg *s = &d->segs[j];
        uint64_t c = hippo_wm_count_unchecked(s->wm, symbol, 0, s->wm->n);
        if (k <= c) {
            *out = s->off + hippo_wm_select_unchecked(s->wm, symbol, k);
            return HIPPO_OK;
        }
        k -= c;
    }
    for (uint32_t i = 0; i < d->tail_len; i++)
        if (d->tail[i] == symbol && --k == 0) { *out = d->base + i; return HIPPO_OK; }
    return HIPPO_ERANGE;
}

int hippo_dwm_hamming_ball(const hippo_dwm *d, uint32_t symbol, uint32_t radius, uint64_t start, uint64_t end,
                           int method, uint32_t *out_symbols, uint64_t *out_counts, uint64_t capacity,
                           uint64_t *out_needed) {
    if (!d || !out_needed || !sym_ok(d->bits, symbol)) return HIPPO_EINVAL;
    if (method < HIPPO_HB_AUTO || method > HIPPO_HB_SCAN_DECODE) return HIPPO_EINVAL;
    if (capacity && (!out_symbols || !out_counts)) return HIPPO_EINVAL;
    if (start > end || end > d->base + d->tail_len) return HIPPO_ERANGE;
    hippo_hb_acc *acc;
    int st = hippo_hb_acc_init(&acc);
    if (st) return st;
    for (uint32_t j = 0; j < d->nsegs && st == HIPPO_OK; j++) {
        const dwm_seg *s = &d->segs[j];
        uint64_t se = s->off + s->wm->n;
        if (se <= start || s->off >= end) continue;
        uint64_t a = start > s->off ? start - s->off : 0;
        uint64_t b = (end < se ? end : se) - s->off;
        st = hippo_wm_hamming_ball_acc(s->wm, symbol, radius, a, b, method, acc);
    }
    if (st == HIPPO_OK && end > d->base) {
        uint64_t a = start > d->base ? start - d->base : 0;
        for (uint64_t i = a; i < end - d->base && st == HIPPO_OK; i++)
            if (hippo_popcount64((uint64_t)(d->tail[i] ^ symbol)) <= radius) st = hippo_hb_acc_add(acc, d->tail[i], 1);
    }
    if (st == HIPPO_OK) st = hippo_hb_acc_emit(acc, out_symbols, out_counts, capacity, out_needed);
    hippo_hb_acc_free(acc);
    return st;
}

/* ---- serialization ------------------------------------------------------------------------ */
static const char DWM_MAGIC[8] = {'H', 'I', 'P', 'P', 'O', 'D', 'W', 'M'};

int hippo_dwm_serialized_size(const hippo_dwm *d, uint64_t *out_size) {
    if (!d || !out_size) return HIPPO_EINVAL;
    return hippo_seq_serialized_size(d->base + d->tail_len, d->bits, out_size);
}

int hippo_dwm_serialize(const hippo_dwm *d, uint8_t *buf, uint64_t cap, uint64_t *out_written) {
    if (!d || !buf) return HIPPO_EINVAL;
    uint64_t n = d->base + d->tail_len;
    uint32_t *sym = (uint32_t *)malloc((size_t)(n ? n : 1) * 4);
    if (!sym) return HIPPO_ENOMEM;
    int st = hippo_dwm_access_range(d, 0, n, sym);
    if (st == HIPPO_OK) st = hippo_seq_serialize(DWM_MAGIC, sym, n, d->bits, buf, cap, out_written);
    free(sym);
    return st;
}

int hippo_dwm_deserialize(const uint8_t *blob, uint64_t len, hippo_dwm **out) {
    if (!blob || !out) return HIPPO_EINVAL;
    uint32_t *sym, bits;
    uint64_t n;
    int st = hippo_seq_deserialize(DWM_MAGIC, blob, len, &sym, &n, &bits);
    if (st) return st;
    hippo_dwm *d;
    if ((st = hippo_dwm_new(bits, &d)) != HIPPO_OK) { free(sym); return st; }
    if (n <= HIPPO_DWM_TAIL) {
        memcpy(d->tail, sym, (size_t)n * 4);
        d->tail_len = (uint32_t)n;
    } else {
        hippo_wm *wm;
        if ((st = hippo_wm_build_trusted(sym, n, bits, &wm)) != HIPPO_OK || (st = push_segment(d, wm)) != HIPPO_OK) {
            free(sym);
            hippo_dwm_free(d);
            return st;
        }
    }
    free(sym);
    *out = d;
    return HIPPO_OK;
}

int hippo_dwm_locate(const hippo_dwm *d, uint32_t symbol, uint64_t start, uint64_t end, uint64_t *out,
                     uint64_t capacity, uint64_t *out_needed) {
    if (!d || !out_needed || !sym_ok(d->bits, symbol)) return HIPPO_EINVAL;
    if (capacity && !out) return HIPPO_EINVAL;
    if (start > end || end > d->base + d->tail_len) return HIPPO_ERANGE;
    uint64_t found = 0;
    for (uint32_t j = 0; j < d->nsegs; j++) {
        const dwm_seg *s = &d->segs[j];
        uint64_t se = s->off + s->wm->n;
        if (se <= start || s->off >= end) continue;
        uint64_t lo = start > s->off ? start - s->off : 0;
        uint64_t hi = (end < se ? end : se) - s->off;
        uint64_t first = hippo_wm_count_unchecked(s->wm, symbol, 0, lo);
        uint64_t last = first + hippo_wm_count_unchecked(s->wm, symbol, lo, hi);
        if (last > first && found < capacity) {
            uint64_t take = last - first;
            if (take > capacity - found) take = capacity - found;
            hippo_wm_locate_unchecked(s->wm, symbol, first, take, out + found);
            for (uint64_t t = 0; t < take; t++) out[found + t] += s->off;
        }
        found += last - first;
    }
    if (end > d->base) {
        uint64_t lo = start > d->base ? start - d->base : 0;
        for (uint64_t i = lo; i < end - d->base; i++)
            if (d->tail[i] == symbol) {
                if (found < capacity) out[found] = d->base + i;
                found++;
            }
    }
    *out_needed = found;
    return HIPPO_OK;
}
