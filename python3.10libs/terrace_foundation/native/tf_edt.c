/* Native kernel of the exact Euclidean distance transform (terrain/edt.py). */
#include "tfnative.h"

#include <math.h>
#include <stdlib.h>

/* edt.distance_transform's integers, bit for bit: for every cell of the (m, n) feature grid,
 * the squared distance in cells to its nearest feature cell and that cell's flat index
 * (row * n + col); ties go to the smaller column, then to the nearer row, the row above on a
 * tie. Pass 1 (down the columns): the nearest feature row above and below each cell. Pass 2
 * (along the rows): Felzenszwalb and Huttenlocher's lower envelope of the parabolas
 * (x - q)^2 + g(q)^2 over the columns q holding a feature, with edt._envelope_t's
 * arithmetic: each boundary the float64 quotient (h(q) - h(v)) / (2 (q - v)) of exact
 * integers h = g^2 + q^2, a parabola popped where its boundary is <= the top's, and x given
 * to the last parabola whose boundary lies below x (the smaller q where x is on one).
 * The grid must hold a feature. feat: (m, n) uint8 (bool); d2, src: (m, n) int64.
 * Returns 0, or 2 when memory runs out. */
TF_EXPORT int64_t tf_edt(const uint8_t *feat, int64_t m, int64_t n, int64_t *d2,
                         int64_t *src)
{
    const int64_t far = (int64_t)1 << 40;
    int64_t *above = (int64_t *)malloc(sizeof(int64_t) * (size_t)(m * n));
    int64_t *cols = (int64_t *)malloc(sizeof(int64_t) * (size_t)n);
    int64_t *v = (int64_t *)malloc(sizeof(int64_t) * (size_t)n);
    double *z = (double *)malloc(sizeof(double) * (size_t)(n + 1));
    double *h = (double *)malloc(sizeof(double) * (size_t)n);
    int64_t *g = (int64_t *)malloc(sizeof(int64_t) * (size_t)n);
    int64_t *below = (int64_t *)malloc(sizeof(int64_t) * (size_t)n);
    if (!above || !cols || !v || !z || !h || !g || !below) {
        free(above); free(cols); free(v); free(z); free(h); free(g); free(below);
        return 2;
    }
    /* pass 1a: nearest feature row above (or at) each cell, -far where none */
    for (int64_t j = 0; j < n; j++)
        above[j] = feat[j] ? 0 : -far;
    for (int64_t r = 1; r < m; r++) {
        const uint8_t *fr = feat + r * n;
        const int64_t *pa = above + (r - 1) * n;
        int64_t *ca = above + r * n;
        for (int64_t j = 0; j < n; j++)
            ca[j] = fr[j] ? r : pa[j];
    }
    /* the columns holding a feature: the last row's "above" is a row there */
    int64_t nc = 0;
    for (int64_t j = 0; j < n; j++)
        if (above[(m - 1) * n + j] >= 0)
            cols[nc++] = j;
    /* pass 1b, from the last row up, with pass 2 row by row: each row's nearest feature row
     * per column (the nearer of above and below, the row above on a tie) is in `above`
     * when the row's pass 2 runs */
    for (int64_t j = 0; j < n; j++)
        below[j] = far;
    for (int64_t r = m - 1; r >= 0; r--) {
        const uint8_t *fr = feat + r * n;
        int64_t *ca = above + r * n;
        for (int64_t j = 0; j < n; j++) {
            if (fr[j])
                below[j] = r;
            const int64_t da = r - ca[j], db = below[j] - r;
            if (db < da)
                ca[j] = below[j];
        }
        /* pass 2 along row r over the feature columns */
        for (int64_t t = 0; t < nc; t++) {
            const int64_t q = cols[t];
            const int64_t gq = ca[q] - r;
            g[q] = gq < 0 ? -gq : gq;
            h[q] = (double)(g[q] * g[q] + q * q);
        }
        int64_t k = 0;
        v[0] = cols[0];
        z[0] = -INFINITY;
        for (int64_t t = 1; t < nc; t++) {
            const int64_t q = cols[t];
            double s = (h[q] - h[v[k]]) / (double)(2 * (q - v[k]));
            while (s <= z[k]) {
                k--;
                s = (h[q] - h[v[k]]) / (double)(2 * (q - v[k]));
            }
            k++;
            v[k] = q;
            z[k] = s;
        }
        int64_t at = 0;
        int64_t *dr = d2 + r * n, *sr = src + r * n;
        for (int64_t x = 0; x < n; x++) {
            while (at < k && z[at + 1] < (double)x)
                at++;
            const int64_t q = v[at], dx = x - q;
            dr[x] = g[q] * g[q] + dx * dx;
            sr[x] = ca[q] * n + q;
        }
    }
    free(above); free(cols); free(v); free(z); free(h); free(g); free(below);
    return 0;
}

