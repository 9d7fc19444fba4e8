/* Native kernels of the vector stages' point searches (lots/scatter.py). */
#include "tfnative.h"

#include <math.h>

/* Nearest point of its own group for each query: scatter._nearest_dense and
 * scatter.SampleBlocks.nearest, bit for bit. The distance is (qx - px)^2 + (qy - py)^2 with
 * each square rounded before the sum (the numpy code's dx *= dx; dy *= dy; dx += dy), and
 * the answer is the lowest index of the smallest distance, as np.argmin: the first NaN wins
 * when there is one. A group without points answers its p_start, as the numpy code's padded
 * search does (callers never ask: every group with queries has points).
 *
 * q: (nq, 2) float64; q_group: (nq,) int64; pts: (P, 2) float64; p_start, p_count: (G,)
 * int64; out: (nq,) int64, global indices into pts. */
/* One query against points p[0 .. c-1] (c >= 1): the index of the first smallest distance,
 * or of the first NaN. */
static int64_t nearest_one(double qx, double qy, const double *p, int64_t c)
{
    double dx = qx - p[0], dy = qy - p[1];
    dx *= dx;
    dy *= dy;
    double best = dx + dy;
    int64_t at = 0;
    if (best != best)
        return 0;
    for (int64_t j = 1; j < c; j++) {
        double ex = qx - p[2 * j], ey = qy - p[2 * j + 1];
        ex *= ex;
        ey *= ey;
        const double d = ex + ey;
        if (d < best) {
            best = d;
            at = j;
        } else if (d != d) {                  /* argmin: the first NaN is the minimum */
            return j;
        }
    }
    return at;
}

/* The lowest index of the smallest distance of one query, in the branch-free form the
 * compiler keeps in registers: best and at updated by selects. */
#define TF_STEP(qx, qy, best, at)                                  \
    do {                                                           \
        double ex_ = (qx) - px, ey_ = (qy) - py;                   \
        ex_ *= ex_;                                                \
        ey_ *= ey_;                                                \
        const double d_ = ex_ + ey_;                               \
        nan |= d_ != d_;                                           \
        const int less_ = d_ < (best);                             \
        (best) = less_ ? d_ : (best);                              \
        (at) = less_ ? j : (at);                                   \
    } while (0)

TF_EXPORT void tf_nearest_in_groups(const double *q, const int64_t *q_group, int64_t nq,
                                    const double *pts, const int64_t *p_start,
                                    const int64_t *p_count, int64_t *out)
{
    int64_t i = 0;
    while (i < nq) {
        const int64_t g = q_group[i];
        const int64_t s = p_start[g], c = p_count[g];
        /* the run of queries of this group (the relaxation's samples come group by group) */
        int64_t e = i + 1;
        while (e < nq && q_group[e] == g)
            e++;
        if (c <= 0) {
            for (; i < e; i++)
                out[i] = s;
            continue;
        }
        const double *p = pts + 2 * s;
        /* four queries side by side: independent chains of compares, the same answers (a
         * group of queries that meets a NaN is answered again one by one, by nearest_one) */
        for (; i + 4 <= e; i += 4) {
            const double ax = q[2 * i], ay = q[2 * i + 1], bx = q[2 * i + 2], by = q[2 * i + 3];
            const double cx = q[2 * i + 4], cy = q[2 * i + 5], dx = q[2 * i + 6], dy = q[2 * i + 7];
            double ba = INFINITY, bb = INFINITY, bc = INFINITY, bd = INFINITY;
            int64_t ta = 0, tb = 0, tc = 0, td = 0;
            int nan = 0;
            for (int64_t j = 0; j < c; j++) {
                const double px = p[2 * j], py = p[2 * j + 1];
                TF_STEP(ax, ay, ba, ta);
                TF_STEP(bx, by, bb, tb);
                TF_STEP(cx, cy, bc, tc);
                TF_STEP(dx, dy, bd, td);
            }
            if (nan) {
                for (int l = 0; l < 4; l++)
                    out[i + l] = s + nearest_one(q[2 * (i + l)], q[2 * (i + l) + 1], p, c);
            } else {
                /* no NaN: every distance is below INFINITY or equal to it; a query whose
                 * distances are all infinite keeps index 0, as argmin */
                out[i] = s + ta;
                out[i + 1] = s + tb;
                out[i + 2] = s + tc;
                out[i + 3] = s + td;
            }
        }
        for (; i < e; i++)
            out[i] = s + nearest_one(q[2 * i], q[2 * i + 1], p, c);
    }
}

/* Even-odd parity of each point's crossings with the edges of its slab: region._slot_parity,
 * bit for bit. Per edge the crossing abscissa is ax + ((py - ay) * dx) / dy, rounded at each
 * step as the numpy code's buffers are; the edge counts where (ay > py) != (by > py) and
 * px < that abscissa (NaN compares false, as in numpy).
 *
 * px, py: (n,) float64; row: (n,) int64, each point's slab; table: (slabs, w, 5) float64,
 * per slab and edge slot (ax, ay, by, bx - ax, by - ay); out: (n,) uint8, 1 where odd. */
TF_EXPORT void tf_slot_parity(const double *px, const double *py, const int64_t *row,
                              int64_t n, const double *table, int64_t w, uint8_t *out)
{
    for (int64_t i = 0; i < n; i++) {
        const double x = px[i], y = py[i];
        const double *e = table + row[i] * w * 5;
        int odd = 0;
        for (int64_t s = 0; s < w; s++, e += 5) {
            const int straddle = (e[1] > y) != (e[2] > y);
            double t = y - e[1];
            t = t * e[3];
            t = t / e[4];
            t = e[0] + t;
            odd ^= straddle & (x < t);
        }
        out[i] = (uint8_t)odd;
    }
}
