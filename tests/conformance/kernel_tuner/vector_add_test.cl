__kernel void vector_add(__global float *c, __global float *a, __global float *b, int n) {
    int i = get_group_id(0) * block_size_x + get_local_id(0);
    if (i<n) {
        c[i] = a[i] + b[i];
    }
}
