// wstune example: tiled single-precision matrix multiply C = A * B with
// local-memory tiles, register blocking and vector loads (after the kernels
// of C. Nugteren's "Tutorial: OpenCL SGEMM tuning for Kepler", written anew
// for row-major matrices). A is M x K, B is K x N, C is M x N, row-major.
//
// Tuning parameters (-D, see matmul_tiled.json):
//   TSM, TSN  tile of C per work-group (rows, columns)
//   TSK       depth of the A and B tiles held in local memory
//   WPTM, WPTN  work per work-item: a WPTM x WPTN block of C in registers
//   VW        vector width of the global loads (1, 2, 4, 8)
//   PAD       columns of padding of the local tiles (0 or 1: bank conflicts)
//   UNROLL    unroll factor of the loop over the tile depth
//   PREFETCH  1: the next tiles' global loads are issued into registers
//             before the current tiles are multiplied (their latency hides
//             behind the arithmetic), then stored to local memory; 0: each
//             tile is loaded and stored before its multiply
// The work-group is (TSN/WPTN) x (TSM/WPTM) work-items; the NDRange is
// (N/WPTN) x (M/WPTM). M, N and K are multiples of TSM, TSN and TSK.
#define RTSM (TSM / WPTM)
#define RTSN (TSN / WPTN)
#define THREADS (RTSM * RTSN)
#define LA (TSM * TSK / VW)                  // vector loads of one A tile
#define LB (TSK * TSN / VW)                  // vector loads of one B tile
#define NA ((LA + THREADS - 1) / THREADS)    // per work-item
#define NB ((LB + THREADS - 1) / THREADS)
#ifndef PREFETCH
#define PREFETCH 0
#endif

#if VW == 1
#define VLOAD(p) (*(p))
#define VSTORE(v, p) (*(p) = (v))
typedef float floatv;
#elif VW == 2
#define VLOAD(p) vload2(0, (p))
#define VSTORE(v, p) vstore2((v), 0, (p))
typedef float2 floatv;
#elif VW == 4
#define VLOAD(p) vload4(0, (p))
#define VSTORE(v, p) vstore4((v), 0, (p))
typedef float4 floatv;
#elif VW == 8
#define VLOAD(p) vload8(0, (p))
#define VSTORE(v, p) vstore8((v), 0, (p))
typedef float8 floatv;
#endif

__kernel void matmul_tiled(const int M, const int N, const int K, const __global float* A,
                           const __global float* B, __global float* C) {
  const int tidn = get_local_id(0);  // 0 .. RTSN-1, along the columns of C
  const int tidm = get_local_id(1);  // 0 .. RTSM-1, along the rows of C
  const int tid = tidm * RTSN + tidn;
  const int offsetN = TSN * (int)get_group_id(0);
  // A block of rows (wstune.Split) runs with a global work offset along y:
  // its first tile row is the offset's (get_group_id does not include it).
  const int offsetM = TSM * ((int)get_group_id(1) + (int)get_global_offset(1) / RTSM);

  // A's tile is stored transposed (k major) so both inner loops read rows.
  __local float Asub[TSK][TSM + PAD];
  __local float Bsub[TSK][TSN + PAD];

  float acc[WPTM][WPTN];
  for (int wm = 0; wm < WPTM; wm++)
    for (int wn = 0; wn < WPTN; wn++) acc[wm][wn] = 0.0f;

  // The tiles at depth t: work-item tid loads vectors tid, tid + THREADS, …
  // of A's TSM x TSK (VW consecutive elements along K each) and of B's
  // TSK x TSN (VW along N) into registers (FETCH), then stores them to local
  // memory (STORE_TILES), A's transposed.
  floatv pa[NA], pb[NB];
#define FETCH(t)                                                                                  \
  for (int i = 0; i < NA; i++) {                                                                  \
    const int id = tid + i * THREADS;                                                             \
    if (id < LA) pa[i] = VLOAD(&A[(size_t)(offsetM + id / (TSK / VW)) * K + (t) + (id % (TSK / VW)) * VW]); \
  }                                                                                               \
  for (int i = 0; i < NB; i++) {                                                                  \
    const int id = tid + i * THREADS;                                                             \
    if (id < LB) pb[i] = VLOAD(&B[(size_t)((t) + id / (TSN / VW)) * N + offsetN + (id % (TSN / VW)) * VW]); \
  }
#define STORE_TILES()                                                                             \
  for (int i = 0; i < NA; i++) {                                                                  \
    const int id = tid + i * THREADS;                                                             \
    if (id < LA) {                                                                                \
      float a[VW];                                                                                \
      VSTORE(pa[i], a);                                                                           \
      for (int v = 0; v < VW; v++) Asub[(id % (TSK / VW)) * VW + v][id / (TSK / VW)] = a[v];      \
    }                                                                                             \
  }                                                                                               \
  for (int i = 0; i < NB; i++) {                                                                  \
    const int id = tid + i * THREADS;                                                             \
    if (id < LB) VSTORE(pb[i], &Bsub[id / (TSN / VW)][(id % (TSN / VW)) * VW]);                   \
  }

#if PREFETCH
  FETCH(0)
#endif
  for (int t = 0; t < K; t += TSK) {
#if !PREFETCH
    FETCH(t)
#endif
    STORE_TILES()
    barrier(CLK_LOCAL_MEM_FENCE);
#if PREFETCH
    if (t + TSK < K) {  // the next tiles' loads run while these are multiplied
      FETCH(t + TSK)
    }
#endif
    for (int k0 = 0; k0 < TSK; k0 += UNROLL) {
#pragma unroll
      for (int u = 0; u < UNROLL; u++) {  // a constant trip count: unrolled
        const int k = k0 + u;
        float breg[WPTN];
        for (int wn = 0; wn < WPTN; wn++) breg[wn] = Bsub[k][tidn + wn * RTSN];
        for (int wm = 0; wm < WPTM; wm++) {
          const float a = Asub[k][tidm + wm * RTSM];
          for (int wn = 0; wn < WPTN; wn++) acc[wm][wn] += a * breg[wn];
        }
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int wm = 0; wm < WPTM; wm++)
    for (int wn = 0; wn < WPTN; wn++)
      C[(size_t)(offsetM + tidm + wm * RTSM) * N + offsetN + tidn + wn * RTSN] = acc[wm][wn];
}
