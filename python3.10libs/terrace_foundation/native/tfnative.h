/* Shared by the native kernels' C files (see tfnative.c). */
#ifndef TFNATIVE_H
#define TFNATIVE_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define TF_EXPORT __declspec(dllexport)
#else
#define TF_EXPORT __attribute__((visibility("default")))
#endif

#endif
