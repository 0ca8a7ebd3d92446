/*
 * test_core.c -- oracle tests of the C core against naive reference implementations.
 * Built with AddressSanitizer and UndefinedBehaviorSanitizer by `make test-c`; also run with
 * HIPPO_FORCE_PORTABLE=1. Exits non-zero on any failure and prints a summary line.
 */
#include "hippo_core.h"
#include "hippo_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long g_checks = 0, g_failures = 0;

#define CHECK(cond)                                                                       \
    do {                                                                                  \
        g_checks++;                                                                       \
        if (!(cond)) {                                                                    \
            g_failures++;                                                                 \
            if (g_failures < 30) fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                                 \
    } while (0)

#define CHECK_EQ_U64(a, b)                                                                          \
    do {                                                                                            \
        uint64_t _a = (uint64_t)(a), _b = (uint64_t)(b);                                            \
        g_checks++;                                                                                 \
        if (_a != _b) {                                                                             \
            g_failures++;                                                                           \
            if (g_failures < 30)                                                                    \
                fprintf(stderr, "FAIL %s:%d: %s == %s (%llu vs %llu)\n", __FILE__, __LINE__, #a, #b, \
                        (unsigned long long)_a, (unsigned long long)_b);                            \
        }                                                                                           \
    } while (0)

static uint64_t rng_state = 0x12345678abcdefULL;
static uint64_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static uint64_t rnd_below(uint64_t n) { return n ? rnd() % n : 0; }

/* symbols with a skewed alphabet so that counts, ties and repeated symbols are common */
static void random_symbols(uint32_t *s, uint64_t n, uint32_t bits) {
    uint64_t mask = bits == 32 ? 0xFFFFFFFFu : ((1ull << bits) - 1);
    uint32_t alpha = (uint32_t)(1 + rnd_below(40));
    uint32_t pool[64];
    for (uint32_t j = 0; j < alpha; j++) pool[j] = (uint32_t)(rnd() & mask);
    for (uint64_t i = 0; i < n; i++) s[i] = (rnd() & 3) ? pool[rnd_below(alpha)] : (uint32_t)(rnd() & mask);
}

static unsigned popc(uint64_t x) {
    unsigned c = 0;
    while (x) { x &= x - 1; c++; }
    return c;
}

/* ---- bit vector ----------------------------------------------------------------------------- */
static void test_bitvector(void) {
    const uint64_t sizes[] = {0, 1, 63, 64, 65, 447, 448, 449, 511, 512, 513, 4095, 4097, 9000, 70000};
    const unsigned dens[] = {0, 1, 50, 99, 100};
    for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
        for (size_t di = 0; di < 5; di++) {
            uint64_t n = sizes[si];
            hippo_bv bv;
            CHECK(hippo_bv_init(&bv, n) == HIPPO_OK);
            uint8_t *ref = (uint8_t *)malloc(n + 1);
            for (uint64_t i = 0; i < n; i++) {
                ref[i] = (uint8_t)(rnd_below(100) < dens[di]);
                if (ref[i]) hippo_bv_set(&bv, i);
            }
            CHECK(hippo_bv_finish(&bv) == HIPPO_OK);
            uint64_t ones = 0, zeros = 0;
            for (uint64_t i = 0; i <= n; i++) {
                if (hippo_bv_rank1(&bv, i) != ones) { CHECK_EQ_U64(hippo_bv_rank1(&bv, i), ones); break; }
                if (i == n) break;
                if (hippo_bv_get(&bv, i) != ref[i]) { CHECK(0); break; }
                if (ref[i]) {
                    ones++;
                    if (hippo_bv_select1(&bv, ones) != i) { CHECK_EQ_U64(hippo_bv_select1(&bv, ones), i); break; }
                } else {
                    zeros++;
                    if (hippo_bv_select0(&bv, zeros) != i) { CHECK_EQ_U64(hippo_bv_select0(&bv, zeros), i); break; }
                }
            }
            CHECK_EQ_U64(bv.ones, ones);
            /* select_sorted: ascending rank subsets (every rank, runs, sparse picks) against the reference positions */
            for (unsigned zeros_kind = 0; zeros_kind < 2; zeros_kind++) {
                uint64_t total = zeros_kind ? n - ones : ones;
                uint64_t *where = (uint64_t *)malloc((size_t)(total + 1) * 8), *ks = (uint64_t *)malloc((size_t)(total + 1) * 8);
                uint64_t t = 0;
                for (uint64_t i = 0; i < n; i++)
                    if (ref[i] == !zeros_kind) where[t++] = i;
                for (unsigned keep = 1; keep <= 4; keep++) { /* take each rank with probability 1, 1/2, 1/3, 1/4 */
                    uint64_t m = 0;
                    for (uint64_t k = 1; k <= total; k++)
                        if (keep == 1 || rnd_below(keep * 8) < 8 || (keep == 4 && k % 97 < 30)) ks[m++] = k;
                    uint64_t *want = (uint64_t *)malloc((size_t)(m + 1) * 8);
                    for (uint64_t j = 0; j < m; j++) want[j] = where[ks[j] - 1];
                    hippo_bv_select_sorted(&bv, ks, m, zeros_kind);
                    for (uint64_t j = 0; j < m; j++)
                        if (ks[j] != want[j]) { CHECK_EQ_U64(ks[j], want[j]); break; }
                    free(want);
                }
                free(where);
                free(ks);
            }
            hippo_bv_free(&bv);
            free(ref);
        }
}

/* ---- reference queries over a plain array ------------------------------------------------------ */
static uint64_t ref_count(const uint32_t *s, uint64_t a, uint64_t b, uint32_t c) {
    uint64_t r = 0;
    for (uint64_t i = a; i < b; i++) r += s[i] == c;
    return r;
}
static uint64_t ref_select(const uint32_t *s, uint64_t n, uint32_t c, uint64_t k) {
    for (uint64_t i = 0; i < n; i++)
        if (s[i] == c && --k == 0) return i;
    return UINT64_MAX;
}

typedef int (*access_fn)(const void *, uint64_t, uint32_t *);

/* Generic query checks through function pointers so the static and dynamic matrix share them. */
typedef struct seq_api {
    const void *obj;
    int (*access)(const void *, uint64_t, uint32_t *);
    int (*access_many)(const void *, const int64_t *, uint64_t, uint32_t *);
    int (*access_range)(const void *, uint64_t, uint64_t, uint32_t *);
    int (*access_ranges)(const void *, const uint64_t *, const uint64_t *, uint64_t, uint32_t *);
    int (*rank)(const void *, uint32_t, uint64_t, uint64_t *);
    int (*rank_many)(const void *, const uint32_t *, const int64_t *, uint64_t, uint64_t *);
    int (*select)(const void *, uint32_t, uint64_t, uint64_t *);
    int (*count)(const void *, uint32_t, uint64_t, uint64_t, uint64_t *);
    int (*count_many)(const void *, const uint32_t *, uint64_t, uint64_t, uint64_t, uint64_t *);
    int (*hball)(const void *, uint32_t, uint32_t, uint64_t, uint64_t, int, uint32_t *, uint64_t *, uint64_t,
                 uint64_t *);
} seq_api;

#define WRAP(prefix, T)                                                                                       \
    static int prefix##_access_w(const void *o, uint64_t i, uint32_t *out) { return prefix##_access((const T *)o, i, out); } \
    static int prefix##_access_many_w(const void *o, const int64_t *p, uint64_t m, uint32_t *out) {             \
        return prefix##_access_many((const T *)o, p, m, out);                                                   \
    }                                                                                                         \
    static int prefix##_access_range_w(const void *o, uint64_t a, uint64_t b, uint32_t *out) {                  \
        return prefix##_access_range((const T *)o, a, b, out);                                                  \
    }                                                                                                         \
    static int prefix##_access_ranges_w(const void *o, const uint64_t *a, const uint64_t *b, uint64_t m,        \
                                        uint32_t *out) {                                                      \
        return prefix##_access_ranges((const T *)o, a, b, m, out);                                              \
    }                                                                                                         \
    static int prefix##_rank_w(const void *o, uint32_t c, uint64_t i, uint64_t *out) {                          \
        return prefix##_rank((const T *)o, c, i, out);                                                          \
    }                                                                                                         \
    static int prefix##_rank_many_w(const void *o, const uint32_t *c, const int64_t *p, uint64_t m, uint64_t *out) { \
        return prefix##_rank_many((const T *)o, c, p, m, out);                                                  \
    }                                                                                                         \
    static int prefix##_select_w(const void *o, uint32_t c, uint64_t k, uint64_t *out) {                        \
        return prefix##_select((const T *)o, c, k, out);                                                        \
    }                                                                                                         \
    static int prefix##_count_w(const void *o, uint32_t c, uint64_t a, uint64_t b, uint64_t *out) {             \
        return prefix##_count((const T *)o, c, a, b, out);                                                      \
    }                                                                                                         \
    static int prefix##_count_many_w(const void *o, const uint32_t *c, uint64_t m, uint64_t a, uint64_t b,      \
                                     uint64_t *out) {                                                         \
        return prefix##_count_many((const T *)o, c, m, a, b, out);                                              \
    }                                                                                                         \
    static int prefix##_hball_w(const void *o, uint32_t c, uint32_t r, uint64_t a, uint64_t b, int meth,        \
                                uint32_t *os, uint64_t *oc, uint64_t cap, uint64_t *need) {                   \
        return prefix##_hamming_ball((const T *)o, c, r, a, b, meth, os, oc, cap, need);                        \
    }                                                                                                         \
    static seq_api prefix##_api(const T *o) {                                                                   \
        seq_api a = {o, prefix##_access_w, prefix##_access_many_w, prefix##_access_range_w,                     \
                     prefix##_access_ranges_w, prefix##_rank_w,                                                 \
                     prefix##_rank_many_w, prefix##_select_w, prefix##_count_w, prefix##_count_many_w,          \
                     prefix##_hball_w};                                                                       \
        return a;                                                                                             \
    }

