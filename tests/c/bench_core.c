/*
 * bench_core.c -- a small timing loop for the C core, run by hand (not part of the test suite):
 *   cc -O3 -std=c99 -Icore_c -o /tmp/bench_core tests/c/bench_core.c core_c/\*.c && /tmp/bench_core
 * Reports per-operation times of the static and dynamic wavelet matrix (1e6 x 17-bit symbols, the
 * size sdsl's wm_int figures refer to), of Hamming top-k over 1e6 codes and of RI signatures.
 * Times are per-thread CPU time, so a busy shared machine inflates them less than wall time.
 */
#define _POSIX_C_SOURCE 199309L
#include "hippo_core.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* CPU time: robust to a shared machine */
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t s = 88172645463325252ULL;
static uint64_t rnd(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return s; }

int main(int argc, char **argv) {
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    uint32_t bits = 17, m = 1000000;
    uint32_t *data = malloc(n * 4), *out = malloc((n > m ? n : m) * 4);
    int64_t *pos = malloc(m * 8);
    uint32_t *sym = malloc(m * 4);
    uint64_t *res = malloc(m * 8), acc = 0;
    for (uint64_t i = 0; i < n; i++) data[i] = (uint32_t)(rnd() & ((1u << bits) - 1));
    for (uint32_t i = 0; i < m; i++) { pos[i] = (int64_t)(rnd() % n); sym[i] = data[rnd() % n]; }
    double t = now();
    hippo_wm *wm;
    hippo_wm_build(data, n, bits, &wm);
    printf("static build      %8.1f ns/symbol  (%.3f x raw bits)\n", (now() - t) * 1e9 / n,
           hippo_wm_nbytes(wm) * 8.0 / ((double)n * bits));
    t = now();
    for (uint32_t i = 0; i < m; i++) { uint32_t v; hippo_wm_access(wm, (uint64_t)pos[i], &v); acc += v; }
    printf("static access     %8.1f ns/op\n", (now() - t) * 1e9 / m);
    t = now();
    for (uint32_t i = 0; i < m; i++) { uint64_t r; hippo_wm_rank(wm, sym[i], (uint64_t)pos[i], &r); acc += r; }
    printf("static rank       %8.1f ns/op\n", (now() - t) * 1e9 / m);
    t = now();
    for (uint32_t i = 0; i < m; i++) { uint64_t r; hippo_wm_select(wm, sym[i], 1, &r); acc += r; }
    printf("static select     %8.1f ns/op\n", (now() - t) * 1e9 / m);
    t = now();
    hippo_wm_access_many(wm, pos, m, out);
    printf("static access_many%8.1f ns/op\n", (now() - t) * 1e9 / m);
    t = now();
    hippo_wm_rank_many(wm, sym, pos, m, res);
    printf("static rank_many  %8.1f ns/op\n", (now() - t) * 1e9 / m);
    t = now();
    hippo_wm_access_range(wm, 0, n, out);
    printf("static decode all %8.1f ns/symbol\n", (now() - t) * 1e9 / n);

    hippo_dwm *d;
    hippo_dwm_new(bits, &d);
    t = now();
    hippo_dwm_extend(d, data, n);
    printf("dwm extend        %8.1f ns/symbol\n", (now() - t) * 1e9 / n);
    hippo_dwm *a;
    hippo_dwm_new(bits, &a);
    t = now();
    for (uint64_t i = 0; i < n; i++) hippo_dwm_append(a, data[i]);
    printf("dwm append        %8.1f ns/symbol  (%u segments)\n", (now() - t) * 1e9 / n, hippo_dwm_segments(a));
    t = now();
    for (uint32_t i = 0; i < m; i++) { uint32_t v; hippo_dwm_access(a, (uint64_t)pos[i], &v); acc += v; }
    printf("dwm access        %8.1f ns/op\n", (now() - t) * 1e9 / m);
    t = now();
    for (uint32_t i = 0; i < m; i++) { uint64_t r; hippo_dwm_rank(a, sym[i], (uint64_t)pos[i], &r); acc += r; }
    printf("dwm rank          %8.1f ns/op\n", (now() - t) * 1e9 / m);
    t = now();
    hippo_dwm_access_many(a, pos, m, out);
    printf("dwm access_many   %8.1f ns/op\n", (now() - t) * 1e9 / m);
    t = now();
    hippo_dwm_rank_many(a, sym, pos, m, res);
    printf("dwm rank_many     %8.1f ns/op\n", (now() - t) * 1e9 / m);

    for (uint32_t cb = 64; cb <= 256; cb *= 4) {
        uint64_t nc = 1000000, nb = cb / 8;
        uint8_t *codes = malloc(nc * nb), q[128];
        for (uint64_t i = 0; i < nc * nb; i++) codes[i] = (uint8_t)rnd();
        for (uint64_t i = 0; i < nb; i++) q[i] = (uint8_t)rnd();
        hippo_bix *b;
        hippo_bix_new(cb, &b);
        hippo_bix_add(b, codes, nc, NULL);
        int32_t dist[10];
        int64_t ids[10];
        double best = 1e9;
        for (int r = 0; r < 20; r++) {
            t = now();
            hippo_bix_search(b, q, 1, 10, dist, ids);
            if (now() - t < best) best = now() - t;
        }
        printf("hamming %4u-bit 1e6 k=10: %.3f ms (%.1f GB/s)\n", cb, best * 1e3, nc * nb / best / 1e9);
        hippo_bix_free(b);
        free(codes);
    }
    {
        /* random-indexing signatures over a Zipf-like token stream (default engine parameters) */
        uint64_t nt = 2000000;
        uint32_t *tok = malloc(nt * 4), *sig = malloc(nt * 4);
        for (uint64_t i = 0; i < nt; i++) tok[i] = (uint32_t)(100000.0 / (1.0 + (double)(rnd() % 1000000) / 10.0));
        hippo_ri_params p = {1, 1024, 8, 2, 6, 16, 16};
        t = now();
        hippo_ri_signatures(tok, nt, &p, sig);
        printf("ri_signatures     %8.2f M tokens/s\n", nt / (now() - t) / 1e6);
        acc += sig[nt / 2];
        free(tok);
        free(sig);
    }
    printf("(checksum %llu)\n", (unsigned long long)acc);
    return 0;
}
