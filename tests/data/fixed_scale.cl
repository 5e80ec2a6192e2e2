// wstune test kernel: scales a fixed-size vector; each work-item writes PER
// consecutive elements (a T1 file with fixed sizes: no ProblemSize).
__kernel void scale_fixed(const __global float* in, __global float* out) {
  const int base = (int)get_global_id(0) * PER;
  for (int k = 0; k < PER; k++) out[base + k] = 2.0f * in[base + k];
}