WRAP(hippo_wm, hippo_wm)
WRAP(hippo_dwm, hippo_dwm)

static void check_hamming_ball(const seq_api *api, const uint32_t *s, uint64_t n, uint32_t bits, uint64_t a,
                               uint64_t b, uint32_t q, uint32_t r) {
    /* reference: distinct symbols of s[a, b) within radius, counts */
    uint32_t *rs = (uint32_t *)malloc((size_t)(b - a + 1) * 4);
    uint64_t *rc = (uint64_t *)malloc((size_t)(b - a + 1) * 8);
    uint64_t nr = 0;
    for (uint64_t i = a; i < b; i++) {
        if (popc((uint64_t)(s[i] ^ q)) > r) continue;
        uint64_t j;
        for (j = 0; j < nr; j++) if (rs[j] == s[i]) break;
        if (j == nr) { rs[nr] = s[i]; rc[nr] = 0; nr++; }
        rc[j]++;
    }
    for (int method = HIPPO_HB_AUTO; method <= HIPPO_HB_SCAN_DECODE; method++) {
        uint32_t os[256];
        uint64_t oc[256], need = 0;
        int st = api->hball(api->obj, q, r, a, b, method, os, oc, 256, &need);
        CHECK(st == HIPPO_OK);
        CHECK_EQ_U64(need, nr);
        if (need != nr || need > 256) continue;
        for (uint64_t i = 0; i < need; i++) {
            if (i) CHECK(os[i - 1] < os[i]);
            uint64_t j;
            for (j = 0; j < nr; j++) if (rs[j] == os[i]) break;
            CHECK(j < nr && rc[j] == oc[i]);
        }
        /* capacity smaller than needed: partial output, same needed */
        if (need > 1) {
            uint64_t need2 = 0;
            CHECK(api->hball(api->obj, q, r, a, b, method, os, oc, 1, &need2) == HIPPO_OK);
            CHECK_EQ_U64(need2, need);
        }
    }
    (void)n; (void)bits;
    free(rs);
    free(rc);
}

