/* Native kernel of the exact Euclidean distance transform (terrain/edt.py). */
#include "tfnative.h"

#include <math.h>
#include <stdlib.h>

/* edt.distance_transform's integers, bit for bit: for every cell of the (m, n) feature grid,
 * the squared distance in cells to its nearest feature cell and that cell's row and column;
 * ties go to the smaller column, then to the nearer row, the row above on a tie. Pass 1
 * (down the columns): the nearest feature row above and below each cell. Pass 2 (along the
 * rows): Felzenszwalb and Huttenlocher's lower envelope of the parabolas (x - q)^2 + g(q)^2
 * over the columns q holding a feature, with edt._envelope_t's arithmetic: each boundary the
 * float64 quotient (h(q) - h(v)) / (2 (q - v)) of exact integers h = g^2 + q^2, a parabola
 * popped where its boundary is <= the top's, and x given to the last parabola whose boundary
 * lies below x (the smaller q where x is on one).
 * The grid must hold a feature. feat: (m, n) uint8 (bool); d2, row, col: (m, n) of IT, int32
 * (tf_edt_i32: fewer than 2^31 cells and squared distances) or int64 (tf_edt_i64).
 * Returns 0, or 2 when memory runs out. */
#define TF_EDT(NAME, IT)                                                                     \
    TF_EXPORT int64_t NAME(const uint8_t *feat, int64_t m, int64_t n, IT *d2, IT *row,        \
                           IT *col)                                                          \
    {                                                                                        \
        const IT far = (IT)1 << (sizeof(IT) == 4 ? 30 : 40);  /* beyond any row */       \
        IT *above = (IT *)malloc(sizeof(IT) * (size_t)(m * n));                              \
        int64_t *cols = (int64_t *)malloc(sizeof(int64_t) * (size_t)n);                      \
        int64_t *v = (int64_t *)malloc(sizeof(int64_t) * (size_t)n);                         \
        double *z = (double *)malloc(sizeof(double) * (size_t)(n + 1));                      \
        double *h = (double *)malloc(sizeof(double) * (size_t)n);                            \
        int64_t *g = (int64_t *)malloc(sizeof(int64_t) * (size_t)n);                         \
        IT *below = (IT *)malloc(sizeof(IT) * (size_t)n);                                    \
        if (!above || !cols || !v || !z || !h || !g || !below) {                             \
            free(above); free(cols); free(v); free(z); free(h); free(g); free(below);        \
            return 2;                                                                        \
        }                                                                                    \
        /* pass 1a: nearest feature row above (or at) each cell, -far where none */          \
        for (int64_t j = 0; j < n; j++)                                                      \
            above[j] = feat[j] ? 0 : -far;                                                   \
        for (int64_t r = 1; r < m; r++) {                                                    \
            const uint8_t *fr = feat + r * n;                                                \
            const IT *pa = above + (r - 1) * n;                                              \
            IT *ca = above + r * n;                                                          \
            for (int64_t j = 0; j < n; j++)                                                  \
                ca[j] = fr[j] ? (IT)r : pa[j];                                               \
        }                                                                                    \
        /* the columns holding a feature: the last row's "above" is a row there */           \
        int64_t nc = 0;                                                                      \
        for (int64_t j = 0; j < n; j++)                                                      \
            if (above[(m - 1) * n + j] >= 0)                                                 \
                cols[nc++] = j;                                                              \
        /* pass 1b from the last row up, each row's pass 2 after it: the row's nearest       \
         * feature row per column (the row above on a tie) is in `above` by then */          \
        for (int64_t j = 0; j < n; j++)                                                      \
            below[j] = far;                                                                  \
        for (int64_t r = m - 1; r >= 0; r--) {                                               \
            const uint8_t *fr = feat + r * n;                                                \
            IT *ca = above + r * n;                                                          \
            for (int64_t j = 0; j < n; j++) {                                                \
                if (fr[j])                                                                   \
                    below[j] = (IT)r;                                                        \
                if (below[j] - (IT)r < (IT)r - ca[j])                                        \
                    ca[j] = below[j];                                                        \
            }                                                                                \
            for (int64_t t = 0; t < nc; t++) {                                               \
                const int64_t q = cols[t];                                                   \
                const int64_t gq = (int64_t)ca[q] - r;                                       \
                g[q] = gq < 0 ? -gq : gq;                                                    \
                h[q] = (double)(g[q] * g[q] + q * q);                                        \
            }                                                                                \
            int64_t k = 0;                                                                   \
            v[0] = cols[0];                                                                  \
            z[0] = -INFINITY;                                                                \
            for (int64_t t = 1; t < nc; t++) {                                               \
                const int64_t q = cols[t];                                                   \
                double s = (h[q] - h[v[k]]) / (double)(2 * (q - v[k]));                      \
                while (s <= z[k]) {                                                          \
                    k--;                                                                     \
                    s = (h[q] - h[v[k]]) / (double)(2 * (q - v[k]));                          \
                }                                                                            \
                k++;                                                                         \
                v[k] = q;                                                                    \
                z[k] = s;                                                                    \
            }                                                                                \
            int64_t at = 0;                                                                  \
            IT *dr = d2 + r * n, *rw = row + r * n, *cw = col + r * n;                       \
            for (int64_t x = 0; x < n; x++) {                                                \
                while (at < k && z[at + 1] < (double)x)                                      \
                    at++;                                                                    \
                const int64_t q = v[at], dx = x - q;                                         \
                dr[x] = (IT)(g[q] * g[q] + dx * dx);                                         \
                rw[x] = ca[q];                                                               \
                cw[x] = (IT)q;                                                               \
            }                                                                                \
        }                                                                                    \
        free(above); free(cols); free(v); free(z); free(h); free(g); free(below);            \
        return 0;                                                                            \
    }

TF_EDT(tf_edt_i32, int32_t)
TF_EDT(tf_edt_i64, int64_t)
