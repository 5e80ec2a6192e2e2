// wstune test kernel (the build pool's tests): scales a vector, PER
// elements per work-item, in one of three equivalent ways; MODE 2 with PER 4
// does not compile (a configuration whose build fails is data).
#if MODE == 2 && PER == 4
#error "MODE 2 does not take PER 4"
#endif
__kernel void pool_scale(const __global float* in, __global float* out) {
  const int base = (int)get_global_id(0) * PER;
  for (int k = 0; k < PER; k++) {
#if MODE == 0
    out[base + k] = 2.0f * in[base + k];
#elif MODE == 1
    out[base + k] = in[base + k] + in[base + k];
#else
    out[base + k] = in[base + k] * 2.0f + 0.0f;
#endif
  }
}
