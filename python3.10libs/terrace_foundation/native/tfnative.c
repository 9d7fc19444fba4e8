/* Terrace Foundation's optional native kernels.
 *
 * Plain C99 functions on flat arrays, loaded with ctypes by native/__init__.py (no Python
 * API, so one build serves every Python that can load it: Houdini's 3.10/3.11 and the
 * system's). Every kernel returns the same bits as the numpy code it stands in for:
 * build.py compiles with -ffp-contract=off (no fused multiply-adds) and never -ffast-math,
 * each floating-point expression keeps the numpy code's order of operations, and
 * tests/native compares each kernel with its numpy twin bit for bit.
 *
 * Adding a kernel: write it in this folder's C file for its stage (tf_<stage>.c; build.py
 * compiles every *.c here into one library), export it with TF_EXPORT, ask for it in the
 * engine with native.kernel(name, restype, *argtypes) next to the numpy code it stands in for
 * (which stays, as the fallback), and add its bit-for-bit test to tests/native. A landed
 * kernel's signature never changes: a new signature is a new name.
 */
#include "tfnative.h"

/* The library's interface version: native/__init__.py refuses a library of another one and
 * falls back to numpy with a warning. Bumped only for a change to every kernel at once (a new
 * calling convention); a new or changed kernel is a new name instead. */
#define TF_NATIVE_ABI 1

TF_EXPORT int64_t tf_abi(void) { return TF_NATIVE_ABI; }