static void check_sequence(const seq_api *api, const uint32_t *s, uint64_t n, uint32_t bits, int thorough) {
    uint32_t v;
    uint64_t r;
    /* access: every position, and past the end */
    for (uint64_t i = 0; i < n; i++) {
        CHECK(api->access(api->obj, i, &v) == HIPPO_OK);
        if (v != s[i]) { CHECK_EQ_U64(v, s[i]); break; }
    }
    CHECK(api->access(api->obj, n, &v) == HIPPO_ERANGE);
    /* access_many in random order */
    uint64_t m = n ? 300 : 0;
    int64_t *pos = (int64_t *)malloc((size_t)(m + 1) * 8);
    uint32_t *outv = (uint32_t *)malloc((size_t)(n + m + 1) * 4);
    uint32_t *syms = (uint32_t *)malloc((size_t)(m + 1) * 4);
    uint64_t *outr = (uint64_t *)malloc((size_t)(m + 1) * 8);
    for (uint64_t i = 0; i < m; i++) pos[i] = (int64_t)rnd_below(n);
    CHECK(api->access_many(api->obj, pos, m, outv) == HIPPO_OK);
    for (uint64_t i = 0; i < m; i++) if (outv[i] != s[pos[i]]) { CHECK(0); break; }
    if (n) {
        pos[0] = -1;
        CHECK(api->access_many(api->obj, pos, 1, outv) == HIPPO_ERANGE);
        pos[0] = (int64_t)n;
        CHECK(api->access_many(api->obj, pos, 1, outv) == HIPPO_ERANGE);
    }
    /* access_range: whole and random ranges */
    CHECK(api->access_range(api->obj, 0, n, outv) == HIPPO_OK);
    CHECK(n == 0 || memcmp(outv, s, (size_t)n * 4) == 0);
    for (int t = 0; t < 20 && n; t++) {
        uint64_t a = rnd_below(n + 1), b = rnd_below(n + 1);
        if (a > b) { uint64_t x = a; a = b; b = x; }
        CHECK(api->access_range(api->obj, a, b, outv) == HIPPO_OK);
        CHECK(b == a || memcmp(outv, s + a, (size_t)(b - a) * 4) == 0);
    }
    CHECK(api->access_range(api->obj, 1, 0, outv) == HIPPO_ERANGE);
    CHECK(api->access_range(api->obj, 0, n + 1, outv) == HIPPO_ERANGE);
    /* access_ranges: random ranges (empty ones among them) laid end to end */
    if (n) {
        uint64_t ra[8], rb[8], off = 0;
        for (int t = 0; t < 8; t++) {
            ra[t] = rnd_below(n + 1);
            rb[t] = ra[t] + rnd_below((n - ra[t]) / 8 + 1);
        }
        CHECK(api->access_ranges(api->obj, ra, rb, 8, outv) == HIPPO_OK);
        for (int t = 0; t < 8; t++) {
            CHECK(rb[t] == ra[t] || memcmp(outv + off, s + ra[t], (size_t)(rb[t] - ra[t]) * 4) == 0);
            off += rb[t] - ra[t];
        }
        rb[3] = n + 1;
        CHECK(api->access_ranges(api->obj, ra, rb, 8, outv) == HIPPO_ERANGE);
        ra[3] = 1;
        rb[3] = 0; /* start past end */
        CHECK(api->access_ranges(api->obj, ra, rb, 8, outv) == HIPPO_ERANGE);
    }
    CHECK(api->access_ranges(api->obj, NULL, NULL, 0, NULL) == HIPPO_OK);
    /* rank / count / select for present and absent symbols */
    uint64_t mask = bits == 32 ? 0xFFFFFFFFull : ((1ull << bits) - 1);
    int nsym = thorough ? 12 : 4;
    for (int t = 0; t < nsym; t++) {
        uint32_t c = (n && (t & 1)) ? s[rnd_below(n)] : (uint32_t)(rnd() & mask);
        uint64_t tot = ref_count(s, 0, n, c);
        for (int u = 0; u < 10; u++) {
            uint64_t i = rnd_below(n + 1);
            CHECK(api->rank(api->obj, c, i, &r) == HIPPO_OK);
            CHECK_EQ_U64(r, ref_count(s, 0, i, c));
            uint64_t a = rnd_below(n + 1), b = rnd_below(n + 1);
            if (a > b) { uint64_t x = a; a = b; b = x; }
            CHECK(api->count(api->obj, c, a, b, &r) == HIPPO_OK);
            CHECK_EQ_U64(r, ref_count(s, a, b, c));
        }
        CHECK(api->rank(api->obj, c, n, &r) == HIPPO_OK);
        CHECK_EQ_U64(r, tot);
        uint64_t step = tot > 50 ? tot / 50 : 1;
        for (uint64_t k = 1; k <= tot; k += step) {
            CHECK(api->select(api->obj, c, k, &r) == HIPPO_OK);
            CHECK_EQ_U64(r, ref_select(s, n, c, k));
        }
        if (tot) {
            CHECK(api->select(api->obj, c, tot, &r) == HIPPO_OK);
            CHECK_EQ_U64(r, ref_select(s, n, c, tot));
        }
        CHECK(api->select(api->obj, c, tot + 1, &r) == HIPPO_ERANGE);
        CHECK(api->select(api->obj, c, 0, &r) == HIPPO_ERANGE);
    }
    /* rank_many / count_many */
    for (uint64_t i = 0; i < m; i++) {
        syms[i] = (i & 1) && n ? s[rnd_below(n)] : (uint32_t)(rnd() & mask);
        pos[i] = (int64_t)rnd_below(n + 1);
    }
    CHECK(api->rank_many(api->obj, syms, pos, m, outr) == HIPPO_OK);
    for (uint64_t i = 0; i < m; i++)
        if (outr[i] != ref_count(s, 0, (uint64_t)pos[i], syms[i])) { CHECK_EQ_U64(outr[i], ref_count(s, 0, (uint64_t)pos[i], syms[i])); break; }
    if (n) {
        uint64_t a = rnd_below(n), b = a + rnd_below(n - a + 1);
        uint64_t mm = m < 40 ? m : 40;
        CHECK(api->count_many(api->obj, syms, mm, a, b, outr) == HIPPO_OK);
        for (uint64_t i = 0; i < mm; i++) CHECK_EQ_U64(outr[i], ref_count(s, a, b, syms[i]));
    }
    /* argument checks */
    if (bits < 32) {
        CHECK(api->rank(api->obj, (uint32_t)(mask + 1), 0, &r) == HIPPO_EINVAL);
        CHECK(api->select(api->obj, (uint32_t)(mask + 1), 1, &r) == HIPPO_EINVAL);
        CHECK(api->count(api->obj, (uint32_t)(mask + 1), 0, 0, &r) == HIPPO_EINVAL);
    }
    CHECK(api->rank(api->obj, 0, n + 1, &r) == HIPPO_ERANGE);
    CHECK(api->count(api->obj, 0, 0, n + 1, &r) == HIPPO_ERANGE);
    CHECK(api->rank(api->obj, 0, 0, NULL) == HIPPO_EINVAL);
    /* Hamming ball: several radii and ranges, every method */
    int nhb = thorough ? 6 : 2;
    for (int t = 0; t < nhb; t++) {
        uint32_t q = (n && (t & 1)) ? s[rnd_below(n)] : (uint32_t)(rnd() & mask);
        uint32_t rad = (uint32_t)rnd_below(bits < 6 ? bits + 2 : 5);
        uint64_t a = 0, b = n;
        if (t >= 2 && n) { a = rnd_below(n); b = a + rnd_below(n - a + 1); }
        check_hamming_ball(api, s, n, bits, a, b, q, rad);
    }
    free(pos); free(outv); free(syms); free(outr);
}

