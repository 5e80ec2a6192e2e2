// wstune kernel: trapezoidal-rule quadrature of f(x) = 4 / (1 + x^2) over
// [0, 1], whose exact integral is pi. The interval is cut into
// n_total * steps sub-intervals of width h; work-item g (global, i0 + local
// index) integrates the `steps` sub-intervals starting at g * steps * h and
// writes its partial sum. A second kernel, trapezoid_reduce, adds the
// partials of each chunk of TRAP_CHUNK work-items on the device (chunk c
// holds global work-items [c * TRAP_CHUNK, (c + 1) * TRAP_CHUNK); a
// local-memory tree reduction, one work-group per chunk the block touches),
// so the host reads back one value per chunk and adds those in double.
inline float f(const float x) { return 4.0f / (1.0f + x * x); }

// Work-items per reduced value; the host descriptor (kernels/trapezoid.cpp,
// Trapezoid::chunk) uses the same number.
#define TRAP_CHUNK 256

// Work-items at or beyond `count` (an NDRange rounded up to a multiple of the
// local size) return at once.
__kernel void trapezoid(__global float* partial, const uint n_total, const uint steps,
                        const uint i0, const uint count) {
  const uint i = get_global_id(0);
  if (i >= count) return;
  const uint g = i0 + i;
  const float h = 1.0f / ((float)n_total * (float)steps);
  const float a = (float)g * (float)steps * h;
  float sum = 0.5f * (f(a) + f(a + (float)steps * h));
  for (uint s = 1; s < steps; ++s) {
    sum += f(a + (float)s * h);
  }
  partial[i] = sum * h;
}

// Work-group j adds the block's partials (global work-items i0 .. i0+count)
// that fall into chunk i0 / TRAP_CHUNK + j into chunk_sum[j]. Any power-of-two local size up to TRAP_CHUNK works: each
// work-item first adds its strided share of the chunk, then the group halves
// the local array until one value is left (every work-item reaches every
// barrier).
__kernel void trapezoid_reduce(__global const float* partial, __global float* chunk_sum, const uint i0,
                               const uint count) {
  __local float scratch[TRAP_CHUNK];
  const uint lid = get_local_id(0);
  const uint lsize = get_local_size(0);
  const ulong first = ((ulong)(i0 / TRAP_CHUNK) + get_group_id(0)) * TRAP_CHUNK;  // global work-item
  float sum = 0.0f;
  for (uint k = lid; k < TRAP_CHUNK; k += lsize) {
    const ulong g = first + k;
    if (g >= i0 && g < (ulong)i0 + count) sum += partial[g - i0];
  }
  scratch[lid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = lsize / 2; s > 0; s /= 2) {
    if (lid < s) scratch[lid] += scratch[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) chunk_sum[get_group_id(0)] = scratch[0];
}
