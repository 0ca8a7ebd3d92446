/*
 * util.c -- status strings, aligned allocation, the broadword select table, CPU feature detection
 * and kernel selection.
 */
#include "hippo_internal.h"

const char *hippo_strerror(int status) {
    switch (status) {
    case HIPPO_OK: return "ok";
    case HIPPO_EINVAL: return "invalid argument";
    case HIPPO_ERANGE: return "position, rank or count out of range";
    case HIPPO_ENOMEM: return "out of memory";
    case HIPPO_ECORRUPT: return "corrupt or truncated serialized data";
    case HIPPO_EVERSION: return "unsupported serialized format version";
    case HIPPO_EEMPTY: return "structure is empty";
    case HIPPO_EINTERNAL: return "internal invariant violated";
    default: return "unknown status";
    }
}

void *hippo_aligned_alloc(size_t bytes) {
    if (bytes > SIZE_MAX - 64 - sizeof(void *)) return NULL;
    unsigned char *raw = (unsigned char *)malloc(bytes + 64 + sizeof(void *));
    if (!raw) return NULL;
    uintptr_t a = ((uintptr_t)(raw + sizeof(void *)) + 63u) & ~(uintptr_t)63u;
    ((void **)a)[-1] = raw;
    return (void *)a;
}

void hippo_aligned_free(void *p) {
    if (p) free(((void **)p)[-1]);
}

int hippo_gather_bytes(const uint32_t *ids, uint64_t n, const uint8_t *table, const uint32_t *offsets,
                       uint64_t ntable, uint8_t *out, uint64_t capacity, uint64_t *out_needed) {
    if (!out_needed || (n && (!ids || !offsets || !table)) || (capacity && !out)) return HIPPO_EINVAL;
    for (uint64_t i = 0; i < n; i++) {
        if (ids[i] >= ntable) {
            *out_needed = i;
            return HIPPO_ERANGE;
        }
    }
    /* one pass: copy while the output has room, count what the rest needs */
    uint64_t w = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t t = ids[i], a = offsets[t], len = offsets[t + 1] - a;
        if (HIPPO_UNLIKELY(offsets[t + 1] <= a)) {
            *out_needed = i;
            return HIPPO_ERANGE;
        }
        if (w + len <= capacity) memcpy(out + w, table + a, len);
        w += len;
    }
    *out_needed = w;
    return HIPPO_OK;
}

/* hippo_select_in_byte[b * 8 + k] = position of the (k+1)-th set bit of byte b (0 if absent). */
const uint8_t hippo_select_in_byte[256 * 8] = {
#include "select_table.inc"
};

/* ---- CPU detection ---------------------------------------------------------------------------- */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HIPPO_X86 1
#endif

int hippo_best_kernel(void) {
#ifdef HIPPO_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vpopcntdq") &&
        __builtin_cpu_supports("avx512bw"))
        return HIPPO_KERNEL_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt")) return HIPPO_KERNEL_AVX2;
#endif
    return HIPPO_KERNEL_PORTABLE;
}

/* -1 until the first query; then the active kernel. Plain int: a benign race at first use resolves
 * to the same value in every thread. */
static volatile int g_kernel = -1;

int hippo_kernel_current(void) {
    int k = g_kernel;
    if (HIPPO_UNLIKELY(k < 0)) {
        const char *env = getenv("HIPPO_FORCE_PORTABLE");
        if (env && env[0] && !(env[0] == '0' && env[1] == 0))
            k = HIPPO_KERNEL_PORTABLE;
        else
            k = hippo_best_kernel();
        g_kernel = k;
    }
    return k;
}

int hippo_active_kernel(void) { return hippo_kernel_current(); }

int hippo_set_kernel(int kernel) {
    if (kernel < HIPPO_KERNEL_PORTABLE || kernel > HIPPO_KERNEL_AVX512) return HIPPO_EINVAL;
    if (kernel > hippo_best_kernel()) return HIPPO_EINVAL;
    g_kernel = kernel;
    return HIPPO_OK;
}

const char *hippo_kernel_name(int kernel) {
    switch (kernel) {
    case HIPPO_KERNEL_PORTABLE: return "portable";
    case HIPPO_KERNEL_AVX2: return "avx2";
    case HIPPO_KERNEL_AVX512: return "avx512_vpopcntdq";
    default: return "unknown";
    }
}