/* ---- static wavelet matrix ------------------------------------------------------------------ */
static void test_wm(void) {
    const uint64_t sizes[] = {0, 1, 7, 64, 65, 448, 449, 513, 1000, 4500, 20000};
    const uint32_t widths[] = {1, 2, 7, 17, 32};
    for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
        for (size_t wi = 0; wi < 5; wi++) {
            uint64_t n = sizes[si];
            uint32_t bits = widths[wi];
            uint32_t *s = (uint32_t *)malloc((size_t)(n + 1) * 4);
            random_symbols(s, n, bits);
            hippo_wm *wm = NULL;
            CHECK(hippo_wm_build(s, n, bits, &wm) == HIPPO_OK);
            if (!wm) { free(s); continue; }
            CHECK_EQ_U64(hippo_wm_len(wm), n);
            CHECK_EQ_U64(hippo_wm_bits(wm), bits);
            seq_api api = hippo_wm_api(wm);
            check_sequence(&api, s, n, bits, n <= 5000);
            /* serialization round trip */
            uint64_t size, written;
            CHECK(hippo_wm_serialized_size(wm, &size) == HIPPO_OK);
            uint8_t *blob = (uint8_t *)malloc((size_t)size);
            CHECK(hippo_wm_serialize(wm, blob, size, &written) == HIPPO_OK && written == size);
            CHECK(hippo_wm_serialize(wm, blob, size - 1, &written) == HIPPO_ERANGE);
            hippo_wm *back = NULL;
            CHECK(hippo_wm_deserialize(blob, size, &back) == HIPPO_OK);
            if (back) {
                seq_api api2 = hippo_wm_api(back);
                check_sequence(&api2, s, n, bits, 0);
                hippo_wm_free(back);
            }
            /* the symbols straight from the blob: n first, then exactly the built sequence */
            {
                uint64_t got_n = 7;
                uint32_t got_bits = 0;
                CHECK(hippo_wm_decode_blob(blob, size, NULL, 0, &got_n, &got_bits) == HIPPO_OK);
                CHECK_EQ_U64(got_n, n);
                CHECK_EQ_U64(got_bits, bits);
                uint32_t *dec = (uint32_t *)malloc((size_t)(n + 1) * 4);
                CHECK(hippo_wm_decode_blob(blob, size, dec, n, &got_n, &got_bits) == HIPPO_OK);
                CHECK(n == 0 || memcmp(dec, s, (size_t)n * 4) == 0);
                CHECK(hippo_wm_decode_blob(blob, size - 1, dec, n, &got_n, &got_bits) == HIPPO_ECORRUPT);
                if (size > 40) {
                    blob[size / 2] ^= 0x10; /* any flipped bit fails the checksum */
                    CHECK(hippo_wm_decode_blob(blob, size, dec, n, &got_n, &got_bits) == HIPPO_ECORRUPT);
                    blob[size / 2] ^= 0x10;
                }
                CHECK(hippo_wm_decode_blob(NULL, size, dec, n, &got_n, &got_bits) == HIPPO_EINVAL);
                CHECK(hippo_wm_decode_blob(blob, size, NULL, 1, &got_n, &got_bits) == HIPPO_EINVAL);
                free(dec);
            }
            free(blob);
            hippo_wm_free(wm);
            free(s);
        }
    /* bad arguments */
    hippo_wm *wm = NULL;
    uint32_t s[3] = {1, 2, 300};
    CHECK(hippo_wm_build(s, 3, 0, &wm) == HIPPO_EINVAL);
    CHECK(hippo_wm_build(s, 3, 33, &wm) == HIPPO_EINVAL);
    CHECK(hippo_wm_build(s, 3, 8, &wm) == HIPPO_EINVAL); /* 300 does not fit 8 bits */
    CHECK(hippo_wm_build(NULL, 3, 9, &wm) == HIPPO_EINVAL);
    CHECK(hippo_wm_build(s, 3, 9, NULL) == HIPPO_EINVAL);
    CHECK(hippo_wm_access(NULL, 0, s) == HIPPO_EINVAL);
}

/* ---- dynamic wavelet matrix --------------------------------------------------------------------- */
static void test_dwm(void) {
    const uint32_t widths[] = {1, 7, 17, 32};
    for (size_t wi = 0; wi < 4; wi++) {
        uint32_t bits = widths[wi];
        hippo_dwm *d = NULL;
        CHECK(hippo_dwm_new(bits, &d) == HIPPO_OK);
        uint64_t cap = 60000, n = 0;
        uint32_t *ref = (uint32_t *)malloc((size_t)cap * 4);
        uint32_t *batch = (uint32_t *)malloc(20000 * 4);
        seq_api api = hippo_dwm_api(d);
        check_sequence(&api, ref, 0, bits, 1); /* empty */
        int steps = 0;
        while (n < 40000) {
            uint64_t kind = rnd_below(10), m;
            if (kind < 5) { /* single appends */
                m = 1 + rnd_below(700);
                random_symbols(batch, m, bits);
                for (uint64_t i = 0; i < m; i++) CHECK(hippo_dwm_append(d, batch[i]) == HIPPO_OK);
            } else { /* bulk, small or large */
                m = kind < 8 ? rnd_below(300) : 1000 + rnd_below(9000);
                random_symbols(batch, m, bits);
                CHECK(hippo_dwm_extend(d, batch, m) == HIPPO_OK);
            }
            memcpy(ref + n, batch, (size_t)m * 4);
            n += m;
            CHECK_EQ_U64(hippo_dwm_len(d), n);
            if (steps++ % 4 == 0) check_sequence(&api, ref, n, bits, 0);
        }
        check_sequence(&api, ref, n, bits, 1);
        CHECK(hippo_dwm_segments(d) >= 1);
        /* locate: every occurrence in a range, across segments and the tail; short buffers */
        for (int t = 0; t < 8; t++) {
            uint32_t c = ref[rnd_below(n)];
            uint64_t a = t ? rnd_below(n) : 0, b = t ? a + rnd_below(n - a + 1) : n, need = 0, k = 0;
            uint64_t exp = ref_count(ref, a, b, c);
            uint64_t *pos = (uint64_t *)malloc((size_t)(exp + 1) * 8);
            CHECK(hippo_dwm_locate(d, c, a, b, pos, exp, &need) == HIPPO_OK);
            CHECK_EQ_U64(need, exp);
            for (uint64_t i = a; i < b && k < exp; i++)
                if (ref[i] == c && pos[k++] != i) { CHECK(0); break; }
            if (exp > 1) {
                CHECK(hippo_dwm_locate(d, c, a, b, pos, 1, &need) == HIPPO_OK && need == exp);
            }
            free(pos);
        }
        {
            uint64_t need;
            CHECK(hippo_dwm_locate(d, 0, 0, n + 1, NULL, 0, &need) == HIPPO_ERANGE);
            CHECK(hippo_dwm_locate(d, 0, 0, n, NULL, 5, &need) == HIPPO_EINVAL);
        }
        /* invalid appends leave the structure untouched */
        if (bits < 32) {
            CHECK(hippo_dwm_append(d, 1u << bits) == HIPPO_EINVAL);
            batch[0] = 0; batch[1] = 1u << bits;
            CHECK(hippo_dwm_extend(d, batch, 2) == HIPPO_EINVAL);
            CHECK_EQ_U64(hippo_dwm_len(d), n);
        }
        CHECK(hippo_dwm_extend(d, NULL, 5) == HIPPO_EINVAL);
        /* serialization round trip (one segment after loading) */
        uint64_t size, written;
        CHECK(hippo_dwm_serialized_size(d, &size) == HIPPO_OK);
        uint8_t *blob = (uint8_t *)malloc((size_t)size);
        CHECK(hippo_dwm_serialize(d, blob, size, &written) == HIPPO_OK && written == size);
        hippo_dwm *back = NULL;
        CHECK(hippo_dwm_deserialize(blob, size, &back) == HIPPO_OK);
        if (back) {
            seq_api api2 = hippo_dwm_api(back);
            check_sequence(&api2, ref, n, bits, 0);
            /* keeps growing after a load */
            CHECK(hippo_dwm_append(back, ref[0]) == HIPPO_OK);
            CHECK_EQ_U64(hippo_dwm_len(back), n + 1);
            hippo_dwm_free(back);
        }
        free(blob);
        hippo_dwm_free(d);
        free(ref);
        free(batch);
    }
    hippo_dwm *d = NULL;
    CHECK(hippo_dwm_new(0, &d) == HIPPO_EINVAL);
    CHECK(hippo_dwm_new(33, &d) == HIPPO_EINVAL);
    CHECK(hippo_dwm_new(8, NULL) == HIPPO_EINVAL);
}

