/* A C99 OpenCL app that builds the best known kernel for sizes it never
 * tuned, through wstune's C API: wstune_build_best() reads the T1 tuning
 * file of a 5-point stencil, asks the parameter look-up chain for the size,
 * builds the program in the app's context and returns the kernel (the app
 * releases it and its program) with its NDRange. The app runs it, checks the
 * result and prints the level of the answer. With --tune-online a size
 * with no exact stored best is first tuned (at most 8 configurations, 5 s;
 * level "online"). The last line counts this process's programs compiled
 * from source and loaded from the persistent binary cache.
 * Build:  cmake -S examples/best_kernel -B build -DCMAKE_PREFIX_PATH=PREFIX
 * Usage:  best_kernel_c [--tune-online] TUNING_FILE SIZE...   (sizes WxH) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <wstune/wstune.h>

/* Prints what failed with wstune's message and returns 1. */
static int fail(const char* what, int code) {
  fprintf(stderr, "best_kernel_c: %s: error %d: %s\n", what, code, wstune_last_error());
  return 1;
}

/* The first GPU of any platform, else the first platform's default device
 * (PoCL's CPU here): an app tunes where its kernels run, and a GPU machine's
 * first platform may be a CPU's. */
static cl_device_id default_device(void) {
  cl_platform_id platforms[8];
  cl_uint count = 0;
  cl_device_id dev = NULL;
  if (clGetPlatformIDs(8, platforms, &count) != CL_SUCCESS || count == 0) return NULL;
  for (cl_uint i = 0; i < count && i < 8; ++i)
    if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_GPU, 1, &dev, NULL) == CL_SUCCESS) return dev;
  return clGetDeviceIDs(platforms[0], CL_DEVICE_TYPE_DEFAULT, 1, &dev, NULL) == CL_SUCCESS ? dev : NULL;
}

/* Builds, runs and checks one size; 0 when right. */
static int run(wstune_tuner* t, cl_context ctx, cl_command_queue q, const char* file, const char* size) {
  int w = 0, h = 0;
  if (sscanf(size, "%dx%d", &w, &h) != 2 || w < 1 || h < 1) return fail("reading the size WxH", -1);
  wstune_built_kernel b;
  int rc = wstune_build_best(t, q, file, size, &b);
  if (rc != WSTUNE_SUCCESS) return fail("wstune_build_best", rc);
  const size_t n = (size_t)w * (size_t)h;
  float* in = malloc(n * sizeof(float));
  float* out = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; ++i) in[i] = (float)((i * 7) % 13);
  cl_int err = CL_SUCCESS;
  cl_mem bin = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof(float), in, &err);
  cl_mem bout = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, n * sizeof(float), NULL, &err);
  clSetKernelArg(b.kernel, 0, sizeof(int), &w);
  clSetKernelArg(b.kernel, 1, sizeof(int), &h);
  clSetKernelArg(b.kernel, 2, sizeof(cl_mem), &bin);
  clSetKernelArg(b.kernel, 3, sizeof(cl_mem), &bout);
  err = clEnqueueNDRangeKernel(q, b.kernel, b.work_dim, NULL, b.global, b.local[0] ? b.local : NULL, 0, NULL, NULL);
  if (err == CL_SUCCESS) err = clEnqueueReadBuffer(q, bout, CL_TRUE, 0, n * sizeof(float), out, 0, NULL, NULL);
  int bad = err != CL_SUCCESS;
  for (int y = 0; y < h && !bad; ++y)
    for (int x = 0; x < w && !bad; ++x) {
      const size_t i = (size_t)y * (size_t)w + (size_t)x;
      const float e = (x == 0 || y == 0 || x == w - 1 || y == h - 1)
                          ? in[i]
                          : 5.0f * in[i] - in[i - (size_t)w] - in[i + (size_t)w] - in[i - 1] - in[i + 1];
      bad = out[i] != e;
    }
  printf("size %s: level %s, parameters %s, global %zux%zu, local %zux%zu, %s (%.1f ms)", size, b.level, b.params,
         b.global[0], b.global[1], b.local[0], b.local[1], b.compiled ? "compiled" : "not compiled", b.compile_ms);
  if (b.tuned_evaluations) printf(", tuned online: %u configurations", b.tuned_evaluations);
  if (b.note[0]) printf(", note: %s", b.note);
  printf(", %s\n", bad ? "WRONG RESULT" : "result verified");
  clReleaseMemObject(bin);
  clReleaseMemObject(bout);
  clReleaseKernel(b.kernel); /* the caller's references */
  clReleaseProgram(b.program);
  free(in);
  free(out);
  return bad;
}

int main(int argc, char** argv) {
  const int tune_online = argc > 1 && strcmp(argv[1], "--tune-online") == 0;
  const int first = tune_online ? 2 : 1;
  if (argc < first + 2) {
    fprintf(stderr, "usage: best_kernel_c [--tune-online] TUNING_FILE SIZE...  (e.g. stencil5.json 200x300)\n");
    return 2;
  }
  cl_int err = CL_SUCCESS;
  cl_device_id dev = default_device();
  if (!dev) return fail("finding an OpenCL device", -1);
  char name[256] = "";
  clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL);
  printf("device: %s\n", name);
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
  wstune_tuner* t = wstune_open(NULL);
  if (!t) return fail("wstune_open", -1);
  int rc = wstune_set_build_best_online(t, tune_online, 8, 5000);
  if (rc != WSTUNE_SUCCESS) return fail("wstune_set_build_best_online", rc);
  int bad = 0;
  for (int i = first + 1; i < argc; ++i) bad |= run(t, ctx, q, argv[first], argv[i]);
  wstune_close(t);
  unsigned long long compiled = 0, loaded = 0;
  wstune_program_builds(&compiled, &loaded);
  printf("programs compiled from source: %llu, loaded from the binary cache: %llu\n", compiled, loaded);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  return bad;
}
