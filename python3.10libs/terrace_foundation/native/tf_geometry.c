/* Native kernels of the batched polygon geometry (geometry.py). */
#include "tfnative.h"

#include <stdlib.h>
#include <string.h>

/* geometry.clip_halfplanes, polygon by polygon: each polygon through its H half-planes with
 * the numpy code's arithmetic, bit for bit:
 *   s = (x * nx + y * ny) - offset per vertex (kept where s <= 0, out where s > 0);
 *   an edge crosses where one end has s < 0 and the other s > 0; its cut point is taken from
 *   its lexicographically smaller end a towards b: t = sa / (sa - sb), a + t * (b - a), or
 *   on an axis-parallel line (on_line) the line's own coordinate, offset / normal;
 *   the kept items, slot by slot: the vertex (if kept), then the edge's cut point.
 * A polygon cut to fewer than 3 items, or with every vertex out, or of fewer than 3
 * vertices at its first step, ends with count 0.
 *
 * What depends on the whole batch (the numpy code's working width and its choice between
 * two equivalent paths, which pad dead polygons differently) is left to the caller, from
 * these per-polygon records:
 *   last_live[i]: the last step polygon i entered with vertices (-1: none);
 *   last_count[i]: its item count at that step before counts below 3 become 0;
 *   n_cut[h]: how many polygons step h cut (added to);
 *   few[i]: 1 if polygon i had 1 or 2 vertices, all inside, at its first step (its slots
 *           are left as they came unless a later step of the batch rewrites them).
 * out (n, w, 2): each polygon's final vertices, then its first vertex (count >= 3), or every
 * slot its first item (count 0; `few` polygons: their input slots).
 *
 * poly (n, k, 2), count (n,), normals (n, h, 2), offsets (n, h): float64 / int64, C order.
 * Returns 0, or 1 when a polygon would need more than w slots (the caller then runs numpy),
 * or 2 when memory runs out. */
TF_EXPORT int64_t tf_clip_halfplanes(const double *poly, const int64_t *count, int64_t n,
                                     int64_t k, const double *normals, const double *offsets,
                                     int64_t h, int64_t on_line, int64_t w, double *out,
                                     int64_t *out_count, int64_t *last_live,
                                     int64_t *last_count, int64_t *n_cut, uint8_t *few)
{
    double *buf = (double *)malloc(sizeof(double) * (size_t)(5 * (w > 1 ? w : 1)));
    if (buf == NULL)
        return 2;
    double *xa = buf, *ya = buf + w, *xb = buf + 2 * w, *yb = buf + 3 * w, *s = buf + 4 * w;
    int64_t status = 0;
    for (int64_t i = 0; i < n && status == 0; i++) {
        const double *p = poly + 2 * k * i;
        double *o = out + 2 * w * i;
        int64_t c = count[i];
        few[i] = 0;
        last_live[i] = -1;
        last_count[i] = 0;
        if (c > w) {
            status = 1;
            break;
        }
        for (int64_t j = 0; j < c; j++) {
            xa[j] = p[2 * j];
            ya[j] = p[2 * j + 1];
        }
        /* the value every slot of a dead polygon takes: its first vertex or first item */
        double fx = p[0], fy = p[1];
        int few_here = 0;
        for (int64_t step = 0; step < h && c > 0; step++) {
            const double nx = normals[2 * (h * i + step)], ny = normals[2 * (h * i + step) + 1];
            const double off = offsets[h * i + step];
            int any_out = 0, any_in = 0;
            for (int64_t j = 0; j < c; j++) {
                double v = xa[j] * nx;
                v += ya[j] * ny;
                v -= off;
                s[j] = v;
                if (v > 0.0)
                    any_out = 1;
                else
                    any_in = 1;
            }
            last_live[i] = step;
            if (any_out && !any_in) {          /* every vertex out: dropped */
                last_count[i] = 0;
                fx = xa[0];
                fy = ya[0];
                c = 0;
                break;
            }
            if (!any_out) {                    /* every vertex in: kept as it is */
                last_count[i] = c;
                if (c < 3) {
                    few_here = 1;
                    fx = xa[0];
                    fy = ya[0];
                    c = 0;
                    break;
                }
                continue;
            }
            n_cut[step] += 1;
            /* the line's own coordinate, where it is axis-parallel (geometry._axis_line) */
            double lx = 0.0, ly = 0.0;
            int use_lx = 0, use_ly = 0;
            if (on_line) {
                if (ny == 0.0) {
                    lx = off / nx;
                    use_lx = lx == lx;
                }
                if (nx == 0.0) {
                    ly = off / ny;
                    use_ly = ly == ly;
                }
            }
            int64_t m = 0;
            for (int64_t j = 0; j < c; j++) {
                const int64_t j1 = j == c - 1 ? 0 : j + 1;
                const double s0 = s[j], s1 = s[j1];
                if (s0 <= 0.0) {
                    if (m >= w) {
                        status = 1;
                        break;
                    }
                    xb[m] = xa[j];
                    yb[m] = ya[j];
                    m++;
                }
                if ((s0 < 0.0 && s1 > 0.0) || (s0 > 0.0 && s1 < 0.0)) {
                    double x0 = xa[j], y0 = ya[j], x1 = xa[j1], y1 = ya[j1];
                    const int swap = (x0 > x1) || (x0 == x1 && y0 > y1);
                    const double ax = swap ? x1 : x0, bx = swap ? x0 : x1;
                    const double ay = swap ? y1 : y0, by = swap ? y0 : y1;
                    const double sa = swap ? s1 : s0, sb = swap ? s0 : s1;
                    const double t = sa / (sa - sb);
                    double ipx = bx - ax, ipy = by - ay;
                    ipx = t * ipx;
                    ipy = t * ipy;
                    ipx = ax + ipx;
                    ipy = ay + ipy;
                    if (use_lx)
                        ipx = lx;
                    if (use_ly)
                        ipy = ly;
                    if (m >= w) {
                        status = 1;
                        break;
                    }
                    xb[m] = ipx;
                    yb[m] = ipy;
                    m++;
                }
            }
            if (status)
                break;
            last_count[i] = m;
            double *tx = xa, *ty = ya;
            xa = xb;
            ya = yb;
            xb = tx;
            yb = ty;
            c = m;
            if (c < 3) {
                fx = xa[0];
                fy = ya[0];
                c = 0;
                break;
            }
        }
        if (status)
            break;
        out_count[i] = c;
        few[i] = (uint8_t)few_here;
        if (c > 0) {
            for (int64_t j = 0; j < c; j++) {
                o[2 * j] = xa[j];
                o[2 * j + 1] = ya[j];
            }
            for (int64_t j = c; j < w; j++) {
                o[2 * j] = xa[0];
                o[2 * j + 1] = ya[0];
            }
        } else if (few_here) {
            /* left as the numpy code's partial step leaves it: the input slots (padded with
             * the first vertex) */
            const int64_t kept = count[i];
            for (int64_t j = 0; j < w; j++) {
                const int64_t from = j < kept ? j : 0;
                o[2 * j] = p[2 * from];
                o[2 * j + 1] = p[2 * from + 1];
            }
        } else {
            for (int64_t j = 0; j < w; j++) {
                o[2 * j] = fx;
                o[2 * j + 1] = fy;
            }
        }
    }
    free(buf);
    return status;
}
