// wstune example: a work-group reduction. Sums n ints: each work-item adds
// IPT elements (strided by the NDRange, so neighbours read neighbours), the
// work-group adds its work-items' sums in local memory (a tree that works for
// any group size), and one work-item per group adds the group's sum to the
// result with an atomic. The result is ReadWrite: wstune restores it to its
// initial 0 before every run.
__kernel void reduce_sum(const int n, const __global int* in, __global int* result, __local int* scratch) {
  const int lid = (int)get_local_id(0);
  const int gid = (int)get_global_id(0);
  const int stride = (int)get_global_size(0);
  int sum = 0;
  for (int k = 0; k < IPT; k++) {
    const int idx = gid + k * stride;
    if (idx < n) sum += in[idx];
  }
  scratch[lid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = (int)get_local_size(0); s > 1;) {
    const int h = (s + 1) / 2;  // (half is an OpenCL C type)
    if (lid < s - h) scratch[lid] += scratch[lid + h];
    barrier(CLK_LOCAL_MEM_FENCE);
    s = h;
  }
  if (lid == 0) atomic_add(result, scratch[0]);
}
