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

/* terrain.project.rasterize_into / rasterize_labels_into, bit for bit: every cell of the
 * window (rows wr0..wr1-1, columns wc0..wc1-1 of the grid) whose centre passes a triangle's
 * inside test takes the label (and value) of its lowest such triangle; other cells are left
 * as they are. The inside test and the value are the numpy code's per-cell expressions
 * (project._cells), in the same order:
 *   w1 = (w1a * col + w1b * row) + w1k, w2 likewise; inside where w1 >= EPS, w2 >= EPS and
 *   w1 + w2 <= TOP; value = (va * col + vb * row) + vk;
 * tested over each triangle's cell box (r0..r1, c0..c1, clipped to the window), triangles
 * whose determinant is zero (ok == 0) covering nothing. The numpy code finds the same cells
 * by spans with exact error bounds (project._spans); triangles are taken from the last to
 * the first, so the lowest one's write is the one that stays.
 *
 * coef: (9, T) float64 rows w1a, w1b, w1k, w2a, w2b, w2k, va, vb, vk;
 * box: (4, T) int64 rows r0, r1, c0, c1; ok: (T,) uint8; tri_label: (T,) of the label type;
 * label_out: (wr1 - wr0, wc1 - wc0) of the label type; value_out: the same shape, float64,
 * or NULL. covered (4,) int64: the box of the covered cells in window coordinates, first
 * and last row, first and last column (last row -1 when no cell is covered). */
#define TF_RASTERIZE(NAME, LT)                                                               \
    TF_EXPORT void NAME(int64_t nt, const double *coef, const int64_t *box,                  \
                        const uint8_t *ok, const LT *tri_label, int64_t wr0, int64_t wr1,     \
                        int64_t wc0, int64_t wc1, double eps, double top, LT *label_out,     \
                        double *value_out, int64_t *covered)                                 \
    {                                                                                        \
        const int64_t width = wc1 - wc0;                                                     \
        int64_t b0 = wr1 - wr0, b1 = -1, b2 = width, b3 = -1;                                \
        for (int64_t t = nt - 1; t >= 0; t--) {                                              \
            if (!ok[t])                                                                      \
                continue;                                                                    \
            const int64_t ra = box[t] > wr0 ? box[t] : wr0;                                  \
            const int64_t rb = box[nt + t] < wr1 - 1 ? box[nt + t] : wr1 - 1;                \
            const int64_t ca = box[2 * nt + t] > wc0 ? box[2 * nt + t] : wc0;                \
            const int64_t cb = box[3 * nt + t] < wc1 - 1 ? box[3 * nt + t] : wc1 - 1;        \
            if (ra > rb || ca > cb)                                                          \
                continue;                                                                    \
            const double w1a = coef[t], w1b = coef[nt + t], w1k = coef[2 * nt + t];          \
            const double w2a = coef[3 * nt + t], w2b = coef[4 * nt + t];                     \
            const double w2k = coef[5 * nt + t];                                             \
            const double va = coef[6 * nt + t], vb = coef[7 * nt + t], vk = coef[8 * nt + t];\
            const LT label = tri_label[t];                                                   \
            for (int64_t r = ra; r <= rb; r++) {                                             \
                const double rr = (double)r;                                                 \
                const double b1r = w1b * rr, b2r = w2b * rr, vbr = vb * rr;                  \
                LT *lrow = label_out + (r - wr0) * width - wc0;                              \
                double *vrow = value_out ? value_out + (r - wr0) * width - wc0 : NULL;       \
                for (int64_t c = ca; c <= cb; c++) {                                         \
                    const double cc = (double)c;                                             \
                    double w1 = w1a * cc;                                                    \
                    w1 += b1r;                                                               \
                    w1 += w1k;                                                               \
                    double w2 = w2a * cc;                                                    \
                    w2 += b2r;                                                               \
                    w2 += w2k;                                                               \
                    if (!(w1 >= eps) || !(w2 >= eps) || !(w1 + w2 <= top))                   \
                        continue;                                                            \
                    lrow[c] = label;                                                         \
                    if (vrow) {                                                              \
                        double val = va * cc;                                                \
                        val += vbr;                                                          \
                        val += vk;                                                           \
                        vrow[c] = val;                                                       \
                    }                                                                        \
                    if (r - wr0 < b0)                                                        \
                        b0 = r - wr0;                                                        \
                    if (r - wr0 > b1)                                                        \
                        b1 = r - wr0;                                                        \
                    if (c - wc0 < b2)                                                        \
                        b2 = c - wc0;                                                        \
                    if (c - wc0 > b3)                                                        \
                        b3 = c - wc0;                                                        \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
        covered[0] = b0;                                                                     \
        covered[1] = b1;                                                                     \
        covered[2] = b2;                                                                     \
        covered[3] = b3;                                                                     \
    }

TF_RASTERIZE(tf_rasterize_i32, int32_t)
TF_RASTERIZE(tf_rasterize_i64, int64_t)

/* terrain.kernels._slope_into, bit for bit: the slope tangent at rows r0..r1-1 and columns
 * c0..c1-1 of the heights h (m, n), written into out there (at the cells of sel only, when
 * sel is given): central differences times 0.5 inside h, one-sided differences on its edges,
 * 0 along an axis of one cell; hypot of the two (libm's, as numpy's np.hypot); times
 * 1 / cell_size when scale is set.
 * h, out: float64 with row strides hs, os (elements, unit column stride); sel: uint8 (bool)
 * of (r1 - r0, c1 - c0) with row stride ss (bytes), or NULL. */
TF_EXPORT void tf_slope_into(const double *h, int64_t hs, int64_t m, int64_t n, int64_t r0,
                             int64_t r1, int64_t c0, int64_t c1, int64_t scale, double inv,
                             double *out, int64_t os, const uint8_t *sel, int64_t ss)
{
    for (int64_t r = r0; r < r1; r++) {
        const double *row = h + r * hs;
        const double *up = r > 0 ? h + (r - 1) * hs : NULL;
        const double *dn = r + 1 < m ? h + (r + 1) * hs : NULL;
        const uint8_t *srow = sel ? sel + (r - r0) * ss - c0 : NULL;
        double *orow = out + r * os;
        for (int64_t c = c0; c < c1; c++) {
            if (srow && !srow[c])
                continue;
            double gx = 0.0, gy = 0.0;
            if (n >= 2) {
                if (c >= 1 && c + 1 < n) {
                    gx = row[c + 1] - row[c - 1];
                    gx *= 0.5;
                } else if (c == 0) {
                    gx = row[1] - row[0];
                } else {
                    gx = row[n - 1] - row[n - 2];
                }
            }
            if (m >= 2) {
                if (up && dn) {
                    gy = dn[c] - up[c];
                    gy *= 0.5;
                } else if (r == 0) {
                    gy = h[hs + c] - h[c];
                } else {
                    gy = h[(m - 1) * hs + c] - h[(m - 2) * hs + c];
                }
            }
            double t = hypot(gx, gy);
            if (scale)
                t *= inv;
            orow[c] = t;
        }
    }
}
