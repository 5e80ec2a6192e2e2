// wstune example: a 2-D 5-point stencil on a W x H float grid (row-major):
// out = 5*c - north - south - east - west inside, out = c on the border.
// Each work-item computes a WPTX x WPTY block of outputs; the NDRange is
// rounded up to a multiple of the local size, so work-items outside the grid
// return at once (the kernel guards its bounds: wstune.GuardsBounds).
__kernel void stencil5(const int W, const int H, const __global float* in, __global float* out) {
  const int x0 = (int)get_global_id(0) * WPTX;
  const int y0 = (int)get_global_id(1) * WPTY;
  for (int dy = 0; dy < WPTY; dy++) {
    const int y = y0 + dy;
    if (y >= H) return;
    for (int dx = 0; dx < WPTX; dx++) {
      const int x = x0 + dx;
      if (x >= W) break;
      const size_t i = (size_t)y * W + x;
      const float c = in[i];
      if (x == 0 || y == 0 || x == W - 1 || y == H - 1) {
        out[i] = c;
      } else {
        out[i] = 5.0f * c - in[i - W] - in[i + W] - in[i - 1] - in[i + 1];
      }
    }
  }
}