/* ---- corrupt blobs -------------------------------------------------------------------------- */
typedef int (*load_fn)(const uint8_t *, uint64_t, void **);
static int load_wm(const uint8_t *b, uint64_t n, void **o) { return hippo_wm_deserialize(b, n, (hippo_wm **)o); }
static int load_dwm(const uint8_t *b, uint64_t n, void **o) { return hippo_dwm_deserialize(b, n, (hippo_dwm **)o); }
static int load_bix(const uint8_t *b, uint64_t n, void **o) { return hippo_bix_deserialize(b, n, (hippo_bix **)o); }

static void free_any(load_fn f, void *o) {
    if (f == load_wm) hippo_wm_free((hippo_wm *)o);
    else if (f == load_dwm) hippo_dwm_free((hippo_dwm *)o);
    else hippo_bix_free((hippo_bix *)o);
}

/* A structure the decoder accepted is used end to end (under ASan every read it makes is checked): every symbol,
 * rank and select at both ends, a search; then serialized again, which must load again. */
static void exercise_any(load_fn f, void *o) {
    uint64_t size = 0, w = 0, r = 0;
    if (f == load_wm || f == load_dwm) {
        int dyn = f == load_dwm;
        uint64_t n = dyn ? hippo_dwm_len((hippo_dwm *)o) : hippo_wm_len((hippo_wm *)o);
        uint32_t *sym = (uint32_t *)malloc((size_t)(n ? n : 1) * 4);
        int st = dyn ? hippo_dwm_access_range((hippo_dwm *)o, 0, n, sym) : hippo_wm_access_range((hippo_wm *)o, 0, n, sym);
        CHECK(st == HIPPO_OK);
        if (st == HIPPO_OK && n) {
            uint32_t c = sym[n - 1];
            uint64_t k = 0, pos = 0;
            for (uint64_t i = 0; i < n; i++) k += sym[i] == c;
            CHECK((dyn ? hippo_dwm_rank((hippo_dwm *)o, c, n, &r) : hippo_wm_rank((hippo_wm *)o, c, n, &r)) == HIPPO_OK);
            CHECK_EQ_U64(r, k);
            CHECK((dyn ? hippo_dwm_select((hippo_dwm *)o, c, k, &pos) : hippo_wm_select((hippo_wm *)o, c, k, &pos)) == HIPPO_OK);
            CHECK_EQ_U64(pos, n - 1);
        }
        free(sym);
        st = dyn ? hippo_dwm_serialized_size((hippo_dwm *)o, &size) : hippo_wm_serialized_size((hippo_wm *)o, &size);
        CHECK(st == HIPPO_OK);
        uint8_t *again = (uint8_t *)malloc((size_t)size);
        st = dyn ? hippo_dwm_serialize((hippo_dwm *)o, again, size, &w) : hippo_wm_serialize((hippo_wm *)o, again, size, &w);
        CHECK(st == HIPPO_OK);
        void *o2 = NULL;
        CHECK(f(again, size, &o2) == HIPPO_OK);
        if (o2) free_any(f, o2);
        free(again);
    } else {
        hippo_bix *b = (hippo_bix *)o;
        uint32_t nb = hippo_bix_bits(b) / 8;
        uint64_t n = hippo_bix_len(b);
        uint8_t *q = (uint8_t *)calloc(nb ? nb : 1, 1);
        int32_t dist[4];
        int64_t ids[4];
        if (n) CHECK(hippo_bix_search(b, q, 1, 4, dist, ids) == HIPPO_OK);
        free(q);
    }
}