/* tf_edt for grids of fewer than 2^31 cells, in int32 throughout (half the memory traffic):
 * the same squared distances, and the nearest feature's row and column as two arrays.
 * feat: (m, n) uint8; d2, row, col: (m, n) int32. Returns 0, or 2 when memory runs out. */
TF_EXPORT int64_t tf_edt_i32(const uint8_t *feat, int64_t m, int64_t n, int32_t *d2,
                             int32_t *row, int32_t *col)
{
    const int32_t far = (int32_t)1 << 30;
    int32_t *above = (int32_t *)malloc(sizeof(int32_t) * (size_t)(m * n));
    int64_t *cols = (int64_t *)malloc(sizeof(int64_t) * (size_t)n);
    int64_t *v = (int64_t *)malloc(sizeof(int64_t) * (size_t)n);
    double *z = (double *)malloc(sizeof(double) * (size_t)(n + 1));
    double *h = (double *)malloc(sizeof(double) * (size_t)n);
    int64_t *g = (int64_t *)malloc(sizeof(int64_t) * (size_t)n);
    int32_t *below = (int32_t *)malloc(sizeof(int32_t) * (size_t)n);
    if (!above || !cols || !v || !z || !h || !g || !below) {
        free(above); free(cols); free(v); free(z); free(h); free(g); free(below);
        return 2;
    }
    for (int64_t j = 0; j < n; j++)
        above[j] = feat[j] ? 0 : -far;
    for (int64_t r = 1; r < m; r++) {
        const uint8_t *fr = feat + r * n;
        const int32_t *pa = above + (r - 1) * n;
        int32_t *ca = above + r * n;
        const int32_t rr = (int32_t)r;
        for (int64_t j = 0; j < n; j++)
            ca[j] = fr[j] ? rr : pa[j];
    }
    int64_t nc = 0;
    for (int64_t j = 0; j < n; j++)
        if (above[(m - 1) * n + j] >= 0)
            cols[nc++] = j;
    for (int64_t j = 0; j < n; j++)
        below[j] = far;
    for (int64_t r = m - 1; r >= 0; r--) {
        const uint8_t *fr = feat + r * n;
        int32_t *ca = above + r * n;
        const int32_t rr = (int32_t)r;
        for (int64_t j = 0; j < n; j++) {
            if (fr[j])
                below[j] = rr;
            const int32_t da = rr - ca[j], db = below[j] - rr;
            if (db < da)
                ca[j] = below[j];
        }
        for (int64_t t = 0; t < nc; t++) {
            const int64_t q = cols[t];
            const int64_t gq = (int64_t)ca[q] - r;
            g[q] = gq < 0 ? -gq : gq;
            h[q] = (double)(g[q] * g[q] + q * q);
        }
        int64_t k = 0;
        v[0] = cols[0];
        z[0] = -INFINITY;
        for (int64_t t = 1; t < nc; t++) {
            const int64_t q = cols[t];
            double s = (h[q] - h[v[k]]) / (double)(2 * (q - v[k]));
            while (s <= z[k]) {
                k--;
                s = (h[q] - h[v[k]]) / (double)(2 * (q - v[k]));
            }
            k++;
            v[k] = q;
            z[k] = s;
        }
        int64_t at = 0;
        int32_t *dr = d2 + r * n, *rw = row + r * n, *cw = col + r * n;
        for (int64_t x = 0; x < n; x++) {
            while (at < k && z[at + 1] < (double)x)
                at++;
            const int64_t q = v[at], dx = x - q;
            dr[x] = (int32_t)(g[q] * g[q] + dx * dx);
            rw[x] = ca[q];
            cw[x] = (int32_t)q;
        }
    }
    free(above); free(cols); free(v); free(z); free(h); free(g); free(below);
    return 0;
}
