// wstune kernel: naive single-precision matrix multiply, C = A * B.
// A is M x K, B is K x N, C is M x N, all row-major float32.
// One work-item computes one element of C. x-priority (paper §3.2.3):
// work-items adjacent in x read adjacent columns of B (coalesced) and share
// the same row of A.
//
// Blocks (paper §3.1.1): the NDRange covers columns [x0, x0+gx) and rows
// [y0, y0+gy) of C; the block's output is compact (gy rows of gx floats).
// A holds rows starting at a_row0 (the host sends only the rows a y-block
// needs; a_row0 = 0 when A is whole). The block is gx x gy work-items; the
// NDRange may be rounded up to a multiple of the local size, so work-items
// beyond the block return at once (the kernel guards its bounds).
__kernel void matmul(__global const float* A, __global const float* B, __global float* C,
                     const uint N, const uint K, const uint x0, const uint y0,
                     const uint a_row0, const uint gx, const uint gy) {
  const uint bx = get_global_id(0);
  const uint by = get_global_id(1);
  if (bx >= gx || by >= gy) return;
  const uint col = x0 + bx;
  const uint row = y0 + by;
  __global const float* a = A + (size_t)(row - a_row0) * K;
  float acc = 0.0f;
  for (uint k = 0; k < K; ++k) {
    acc += a[k] * B[(size_t)k * N + col];
  }
  C[(size_t)by * gx + bx] = acc;
}
