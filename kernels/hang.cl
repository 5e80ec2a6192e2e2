// wstune test kernel: never finishes when `forever` is non-zero. Used only by
// tests of the per-trial timeout and isolation; not one of the four kernels.
__kernel void hang(__global float* out, const uint forever) {
  const uint i = get_global_id(0);
  float x = (float)i;
  uint n = 0;
  while (forever != 0u || n < 1u) {
    x = x * 1.000001f + 1.0f;
    ++n;
    if (x < -1.0f) break;  // never true; keeps the loop from being removed
  }
  out[i] = x;
}