/* Recompute the trailing checksum so structural validation (not the checksum) is exercised. */
static void reseal(uint8_t *blob, uint64_t len) {
    uint64_t h = hippo_hash64(blob, (size_t)(len - 8), 0);
    for (int i = 0; i < 8; i++) blob[len - 8 + i] = (uint8_t)(h >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static void put32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }

static void corrupt_suite(const uint8_t *blob, uint64_t len, load_fn load) {
    void *o = NULL;
    CHECK(load(blob, len, &o) == HIPPO_OK);
    if (o) free_any(load, o);
    /* every truncation (each copied to an exact-size heap block so ASan sees any over-read) */
    for (uint64_t t = 0; t < len; t++) {
        uint8_t *c = (uint8_t *)malloc((size_t)(t ? t : 1));
        memcpy(c, blob, (size_t)t);
        o = NULL;
        int st = load(c, t, &o);
        CHECK(st == HIPPO_ECORRUPT);
        if (o) free_any(load, o);
        free(c);
    }
    /* random byte flips */
    uint8_t *c = (uint8_t *)malloc((size_t)len);
    for (int t = 0; t < 300; t++) {
        memcpy(c, blob, (size_t)len);
        uint64_t at = rnd_below(len);
        c[at] ^= (uint8_t)(1 + rnd_below(255));
        o = NULL;
        int st = load(c, len, &o);
        CHECK(st == HIPPO_ECORRUPT || st == HIPPO_EVERSION);
        if (o) free_any(load, o);
    }
    /* random mutations with the checksum recomputed, so they reach the structural decoder itself: byte flips
     * anywhere after the magic, runs of bytes set to 0x00 / 0xFF, and little-endian words set to extreme values.
     * The decoder must refuse the blob or return a structure that is fully usable. */
    int accepted = 0;
    for (int t = 0; t < 600; t++) {
        memcpy(c, blob, (size_t)len);
        uint64_t span = len - 8 - 8; /* between the magic and the checksum */
        int kind = (int)rnd_below(3);
        if (kind == 0) {
            int flips = 1 + (int)rnd_below(3);
            for (int f = 0; f < flips; f++) c[8 + rnd_below(span)] ^= (uint8_t)(1u << rnd_below(8));
        } else if (kind == 1) {
            uint64_t at = 8 + rnd_below(span), run = 1 + rnd_below(16);
            for (uint64_t i = at; i < at + run && i < len - 8; i++) c[i] = rnd_below(2) ? 0xFF : 0x00;
        } else if (span >= 8) {
            static const uint64_t extreme[] = {0, 1, 0xFFFFFFFFull, 0x100000000ull, 0x7FFFFFFFFFFFFFFFull, ~0ull,
                                               1ull << 40, 63, 64, 65, 511, 512, 513};
            uint64_t at = 8 + rnd_below(span - 7);
            put64(c + at, extreme[rnd_below(sizeof extreme / sizeof extreme[0])]);
        }
        reseal(c, len);
        o = NULL;
        int st = load(c, len, &o);
        CHECK(st == HIPPO_OK || st == HIPPO_ECORRUPT || st == HIPPO_EVERSION || st == HIPPO_ENOMEM);
        CHECK((st == HIPPO_OK) == (o != NULL));
        if (o) {
            accepted++;
            exercise_any(load, o);
            free_any(load, o);
        }
    }
    CHECK(accepted > 0); /* payload-only changes load: the decoder itself, not only the checksum, was reached */
    /* valid checksum, hostile fields: version, reserved, width, huge n, n off by one */
    memcpy(c, blob, (size_t)len); put32(c + 8, 99); reseal(c, len);
    CHECK(load(c, len, &o) == HIPPO_EVERSION);
    memcpy(c, blob, (size_t)len); put32(c + 12, 1); reseal(c, len);
    CHECK(load(c, len, &o) == HIPPO_ECORRUPT);
    memcpy(c, blob, (size_t)len); put32(c + 16, 0); reseal(c, len);
    CHECK(load(c, len, &o) == HIPPO_ECORRUPT);
    memcpy(c, blob, (size_t)len); put32(c + 16, 999); reseal(c, len);
    CHECK(load(c, len, &o) == HIPPO_ECORRUPT);
    memcpy(c, blob, (size_t)len); put64(c + 24, 0xFFFFFFFFFFFFull); reseal(c, len);
    CHECK(load(c, len, &o) == HIPPO_ECORRUPT);
    memcpy(c, blob, (size_t)len); put64(c + 24, ~0ull); reseal(c, len);
    CHECK(load(c, len, &o) == HIPPO_ECORRUPT);
    uint64_t n = 0;
    for (int i = 0; i < 8; i++) n |= (uint64_t)blob[24 + i] << (8 * i);
    memcpy(c, blob, (size_t)len); put64(c + 24, n + 1000); reseal(c, len);
    CHECK(load(c, len, &o) == HIPPO_ECORRUPT);
    free(c);
    /* wrong magic for the loader, NULL blob */
    CHECK(load(NULL, len, &o) == HIPPO_EINVAL);
}

static void test_corrupt(void) {
    uint32_t s[50];
    random_symbols(s, 50, 11);
    hippo_wm *wm;
    CHECK(hippo_wm_build(s, 50, 11, &wm) == HIPPO_OK);
    uint64_t size, w;
    hippo_wm_serialized_size(wm, &size);
    uint8_t *blob = (uint8_t *)malloc((size_t)size);
    hippo_wm_serialize(wm, blob, size, &w);
    corrupt_suite(blob, size, load_wm);
    hippo_dwm *d2 = NULL;
    CHECK(hippo_dwm_deserialize(blob, size, &d2) == HIPPO_ECORRUPT); /* magic of another structure */
    free(blob);
    hippo_wm_free(wm);

    hippo_dwm *d;
    hippo_dwm_new(5, &d);
    for (int i = 0; i < 70; i++) hippo_dwm_append(d, (uint32_t)(i * 7) & 31);
    hippo_dwm_serialized_size(d, &size);
    blob = (uint8_t *)malloc((size_t)size);
    hippo_dwm_serialize(d, blob, size, &w);
    corrupt_suite(blob, size, load_dwm);
    free(blob);
    hippo_dwm_free(d);

    hippo_bix *b;
    hippo_bix_new(128, &b);
    uint8_t codes[16 * 9];
    for (int i = 0; i < 16 * 9; i++) codes[i] = (uint8_t)rnd();
    hippo_bix_add(b, codes, 9, NULL);
    hippo_bix_serialized_size(b, &size);
    blob = (uint8_t *)malloc((size_t)size);
    hippo_bix_serialize(b, blob, size, &w);
    corrupt_suite(blob, size, load_bix);
    free(blob);
    hippo_bix_free(b);
}

/* ---- Hamming index -------------------------------------------------------------------------- */
static uint32_t ref_dist(const uint8_t *a, const uint8_t *b, uint32_t nbytes) {
    uint32_t d = 0;
    for (uint32_t i = 0; i < nbytes; i++) d += popc((uint64_t)(a[i] ^ b[i]));
    return d;
}

static void test_bix_kernel(int kernel) {
    CHECK(hippo_set_kernel(kernel) == HIPPO_OK);
    CHECK_EQ_U64(hippo_active_kernel(), kernel);
    const uint32_t widths[] = {64, 128, 192, 256, 512, 640, 1024};
    const uint64_t sizes[] = {0, 1, 7, 8, 33, 300, 2100};
    for (size_t wi = 0; wi < 7; wi++)
        for (size_t si = 0; si < 7; si++) {
            uint32_t bits = widths[wi], nb = bits / 8;
            uint64_t n = sizes[si];
            hippo_bix *b;
            CHECK(hippo_bix_new(bits, &b) == HIPPO_OK);
            uint8_t *codes = (uint8_t *)malloc((size_t)(n + 1) * nb);
            /* few distinct codes with few differing bits: many equal distances */
            uint8_t base[128];
            for (uint32_t i = 0; i < nb; i++) base[i] = (uint8_t)rnd();
            for (uint64_t i = 0; i < n; i++) {
                memcpy(codes + i * nb, base, nb);
                int flips = (int)rnd_below(6);
                for (int f = 0; f < flips; f++) codes[i * nb + rnd_below(nb)] ^= (uint8_t)(1u << rnd_below(8));
            }
            /* add in two pieces to exercise growth */
            uint64_t first = 99;
            CHECK(hippo_bix_add(b, codes, n / 2, &first) == HIPPO_OK && first == 0);
            CHECK(hippo_bix_add(b, codes + (n / 2) * nb, n - n / 2, &first) == HIPPO_OK && first == n / 2);
            CHECK_EQ_U64(hippo_bix_len(b), n);
            uint8_t q[128 * 3];
            for (int j = 0; j < 3; j++) {
                memcpy(q + j * nb, base, nb);
                q[j * nb + rnd_below(nb)] ^= (uint8_t)rnd();
            }
            uint32_t *rd = (uint32_t *)malloc((size_t)(n + 1) * 4);
            const uint64_t ks[] = {1, 5, n + 3};
            for (int ki = 0; ki < 3; ki++) {
                uint64_t k = ks[ki];
                int32_t *od = (int32_t *)malloc((size_t)(3 * k) * 4);
                int64_t *oi = (int64_t *)malloc((size_t)(3 * k) * 8);
                for (int batch = 1; batch <= 3; batch += 2) {
                    CHECK(hippo_bix_search(b, q, (uint64_t)batch, k, od, oi) == HIPPO_OK);
                    for (int j = 0; j < batch; j++) {
                        for (uint64_t i = 0; i < n; i++) rd[i] = ref_dist(codes + i * nb, q + j * nb, nb);
                        /* reference: repeatedly the smallest (dist, id) not yet taken */
                        uint64_t prev_d = 0, prev_i = 0;
                        int have_prev = 0;
                        for (uint64_t r = 0; r < k; r++) {
                            int64_t best = -1;
                            for (uint64_t i = 0; i < n; i++) {
                                if (have_prev && (rd[i] < prev_d || (rd[i] == prev_d && i <= prev_i))) continue;
                                if (best < 0 || rd[i] < rd[best] || (rd[i] == rd[best] && (int64_t)i < best)) best = (int64_t)i;
                            }
                            int32_t ed = best < 0 ? -1 : (int32_t)rd[best];
                            if (od[j * k + r] != ed || oi[j * k + r] != best) {
                                CHECK(od[j * k + r] == ed && oi[j * k + r] == best);
                                break;
                            }
                            if (best >= 0) { prev_d = rd[best]; prev_i = (uint64_t)best; have_prev = 1; }
                        }
                    }
                }
                free(od);
                free(oi);
            }
            /* radius */
            for (uint64_t i = 0; i < n; i++) rd[i] = ref_dist(codes + i * nb, q, nb);
            for (uint32_t rad = 0; rad < 12; rad += 3) {
                uint64_t need = 0, exp = 0;
                for (uint64_t i = 0; i < n; i++) exp += rd[i] <= rad;
                int32_t *od = (int32_t *)malloc((size_t)(exp + 1) * 4);
                int64_t *oi = (int64_t *)malloc((size_t)(exp + 1) * 8);
                CHECK(hippo_bix_radius(b, q, rad, od, oi, exp, &need) == HIPPO_OK);
                CHECK_EQ_U64(need, exp);
                uint64_t w = 0;
                for (uint32_t dd = 0; dd <= rad; dd++)
                    for (uint64_t i = 0; i < n; i++)
                        if (rd[i] == dd) {
                            if (w < exp && (od[w] != (int32_t)dd || oi[w] != (int64_t)i)) { CHECK(0); }
                            w++;
                        }
                free(od);
                free(oi);
            }
            /* get */
            if (n) {
                int64_t ids[2] = {0, (int64_t)n - 1};
                uint8_t got[256];
                CHECK(hippo_bix_get(b, ids, 2, got) == HIPPO_OK);
                CHECK(memcmp(got, codes, nb) == 0 && memcmp(got + nb, codes + (n - 1) * nb, nb) == 0);
                ids[1] = (int64_t)n;
                CHECK(hippo_bix_get(b, ids, 2, got) == HIPPO_ERANGE);
                ids[1] = -1;
                CHECK(hippo_bix_get(b, ids, 2, got) == HIPPO_ERANGE);
            }
            /* serialization */
            uint64_t size, w;
            hippo_bix_serialized_size(b, &size);
            uint8_t *blob = (uint8_t *)malloc((size_t)size);
            CHECK(hippo_bix_serialize(b, blob, size, &w) == HIPPO_OK);
            hippo_bix *back = NULL;
            CHECK(hippo_bix_deserialize(blob, size, &back) == HIPPO_OK);
            if (back) {
                CHECK_EQ_U64(hippo_bix_len(back), n);
                if (n) {
                    int64_t id = (int64_t)(n - 1);
                    uint8_t got[128];
                    CHECK(hippo_bix_get(back, &id, 1, got) == HIPPO_OK && memcmp(got, codes + (n - 1) * nb, nb) == 0);
                }
                hippo_bix_free(back);
            }
            free(blob);
            free(rd);
            free(codes);
            hippo_bix_free(b);
        }
    hippo_bix *b;
    CHECK(hippo_bix_new(100, &b) == HIPPO_EINVAL);
    CHECK(hippo_bix_new(0, &b) == HIPPO_EINVAL);
    CHECK(hippo_bix_new(1088, &b) == HIPPO_EINVAL);
    CHECK(hippo_bix_new(64, &b) == HIPPO_OK);
    int32_t od[1];
    int64_t oi[1];
    uint8_t q[8] = {0};
    CHECK(hippo_bix_search(b, q, 1, 0, od, oi) == HIPPO_EINVAL);
    CHECK(hippo_bix_search(b, q, 1, 1, od, oi) == HIPPO_OK && od[0] == -1 && oi[0] == -1);
    hippo_bix_free(b);
}

static void test_bix(void) {
    int initial = hippo_active_kernel();
    for (int k = HIPPO_KERNEL_PORTABLE; k <= hippo_best_kernel(); k++) test_bix_kernel(k);
    CHECK(hippo_set_kernel(99) == HIPPO_EINVAL);
    hippo_set_kernel(initial);
    /* bandwidth probe: the checksum does not depend on the kernel */
    size_t nbytes = 100003;
    uint8_t *buf = (uint8_t *)malloc(nbytes + 8);
    for (size_t i = 0; i < nbytes + 8; i++) buf[i] = (uint8_t)rnd();
    uint64_t s0 = 0, s1 = 1;
    CHECK(hippo_read_bandwidth(buf + 3, nbytes, &s0) == HIPPO_OK);
    CHECK(hippo_read_bandwidth(buf + 3, nbytes, &s1) == HIPPO_OK);
    CHECK(s0 == s1);
    CHECK(hippo_read_bandwidth(NULL, 10, &s0) == HIPPO_EINVAL);
    free(buf);
}

/* ---- random indexing ------------------------------------------------------------------------ */
static uint64_t sm64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

/* Dense, sort-based reference of hippo_ri_signatures_segmented (same hash definitions). */
static uint32_t ref_signature(const uint32_t *tok, uint64_t a, uint64_t e, uint64_t i, const hippo_ri_params *p) {
    int32_t *acc = (int32_t *)calloc(p->dim, 4);
    uint64_t lo = i >= a + p->window ? i - p->window : a, hi = i + p->window + 1 < e ? i + p->window + 1 : e;
    for (uint64_t j = lo; j < hi; j++) {
        uint32_t idx[256];
        uint64_t key = sm64(p->seed ^ sm64((uint64_t)tok[j] * 0xD1B54A32D192ED03ULL + 1)), ctr = 0;
        for (uint32_t s = 0; s < p->nnz; s++)
            for (;;) {
                uint64_t h = sm64(key + ++ctr);
                uint32_t cand = (uint32_t)(((h >> 32) * (uint64_t)p->dim) >> 32), t;
                for (t = 0; t < s; t++) if (idx[t] == cand) break;
                if (t == s) { idx[s] = cand; break; }
            }
        int32_t wt = j == i ? (int32_t)p->self_weight : 1;
        for (uint32_t s = 0; s < p->nnz; s++) acc[idx[s]] += s < p->nnz / 2 ? wt : -wt;
    }
    /* keep top_m by (|v| desc, index asc), nonzero only */
    uint8_t *kept = (uint8_t *)calloc(p->dim, 1);
    for (uint32_t t = 0; t < p->top_m; t++) {
        int64_t best = -1;
        for (uint32_t d = 0; d < p->dim; d++) {
            if (kept[d] || acc[d] == 0) continue;
            if (best < 0 || abs(acc[d]) > abs(acc[best])) best = d;
        }
        if (best < 0) break;
        kept[best] = 1;
    }
    uint64_t rseed = sm64(p->seed ^ 0x5DEECE66DULL);
    uint32_t sig = 0;
    for (uint32_t b = 0; b < p->sig_bits; b++) {
        int64_t sum = 0;
        for (uint32_t d = 0; d < p->dim; d++)
            if (kept[d]) sum += ((sm64(rseed + d) >> b) & 1) ? acc[d] : -acc[d];
        if (sum > 0) sig |= 1u << b;
    }
    free(acc);
    free(kept);
    return sig;
}

static void test_ri(void) {
    hippo_ri_params p = {42, 256, 8, 2, 4, 6, 32};
    uint64_t n = 400;
    uint32_t *tok = (uint32_t *)malloc(n * 4), *sig = (uint32_t *)malloc(n * 4), *sig2 = (uint32_t *)malloc(n * 4);
    for (uint64_t i = 0; i < n; i++) tok[i] = (uint32_t)rnd_below(30);
    const hippo_ri_params variants[] = {
        {42, 256, 8, 2, 4, 6, 32}, {7, 64, 4, 0, 1, 3, 17}, {1, 1024, 16, 5, 0, 40, 32}, {9, 32, 32, 3, 9, 32, 8}};
    for (int v = 0; v < 4; v++) {
        CHECK(hippo_ri_signatures(tok, n, &variants[v], sig) == HIPPO_OK);
        for (uint64_t i = 0; i < n; i++)
            if (sig[i] != ref_signature(tok, 0, n, i, &variants[v])) { CHECK_EQ_U64(sig[i], ref_signature(tok, 0, n, i, &variants[v])); break; }
        if (variants[v].sig_bits < 32)
            for (uint64_t i = 0; i < n; i++) CHECK((sig[i] >> variants[v].sig_bits) == 0);
    }
    /* segmented: window never crosses a boundary */
    uint64_t ends[3] = {100, 101, 400};
    CHECK(hippo_ri_signatures_segmented(tok, n, ends, 3, &p, sig) == HIPPO_OK);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t a = i < 100 ? 0 : (i < 101 ? 100 : 101), e = i < 100 ? 100 : (i < 101 ? 101 : 400);
        if (sig[i] != ref_signature(tok, a, e, i, &p)) { CHECK(0); break; }
    }
    /* one segment == unsegmented; deterministic */
    CHECK(hippo_ri_signatures_segmented(tok, n, &n, 1, &p, sig) == HIPPO_OK);
    CHECK(hippo_ri_signatures(tok, n, &p, sig2) == HIPPO_OK);
    CHECK(memcmp(sig, sig2, n * 4) == 0);
    /* bad parameters */
    hippo_ri_params bad = p;
    bad.nnz = 7; CHECK(hippo_ri_signatures(tok, n, &bad, sig) == HIPPO_EINVAL);
    bad = p; bad.sig_bits = 33; CHECK(hippo_ri_signatures(tok, n, &bad, sig) == HIPPO_EINVAL);
    bad = p; bad.sig_bits = 0; CHECK(hippo_ri_signatures(tok, n, &bad, sig) == HIPPO_EINVAL);
    bad = p; bad.top_m = 0; CHECK(hippo_ri_signatures(tok, n, &bad, sig) == HIPPO_EINVAL);
    bad = p; bad.dim = 1; CHECK(hippo_ri_signatures(tok, n, &bad, sig) == HIPPO_EINVAL);
    uint64_t badends[2] = {50, 50};
    CHECK(hippo_ri_signatures_segmented(tok, n, badends, 2, &p, sig) == HIPPO_EINVAL);
    uint64_t short_end = 399;
    CHECK(hippo_ri_signatures_segmented(tok, n, &short_end, 1, &p, sig) == HIPPO_EINVAL);
    CHECK(hippo_ri_signatures(NULL, n, &p, sig) == HIPPO_EINVAL);
    CHECK(hippo_ri_signatures(tok, 0, &p, sig) == HIPPO_OK);
    free(tok); free(sig); free(sig2);
}

