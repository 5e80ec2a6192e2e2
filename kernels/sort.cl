// wstune kernel: float sort by bitonic sorting network (Batcher 1968).
// A block of n floats is uploaded into a buffer of P = 2^ceil(log2 n) (at
// least 2) floats whose rest the host fills with +INFINITY on the device
// (clEnqueueFillBuffer); the host then launches this step kernel
// log2(P)·(log2(P)+1)/2 times with P/2 work-items each: for k = 2, 4, ...,
// P and j = k/2, ..., 1.
// Work-item i compares the pair (l, l + j) with l = 2j·(i / j) + i mod j and
// orders it ascending when (l & k) == 0, descending otherwise. After the
// last step the first n elements are the block sorted ascending.
__kernel void bitonic_step(__global float* a, const uint j, const uint k) {
  const uint i = get_global_id(0);
  const uint l = ((i & ~(j - 1u)) << 1) | (i & (j - 1u));
  const uint r = l + j;
  const float x = a[l];
  const float y = a[r];
  const bool ascending = (l & k) == 0u;
  if ((x > y) == ascending) {
    a[l] = y;
    a[r] = x;
  }
}
