/*
 * serialize.c -- the blob frame shared by every serialized structure, the checksum, and the
 * bit-packed symbol payload.
 *
 * Frame (all integers little-endian):
 *   magic[8] | u32 version | u32 reserved (0) | structure fields ... | payload | u64 checksum
 * The checksum covers every byte before it. Readers check the minimum length and the checksum before
 * trusting any field, then check every field against the remaining length before allocating.
 */
#include "hippo_internal.h"

/* ---- checksum: xxh64-style, 4 lanes of multiply-rotate over 32-byte stripes ---------------- */
#define P1 0x9E3779B185EBCA87ULL
#define P2 0xC2B2AE3D27D4EB4FULL
#define P3 0x165667B19E3779F9ULL
#define P4 0x85EBCA77C2B2AE63ULL
#define P5 0x27D4EB2F165667C5ULL

static uint64_t rotl64(uint64_t x, unsigned r) { return (x << r) | (x >> (64 - r)); }

static uint64_t rd64(const uint8_t *p) {
    return (uint64_t)p[0] | ((uint64_t)p[1] << 8) | ((uint64_t)p[2] << 16) | ((uint64_t)p[3] << 24) |
           ((uint64_t)p[4] << 32) | ((uint64_t)p[5] << 40) | ((uint64_t)p[6] << 48) | ((uint64_t)p[7] << 56);
}
static uint32_t rd32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static uint64_t round64(uint64_t acc, uint64_t in) {
    acc += in * P2;
    acc = rotl64(acc, 31);
    return acc * P1;
}
static uint64_t merge64(uint64_t acc, uint64_t v) {
    acc ^= round64(0, v);
    return acc * P1 + P4;
}

uint64_t hippo_hash64(const void *data, size_t len, uint64_t seed) {
    if (!data) len = 0; /* NULL hashes as the empty input */
    const uint8_t *p = (const uint8_t *)data;
    const uint8_t *end = p + len;
    uint64_t h;
    if (len >= 32) {
        uint64_t v1 = seed + P1 + P2, v2 = seed + P2, v3 = seed, v4 = seed - P1;
        const uint8_t *limit = end - 32;
        do {
            v1 = round64(v1, rd64(p));
            v2 = round64(v2, rd64(p + 8));
            v3 = round64(v3, rd64(p + 16));
            v4 = round64(v4, rd64(p + 24));
            p += 32;
        } while (p <= limit);
        h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);
        h = merge64(h, v1);
        h = merge64(h, v2);
        h = merge64(h, v3);
        h = merge64(h, v4);
    } else {
        h = seed + P5;
    }
    h += (uint64_t)len;
    while (p + 8 <= end) {
        h ^= round64(0, rd64(p));
        h = rotl64(h, 27) * P1 + P4;
        p += 8;
    }
    if (p + 4 <= end) {
        h ^= (uint64_t)rd32(p) * P1;
        h = rotl64(h, 23) * P2 + P3;
        p += 4;
    }
    while (p < end) {
        h ^= (*p) * P5;
        h = rotl64(h, 11) * P1;
        p++;
    }
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    h ^= h >> 32;
    return h;
}

/* ---- writer ------------------------------------------------------------------------------- */
/* Writers are only used on buffers sized by the matching *_serialized_size, so bounds are checked
 * by the callers once; the put functions still refuse to write past cap. */
void hippo_put_u32(hippo_writer *w, uint32_t v) {
    if (w->pos > w->cap || w->cap - w->pos < 4) { w->pos = w->cap + 1; return; }
    for (int i = 0; i < 4; i++) w->buf[w->pos++] = (uint8_t)(v >> (8 * i));
}
void hippo_put_u64(hippo_writer *w, uint64_t v) {
    if (w->pos > w->cap || w->cap - w->pos < 8) { w->pos = w->cap + 1; return; }
    for (int i = 0; i < 8; i++) w->buf[w->pos++] = (uint8_t)(v >> (8 * i));
}
void hippo_put_bytes(hippo_writer *w, const void *p, uint64_t n) {
    if (w->pos > w->cap || w->cap - w->pos < n) { w->pos = w->cap + 1; return; }
    if (n) memcpy(w->buf + w->pos, p, (size_t)n);
    w->pos += n;
}
void hippo_put_checksum(hippo_writer *w) {
    if (w->pos > w->cap) return;
    hippo_put_u64(w, hippo_hash64(w->buf, (size_t)w->pos, 0));
}

