/* Native kernels of the raster stages (terrain/kernels.py). */
#include "tfnative.h"

#include <math.h>
#include <stdlib.h>

/* terrain.kernels._sweep_fields, bit for bit: one labelled raster sweep of the cone envelope
 * over rows r0, r0 + step, ... (stopping before r1) of fields stored row by row, (W, F, N).
 * Per row and field, with pv / pl the previous row of the sweep (none for the first):
 *   the cell above, then the diagonal ones (left, right), each taken where strictly higher
 *   (pv - wa, pv - wd), with its label;
 *   the row cones: fwd[j] = max_{i<=j}(cur[i] + ramp[i]) - ramp[j] and
 *   bwd[j] = max_{i>=j}(cur[i] + back[i]) - back[j]; the label of the last i <= j where
 *   cur[i] + ramp[i] >= fwd[i] + ramp[i] (else the row's first cell), or, where bwd > fwd,
 *   of the first i >= j where cur[i] + back[i] >= bwd[i] + back[i] (else the row's last);
 *   cur = max(fwd, bwd).
 * Every expression is the numpy code's, rounded at the same steps; no value is NaN or -0.0
 * (see _sweep_fields), so each maximum is the same whichever operand it returns on a tie.
 *
 * v: (W, F, N) float64; lab: (W, F, N) int32 or int64 (the _i32 / _i64 kernel); ramp, back:
 * (F, N) float64. Returns 0, or 2 when memory runs out. */
#define TF_SWEEP_FIELDS(NAME, LT)                                                            \
    TF_EXPORT int64_t NAME(double *v, LT *lab, int64_t wr, int64_t nf, int64_t n, int64_t r0,  \
                           int64_t r1, int64_t step, double wa, double wd, const double *ramp, \
                           const double *back)                                                \
    {                                                                                        \
        (void)wr;                                                                            \
        if (n <= 0 || nf <= 0)                                                               \
            return 0;                                                                        \
        double *fwd = (double *)malloc(sizeof(double) * 2 * (size_t)n);                      \
        int64_t *pos = (int64_t *)malloc(sizeof(int64_t) * 2 * (size_t)n);                   \
        LT *fresh = (LT *)malloc(sizeof(LT) * (size_t)n);                                    \
        if (fwd == NULL || pos == NULL || fresh == NULL) {                                   \
            free(fwd);                                                                       \
            free(pos);                                                                       \
            free(fresh);                                                                     \
            return 2;                                                                        \
        }                                                                                    \
        double *bwd = fwd + n;                                                               \
        int64_t *posb = pos + n;                                                             \
        int64_t prev = -1;                                                                   \
        for (int64_t r = r0; step > 0 ? r < r1 : r > r1; r += step) {                        \
            for (int64_t f = 0; f < nf; f++) {                                               \
                double *cur = v + (r * nf + f) * n;                                          \
                LT *cl = lab + (r * nf + f) * n;                                             \
                const double *rp = ramp + f * n, *bk = back + f * n;                         \
                if (prev >= 0) {                                                             \
                    const double *pv = v + (prev * nf + f) * n;                              \
                    const LT *pl = lab + (prev * nf + f) * n;                                \
                    for (int64_t j = 0; j < n; j++) {                                        \
                        double c = cur[j];                                                   \
                        LT l = cl[j];                                                        \
                        const double t = pv[j] - wa;                                         \
                        if (t > c) {                                                         \
                            c = t;                                                           \
                            l = pl[j];                                                       \
                        }                                                                    \
                        if (j >= 1) {                                                        \
                            const double d = pv[j - 1] - wd;                                 \
                            if (d > c) {                                                     \
                                c = d;                                                       \
                                l = pl[j - 1];                                               \
                            }                                                                \
                        }                                                                    \
                        if (j + 1 < n) {                                                     \
                            const double d = pv[j + 1] - wd;                                 \
                            if (d > c) {                                                     \
                                c = d;                                                       \
                                l = pl[j + 1];                                               \
                            }                                                                \
                        }                                                                    \
                        cur[j] = c;                                                          \
                        cl[j] = l;                                                           \
                    }                                                                        \
                }                                                                            \
                /* forward row cone */                                                       \
                double m = cur[0] + rp[0];                                                   \
                int64_t p = 0;                                                               \
                for (int64_t j = 0; j < n; j++) {                                            \
                    const double vr = cur[j] + rp[j];                                        \
                    if (vr > m)                                                              \
                        m = vr;                                                              \
                    const double fj = m - rp[j];                                             \
                    fwd[j] = fj;                                                             \
                    if (vr >= fj + rp[j])                                                    \
                        p = j;                                                               \
                    pos[j] = p;                                                              \
                }                                                                            \
                /* backward row cone */                                                      \
                m = cur[n - 1] + bk[n - 1];                                                  \
                p = n - 1;                                                                   \
                for (int64_t j = n - 1; j >= 0; j--) {                                       \
                    const double vb = cur[j] + bk[j];                                        \
                    if (vb > m)                                                              \
                        m = vb;                                                              \
                    const double bj = m - bk[j];                                             \
                    bwd[j] = bj;                                                             \
                    if (vb >= bj + bk[j])                                                    \
                        p = j;                                                               \
                    posb[j] = p;                                                             \
                }                                                                            \
                for (int64_t j = 0; j < n; j++) {                                            \
                    const double fj = fwd[j], bj = bwd[j];                                   \
                    fresh[j] = cl[bj > fj ? posb[j] : pos[j]];                               \
                    cur[j] = fj > bj ? fj : bj;                                              \
                }                                                                            \
                for (int64_t j = 0; j < n; j++)                                              \
                    cl[j] = fresh[j];                                                        \
            }                                                                                \
            prev = r;                                                                        \
        }                                                                                    \
        free(fwd);                                                                           \
        free(pos);                                                                           \
        free(fresh);                                                                         \
        return 0;                                                                            \
    }

TF_SWEEP_FIELDS(tf_sweep_fields_i32, int32_t)
TF_SWEEP_FIELDS(tf_sweep_fields_i64, int64_t)
