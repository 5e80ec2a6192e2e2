// wstune kernel: bilinear interpolation for image scaling (paper Table 3).
// Scales a single-channel float image in_w x in_h to out_w x out_h, any
// sizes (up or down), with pixel-centre alignment:
//   sx = (ox + 0.5) * in_w / out_w - 0.5, clamped to [0, in_w - 1], same in y.
// One work-item computes one output pixel. y-priority (paper §3.2.3).
//
// Blocks: the NDRange covers output columns [x0, x0+gx) and rows [y0, y0+gy);
// the block's output is compact. `in` holds input rows [in_row0, in_row0 +
// in_rows) (the rows a y-block reads, with a margin). The block is gx x gy
// work-items; work-items beyond it (an NDRange rounded up to a multiple of
// the local size) return at once.
__kernel void bilinear(__global const float* in, __global float* out,
                       const uint in_w, const uint in_h, const uint out_w, const uint out_h,
                       const uint x0, const uint y0, const uint in_row0, const uint in_rows,
                       const uint gx, const uint gy) {
  const uint bx = get_global_id(0);
  const uint by = get_global_id(1);
  if (bx >= gx || by >= gy) return;
  const float scale_x = (float)in_w / (float)out_w;
  const float scale_y = (float)in_h / (float)out_h;
  float sx = ((float)(x0 + bx) + 0.5f) * scale_x - 0.5f;
  float sy = ((float)(y0 + by) + 0.5f) * scale_y - 0.5f;
  sx = clamp(sx, 0.0f, (float)(in_w - 1));
  sy = clamp(sy, 0.0f, (float)(in_h - 1));
  const int ix = (int)sx;
  const int iy = (int)sy;
  const int ix1 = min(ix + 1, (int)in_w - 1);
  const int iy1 = min(iy + 1, (int)in_h - 1);
  const float fx = sx - (float)ix;
  const float fy = sy - (float)iy;
  // Rows relative to the slice; clamp to the slice so a margin error can only
  // show up as a verification failure, never as an out-of-bounds read.
  const int r0 = clamp(iy - (int)in_row0, 0, (int)in_rows - 1);
  const int r1 = clamp(iy1 - (int)in_row0, 0, (int)in_rows - 1);
  const float p00 = in[(size_t)r0 * in_w + ix];
  const float p01 = in[(size_t)r0 * in_w + ix1];
  const float p10 = in[(size_t)r1 * in_w + ix];
  const float p11 = in[(size_t)r1 * in_w + ix1];
  const float top = p00 + (p01 - p00) * fx;
  const float bottom = p10 + (p11 - p10) * fx;
  out[(size_t)by * gx + bx] = top + (bottom - top) * fy;
}
