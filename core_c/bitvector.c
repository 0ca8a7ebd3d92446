/*
 * bitvector.c -- construction of the rank/select directory of hippo_bv (layout in hippo_internal.h).
 * Queries are inline in hippo_internal.h so the wavelet-matrix loops compile them in place.
 */
#include "hippo_internal.h"

/* header field k (ones in payload words 0..k-1), k = 1..6 at bits 14, 21, 29, 37, 46, 55 */
const uint8_t hippo_bv_field_shift[7] = {0, 14, 21, 29, 37, 46, 55};
const uint16_t hippo_bv_field_mask[7] = {0, 0x7F, 0xFF, 0xFF, 0x1FF, 0x1FF, 0x1FF};

int hippo_bv_init(hippo_bv *bv, uint64_t n) {
    memset(bv, 0, sizeof(*bv));
    if (n > HIPPO_MAX_N) return HIPPO_EINVAL;
    bv->n = n;
    bv->nlines = (n + HIPPO_BV_LINE_BITS - 1) / HIPPO_BV_LINE_BITS;
    uint64_t bytes = (bv->nlines + 1) * HIPPO_BV_LINE_WORDS * 8;
    bv->lines = (uint64_t *)hippo_aligned_alloc((size_t)bytes);
    if (!bv->lines) return HIPPO_ENOMEM;
    memset(bv->lines, 0, (size_t)bytes);
    return HIPPO_OK;
}

void hippo_bv_free(hippo_bv *bv) {
    hippo_aligned_free(bv->lines);
    free(bv->super);
    free(bv->sel1);
    free(bv->sel0);
    memset(bv, 0, sizeof(*bv));
}

uint64_t hippo_bv_nbytes(const hippo_bv *bv) {
    return (bv->nlines + 1) * HIPPO_BV_LINE_WORDS * 8 + (bv->nlines / HIPPO_BV_SUPER_LINES + 1) * 8 +
           (bv->nsel1 + bv->nsel0) * 4;
}

int hippo_bv_finish(hippo_bv *bv) {
    uint64_t line, ones = 0;
    /* Clear any payload bits past n so popcounts of the last line are exact. */
    for (uint64_t i = bv->n; i < bv->nlines * HIPPO_BV_LINE_BITS; i++) {
        uint64_t ln = i / HIPPO_BV_LINE_BITS, off = i % HIPPO_BV_LINE_BITS;
        if ((off & 63) == 0) {
            /* whole word past the end */
            bv->lines[ln * HIPPO_BV_LINE_WORDS + 1 + (off >> 6)] = 0;
            i += 63;
            continue;
        }
        bv->lines[ln * HIPPO_BV_LINE_WORDS + 1 + (off >> 6)] &= ~((uint64_t)1 << (off & 63));
    }
    uint64_t nsuper = bv->nlines / HIPPO_BV_SUPER_LINES + 1;
    free(bv->super);
    bv->super = (uint64_t *)malloc((size_t)nsuper * 8);
    if (!bv->super) return HIPPO_ENOMEM;
    for (line = 0; line <= bv->nlines; line++) {
        uint64_t *l = bv->lines + line * HIPPO_BV_LINE_WORDS;
        if (line % HIPPO_BV_SUPER_LINES == 0) bv->super[line / HIPPO_BV_SUPER_LINES] = ones;
        uint64_t h = ones - bv->super[line / HIPPO_BV_SUPER_LINES]; /* < 16384 */
        unsigned cum = 0;
        if (line < bv->nlines) {
            for (unsigned j = 0; j < 7; j++) {
                cum += hippo_popcount64(l[1 + j]);
                if (j < 6) h |= (uint64_t)cum << hippo_bv_field_shift[j + 1];
            }
        }
        l[0] = h;
        ones += cum;
    }
    bv->ones = ones;
    uint64_t zeros = bv->n - ones;
    bv->nsel1 = (ones + HIPPO_BV_SAMPLE - 1) / HIPPO_BV_SAMPLE;
    bv->nsel0 = (zeros + HIPPO_BV_SAMPLE - 1) / HIPPO_BV_SAMPLE;
    free(bv->sel1);
    free(bv->sel0);
    bv->sel1 = (uint32_t *)malloc((size_t)(bv->nsel1 ? bv->nsel1 : 1) * 4);
    bv->sel0 = (uint32_t *)malloc((size_t)(bv->nsel0 ? bv->nsel0 : 1) * 4);
    if (!bv->sel1 || !bv->sel0) return HIPPO_ENOMEM;
    /* sample j: the line holding the (j * SAMPLE + 1)-th one / zero */
    uint64_t s1 = 0, s0 = 0;
    for (line = 0; line < bv->nlines; line++) {
        uint64_t o_before = hippo_bv_line_ones(bv, line);
        uint64_t o_after = hippo_bv_line_ones(bv, line + 1);
        uint64_t bits_after = (line + 1) * HIPPO_BV_LINE_BITS;
        if (bits_after > bv->n) bits_after = bv->n;
        uint64_t z_before = line * HIPPO_BV_LINE_BITS - o_before;
        uint64_t z_after = bits_after - o_after;
        while (s1 < bv->nsel1 && s1 * HIPPO_BV_SAMPLE + 1 <= o_after) {
            if (s1 * HIPPO_BV_SAMPLE + 1 > o_before) bv->sel1[s1] = (uint32_t)line;
            s1++;
        }
        while (s0 < bv->nsel0 && s0 * HIPPO_BV_SAMPLE + 1 <= z_after) {
            if (s0 * HIPPO_BV_SAMPLE + 1 > z_before) bv->sel0[s0] = (uint32_t)line;
            s0++;
        }
    }
    if (s1 != bv->nsel1 || s0 != bv->nsel0) return HIPPO_EINTERNAL;
    return HIPPO_OK;
}
