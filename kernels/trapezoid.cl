// wstune kernel: trapezoidal-rule quadrature of f(x) = 4 / (1 + x^2) over
// [0, 1], whose exact integral is pi. The interval is cut into
// n_total * steps sub-intervals of width h; work-item g (global, i0 + local
// index) integrates the `steps` sub-intervals starting at g * steps * h and
// writes its partial sum. The host adds the partials in double precision.
inline float f(const float x) { return 4.0f / (1.0f + x * x); }

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
