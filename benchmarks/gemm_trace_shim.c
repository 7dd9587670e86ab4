// gemm_trace_shim.c — an LD_PRELOAD library for benchmarks/bench_gemm_shapes.py: it times every dgemm_ call a
// process makes (gradflow's: the blocks its own dgemm_ cuts a product into, src/linalg/blas_threads.cpp, each on
// one thread; PyTorch's through libblas, split by OpenBLAS inside) and notes whether the process's main thread made
// it; at exit it replays each distinct shape alone, warm, to measure the best rate OpenBLAS reaches on that shape. Nothing here is part of
// gradflow; the script compiles it with `cc -shared -fPIC -O2`.
//   GEMM_TRACE_OUT=path   where to write the log (one JSON object per line); unset: the shim only forwards calls
//   GEMM_TRACE_LIB=path   forward to this library's dgemm_ (e.g. another BLAS) instead of the process's own
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef void (*dgemm_fn)(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
                         const int*, const double*, const int*, const double*, double*, const int*);

enum { kMaxShapes = 4096, kMaxCalls = 1 << 22 };
typedef struct {
  char ta, tb;
  int m, n, k;
} Shape;
static Shape shapes[kMaxShapes];
static int n_shapes;
static int* call_shape;  // the shape of each call, in order
static double* call_secs;
static char* call_main;  // made on the process's main thread (gradflow splits a product between threads itself)
static long n_calls;
static dgemm_fn real_dgemm;
static pthread_mutex_t shapes_lock = PTHREAD_MUTEX_INITIALIZER;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

// The next dgemm_ after this library; in a process that loads its BLAS with dlopen (Python loading PyTorch) that
// library is not in the global scope RTLD_NEXT searches: then OpenBLAS's, or the system BLAS's, by name.
// GEMM_TRACE_LIB=path forwards to that library's dgemm_ instead (another BLAS, for comparison).
static dgemm_fn find_dgemm(void) {
  const char* other = getenv("GEMM_TRACE_LIB");
  if (other && *other) {
    void* h = dlopen(other, RTLD_NOW | RTLD_LOCAL);
    void* g = h ? dlsym(h, "dgemm_") : NULL;
    if (!g) {
      fprintf(stderr, "gemm_trace_shim: no dgemm_ in %s: %s\n", other, dlerror());
      abort();
    }
    return (dgemm_fn)g;
  }
  void* f = dlsym(RTLD_NEXT, "dgemm_");
  const char* libs[] = {"libopenblas.so.0", "libblas.so.3"};
  for (int i = 0; !f && i < 2; ++i) {
    void* h = dlopen(libs[i], RTLD_NOW | RTLD_NOLOAD);
    if (!h) h = dlopen(libs[i], RTLD_NOW);
    if (h) f = dlsym(h, "dgemm_");
  }
  if (!f) {
    fprintf(stderr, "gemm_trace_shim: no dgemm_ to forward to\n");
    abort();
  }
  return (dgemm_fn)f;
}

static int shape_id(char ta, char tb, int m, int n, int k) {
  for (int i = 0; i < n_shapes; ++i)
    if (shapes[i].ta == ta && shapes[i].tb == tb && shapes[i].m == m && shapes[i].n == n && shapes[i].k == k) return i;
  if (n_shapes == kMaxShapes) return -1;
  shapes[n_shapes] = (Shape){ta, tb, m, n, k};
  return n_shapes++;
}

void dgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c,
            const int* ldc) {
  if (!real_dgemm) real_dgemm = find_dgemm();
  const double t0 = now();
  real_dgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  const double t1 = now();
  if (!call_shape) return;
  const long i = __atomic_fetch_add(&n_calls, 1, __ATOMIC_RELAXED);
  if (i >= kMaxCalls) return;
  pthread_mutex_lock(&shapes_lock);
  call_shape[i] = shape_id((char)(*ta & ~32), (char)(*tb & ~32), *m, *n, *k);
  pthread_mutex_unlock(&shapes_lock);
  call_secs[i] = t1 - t0;
  call_main[i] = gettid() == getpid();
}

__attribute__((constructor)) static void start(void) {
  if (!getenv("GEMM_TRACE_OUT")) return;
  call_shape = malloc(sizeof(int) * kMaxCalls);
  call_secs = malloc(sizeof(double) * kMaxCalls);
  call_main = malloc(kMaxCalls);
}

// Each shape alone: 3 warm-up calls, then the best of 10 (operands filled with 1/(i+1), beta = 1 as a += update).
static double best_seconds(const Shape* s) {
  const int rows_a = s->ta == 'N' ? s->m : s->k, cols_a = s->ta == 'N' ? s->k : s->m;
  const int rows_b = s->tb == 'N' ? s->k : s->n, cols_b = s->tb == 'N' ? s->n : s->k;
  double* a = malloc(sizeof(double) * (size_t)rows_a * cols_a);
  double* b = malloc(sizeof(double) * (size_t)rows_b * cols_b);
  double* c = calloc((size_t)s->m * s->n, sizeof(double));
  for (long i = 0; i < (long)rows_a * cols_a; ++i) a[i] = 1.0 / (double)(i % 97 + 1);
  for (long i = 0; i < (long)rows_b * cols_b; ++i) b[i] = 1.0 / (double)(i % 89 + 1);
  const double alpha = 1e-3, beta = 0.5;
  double best = 1e30;
  for (int r = 0; r < 13; ++r) {
    const double t0 = now();
    real_dgemm(&s->ta, &s->tb, &s->m, &s->n, &s->k, &alpha, a, &rows_a, b, &rows_b, &beta, c, &s->m);
    const double t = now() - t0;
    if (r >= 3 && t < best) best = t;
  }
  free(a);
  free(b);
  free(c);
  return best;
}

__attribute__((destructor)) static void finish(void) {
  const char* path = getenv("GEMM_TRACE_OUT");
  if (!path || !call_shape || !real_dgemm) return;
  FILE* f = fopen(path, "w");
  if (!f) return;
  fprintf(f, "{\"calls\": [");
  if (n_calls > kMaxCalls) n_calls = kMaxCalls;
  for (long i = 0; i < n_calls; ++i)
    fprintf(f, "%s[%d, %.9f, %d]", i ? ", " : "", call_shape[i], call_secs[i], call_main[i]);
  fprintf(f, "]}\n");
  for (int i = 0; i < n_shapes; ++i)
    fprintf(f, "{\"shape\": %d, \"ta\": \"%c\", \"tb\": \"%c\", \"m\": %d, \"n\": %d, \"k\": %d, \"alone\": %.9f}\n", i,
            shapes[i].ta, shapes[i].tb, shapes[i].m, shapes[i].n, shapes[i].k, best_seconds(&shapes[i]));
  fclose(f);
}