static void test_misc(void) {
    CHECK(strcmp(hippo_strerror(HIPPO_OK), "ok") == 0);
    for (int s = -7; s <= 0; s++) CHECK(hippo_strerror(s) != NULL && strlen(hippo_strerror(s)) > 0);
    CHECK(strcmp(hippo_strerror(12345), "unknown status") == 0);
    /* pack / unpack round trip at every width */
    for (uint32_t bits = 1; bits <= 32; bits++) {
        uint32_t s[131], back[131];
        random_symbols(s, 131, bits);
        uint8_t buf[131 * 4 + 8];
        hippo_pack_symbols(s, 131, bits, buf);
        hippo_unpack_symbols(buf, 131, bits, back);
        CHECK(memcmp(s, back, sizeof(s)) == 0);
    }
    /* checksum: stable value and sensitivity */
    uint8_t data[100];
    for (int i = 0; i < 100; i++) data[i] = (uint8_t)i;
    uint64_t h1 = hippo_hash64(data, 100, 0);
    data[57] ^= 1;
    CHECK(h1 != hippo_hash64(data, 100, 0));
    CHECK(hippo_hash64(data, 0, 0) == hippo_hash64(data, 0, 0));
    /* byte tables: ids 0..3 stand for "a", "", "bcd", "ef" (id 1 has no entry) */
    const uint8_t table[] = "abcdef";
    const uint32_t offs[] = {0, 1, 1, 4, 6};
    const uint32_t ids[] = {3, 0, 2, 0};
    uint8_t out[16];
    uint64_t need = 0;
    CHECK(hippo_gather_bytes(ids, 4, table, offs, 4, out, sizeof(out), &need) == HIPPO_OK);
    CHECK(need == 7 && memcmp(out, "efabcda", 7) == 0);
    need = 0;
    CHECK(hippo_gather_bytes(ids, 4, table, offs, 4, out, 3, &need) == HIPPO_OK && need == 7);
    const uint32_t bad1[] = {0, 1}, bad2[] = {0, 2, 4};
    CHECK(hippo_gather_bytes(bad1, 2, table, offs, 4, out, sizeof(out), &need) == HIPPO_ERANGE && need == 1);
    CHECK(hippo_gather_bytes(bad2, 3, table, offs, 4, out, sizeof(out), &need) == HIPPO_ERANGE && need == 2);
    CHECK(hippo_gather_bytes(ids, 4, table, offs, 4, NULL, 8, &need) == HIPPO_EINVAL);
    CHECK(hippo_gather_bytes(NULL, 0, NULL, NULL, 0, NULL, 0, &need) == HIPPO_OK && need == 0);
}

int main(void) {
    const char *env = getenv("HIPPO_FORCE_PORTABLE");
    printf("hippo C core tests (kernel: %s%s)\n", hippo_kernel_name(hippo_active_kernel()),
           env && env[0] == '1' ? ", forced portable" : "");
    if (env && env[0] == '1') CHECK(hippo_active_kernel() == HIPPO_KERNEL_PORTABLE);
    test_misc();
    test_bitvector();
    test_wm();
    test_dwm();
    test_corrupt();
    test_bix();
    test_ri();
    printf("%lu passed, %lu failed\n", g_checks - g_failures, g_failures);
    return g_failures ? 1 : 0;
}
