// wstune example: a 3-D 7-point stencil on an X x Y x Z float grid (x
// fastest): out = 7*c - the six neighbours inside, out = c on the border.
// A 3-D NDRange; each work-item computes WPTZ points along z. Work-items
// outside the grid return at once (the kernel guards its bounds).
__kernel void stencil7(const int X, const int Y, const int Z, const __global float* in, __global float* out) {
  const int x = (int)get_global_id(0);
  const int y = (int)get_global_id(1);
  const int z0 = (int)get_global_id(2) * WPTZ;
  if (x >= X || y >= Y) return;
  const size_t plane = (size_t)X * Y;
  for (int dz = 0; dz < WPTZ; dz++) {
    const int z = z0 + dz;
    if (z >= Z) return;
    const size_t i = (size_t)z * plane + (size_t)y * X + x;
    const float c = in[i];
    if (x == 0 || y == 0 || z == 0 || x == X - 1 || y == Y - 1 || z == Z - 1) {
      out[i] = c;
    } else {
      out[i] = 7.0f * c - in[i - 1] - in[i + 1] - in[i - X] - in[i + X] - in[i - plane] - in[i + plane];
    }
  }
}