/* ---- reader ------------------------------------------------------------------------------- */
int hippo_get_u32(hippo_reader *r, uint32_t *v) {
    if (r->len - r->pos < 4) return 0;
    *v = rd32(r->buf + r->pos);
    r->pos += 4;
    return 1;
}
int hippo_get_u64(hippo_reader *r, uint64_t *v) {
    if (r->len - r->pos < 8) return 0;
    *v = rd64(r->buf + r->pos);
    r->pos += 8;
    return 1;
}
const uint8_t *hippo_get_bytes(hippo_reader *r, uint64_t n) {
    if (r->len - r->pos < n) return NULL;
    const uint8_t *p = r->buf + r->pos;
    r->pos += n;
    return p;
}

int hippo_open_blob(hippo_reader *r, const uint8_t *blob, uint64_t len, const char magic[8]) {
    if (!blob) return HIPPO_EINVAL;
    if (len < 8 + 4 + 4 + 8) return HIPPO_ECORRUPT;
    if (memcmp(blob, magic, 8) != 0) return HIPPO_ECORRUPT;
    uint64_t stored = rd64(blob + len - 8);
    if (hippo_hash64(blob, (size_t)(len - 8), 0) != stored) return HIPPO_ECORRUPT;
    uint32_t version = rd32(blob + 8), reserved = rd32(blob + 12);
    if (version != HIPPO_BLOB_VERSION) return HIPPO_EVERSION;
    if (reserved != 0) return HIPPO_ECORRUPT;
    r->buf = blob;
    r->len = len - 8;
    r->pos = 16;
    return HIPPO_OK;
}

/* ---- bit-packed symbols ------------------------------------------------------------------- */
uint64_t hippo_packed_words(uint64_t n, uint32_t bits) {
    /* n <= 2^40 and bits <= 32: no overflow */
    return (n * bits + 63) / 64;
}

void hippo_pack_symbols(const uint32_t *symbols, uint64_t n, uint32_t bits, uint8_t *dst) {
    uint64_t acc = 0, i;
    unsigned fill = 0;
    for (i = 0; i < n; i++) {
        uint64_t s = symbols[i];
        acc |= s << fill;
        fill += bits;
        if (fill >= 64) {
            for (int b = 0; b < 8; b++) *dst++ = (uint8_t)(acc >> (8 * b));
            fill -= 64;
            acc = fill ? s >> (bits - fill) : 0;
        }
    }
    if (fill) for (int b = 0; b < 8; b++) *dst++ = (uint8_t)(acc >> (8 * b));
}

void hippo_unpack_symbols(const uint8_t *src, uint64_t n, uint32_t bits, uint32_t *out) {
    uint64_t mask = (bits == 64) ? ~(uint64_t)0 : ((((uint64_t)1) << bits) - 1);
    uint64_t acc = 0, i;
    unsigned have = 0;
    for (i = 0; i < n; i++) {
        if (have >= bits) {
            out[i] = (uint32_t)(acc & mask);
            acc >>= bits;
            have -= bits;
        } else {
            uint64_t w = rd64(src);
            src += 8;
            uint64_t v = (acc | (w << have)) & mask;
            out[i] = (uint32_t)v;
            unsigned used = bits - have; /* bits taken from w, 1..32 */
            acc = (used == 64) ? 0 : (w >> used);
            have = 64 - used;
        }
    }
}
