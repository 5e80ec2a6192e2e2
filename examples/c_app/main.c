/* A C99 OpenCL app using wstune's C API (wstune/wstune.h): it builds an
 * in-place SAXPY (y = a*x + y), lets wstune tune it online when nothing is
 * stored (trials never change y), launches it once and checks that y holds
 * exactly one launch's result.
 * Build:  cc -std=c99 main.c $(pkg-config --cflags --libs wstune-c) -o c_app
 *   or:   cmake -S examples/c_app -B build -DCMAKE_PREFIX_PATH=PREFIX
 * Usage:  c_app [N]   (default 100000; the database is $WSTUNE_DB or the default) */
#include <stdio.h>
#include <stdlib.h>

#include <wstune/wstune.h>

static const char* kSource =
    "__kernel void saxpy(float a, __global const float* x, __global float* y) {\n"
    "  const size_t i = get_global_id(0);\n"
    "  y[i] = a * x[i] + y[i];\n"
    "}\n";

static int fail(const char* what, int code) {
  fprintf(stderr, "c_app: %s failed (%d): %s\n", what, code, wstune_last_error());
  return 1;
}

/* The first device of the first platform that has one. */
static cl_device_id first_device(void) {
  cl_platform_id platforms[8];
  cl_uint np = 0;
  cl_device_id dev = NULL;
  if (clGetPlatformIDs(8, platforms, &np) != CL_SUCCESS) return NULL;
  for (cl_uint p = 0; p < np && !dev; ++p)
    if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS) dev = NULL;
  return dev;
}

int main(int argc, char** argv) {
  const size_t n = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 100000;
  cl_int err = CL_SUCCESS;
  cl_device_id dev = first_device();
  if (!dev) return fail("finding an OpenCL device", -1);
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
  cl_program prog = clCreateProgramWithSource(ctx, 1, &kSource, NULL, &err);
  if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS) return fail("clBuildProgram", -11);
  cl_kernel k = clCreateKernel(prog, "saxpy", &err);
  float* x = malloc(n * sizeof(float));
  float* y = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; ++i) x[i] = (float)(i % 1000), y[i] = 1.0f;
  cl_mem bx = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof(float), x, &err);
  cl_mem by = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof(float), y, &err);
  const float a = 3.0f;
  clSetKernelArg(k, 0, sizeof a, &a);
  clSetKernelArg(k, 1, sizeof bx, &bx);

  wstune_tuner* t = wstune_open_online(NULL, 8, 1000);
  if (!t) return fail("wstune_open_online", WSTUNE_STORE_ERROR);
  int rc = wstune_set_arg_buffer(t, k, 2, by); /* y is written: wstune restores it after trials */
  if (rc != 0) return fail("wstune_set_arg_buffer", rc);
  size_t global[1] = {n}, local[1] = {0};
  if ((rc = wstune_launch(t, q, k, 1, global, NULL)) != 0) return fail("wstune_launch", rc);
  if ((rc = wstune_local_size(t, q, k, 1, global, local)) != 0) return fail("wstune_local_size", rc);
  clEnqueueReadBuffer(q, by, CL_TRUE, 0, n * sizeof(float), y, 0, NULL, NULL);
  for (size_t i = 0; i < n; ++i) {
    if (y[i] != a * x[i] + 1.0f) {
      fprintf(stderr, "c_app: wrong result at %zu: %g\n", i, (double)y[i]);
      return 1;
    }
  }
  /* Bad input is a status code and a message, not a crash. */
  if (wstune_launch(t, q, k, 4, global, NULL) != WSTUNE_USAGE_ERROR) return fail("rejecting work_dim 4", -1);
  printf("wstune %s: saxpy %zu local %zu (%s), result verified\n", wstune_version(), n, local[0], wstune_last_level(t));
  wstune_close(t);
  clReleaseMemObject(bx), clReleaseMemObject(by), clReleaseKernel(k), clReleaseProgram(prog);
  clReleaseCommandQueue(q), clReleaseContext(ctx);
  free(x), free(y);
  return 0;
}
