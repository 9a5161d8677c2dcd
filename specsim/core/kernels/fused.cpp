// Headers: only what the kernels use (ATen's tensor, its four operators, parallel_for) and the pybind11 glue that
// passes tensors to Python. torch/extension.h would bring in the whole C++ frontend (autograd, nn, optim): 36 of the
// 45 s the build took on a 2-core EPYC; with these it takes about 21.
#include <ATen/core/Tensor.h>
#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/silu.h>
#include <ATen/ops/zeros.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/utils/pybind.h>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>
#include <cstdlib>
#include <string>
#if defined(__AMX_TILE__) || defined(__AVX2__)
#include <immintrin.h>
#endif

// exp(x) for x <= 0 as 2^i * 2^f, 2^f by a degree-6 polynomial (relative error about 2e-7). Elementwise,
// so the compiler vectorises it; the same input always gives the same output.
static inline float exp_nonpositive(float x) {
  x = x < -87.f ? -87.f : x;
  const float t = x * 1.4426950408889634f;
  const float whole = std::floor(t);
  const float f = t - whole;
  float p = 1.535336188319500e-4f;
  p = p * f + 1.339887440266574e-3f;
  p = p * f + 9.618437357674640e-3f;
  p = p * f + 5.550332471162809e-2f;
  p = p * f + 2.402264791363012e-1f;
  p = p * f + 6.931472028550421e-1f;
  p = p * f + 1.0f;
  const int32_t bits = (static_cast<int32_t>(whole) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

// q: (B, H, G, N, D) float32, pre-scaled; kt: (B, H, D, L) float32 (keys transposed); v: (B, H, L, D)
// float32; allowed: (B, N, L) bool, or empty for causal (row i sees keys 0 .. L - N + i).
// Per row: each score sums over d in order 0..D-1; the softmax total and the weighted sum of values run
// over the visible keys in key order. Nothing depends on N or on the other rows. Returns (B, H, G, N, D).
at::Tensor attend(at::Tensor q, at::Tensor kt, at::Tensor v, at::Tensor allowed) {
  TORCH_CHECK(q.dtype() == at::kFloat && kt.dtype() == at::kFloat && v.dtype() == at::kFloat);
  q = q.contiguous(); kt = kt.contiguous(); v = v.contiguous();
  const int64_t B = q.size(0), H = q.size(1), G = q.size(2), N = q.size(3), D = q.size(4), L = kt.size(3);
  const bool causal = allowed.numel() == 0;
  at::Tensor mask = causal ? allowed : allowed.to(at::kBool).contiguous();
  auto out = at::empty_like(q);
  const float* qp = q.data_ptr<float>();
  const float* kp = kt.data_ptr<float>();
  const float* vp = v.data_ptr<float>();
  const bool* ap = causal ? nullptr : mask.data_ptr<bool>();
  float* op = out.data_ptr<float>();
  at::parallel_for(0, B * H * G * N, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> w(L);
    for (int64_t row = begin; row < end; ++row) {
      const int64_t i = row % N, bh = row / (G * N), b = bh / H;
      const float* __restrict__ qr = qp + row * D;
      const float* __restrict__ kb = kp + bh * D * L;
      const float* __restrict__ vb = vp + bh * L * D;
      const bool* ar = causal ? nullptr : ap + (b * N + i) * L;
      const int64_t n_keys = causal ? L - N + i + 1 : L;
      float* __restrict__ s = w.data();
      for (int64_t j = 0; j < n_keys; ++j) s[j] = 0.f;
      for (int64_t t = 0; t < D; ++t) {
        const float qt = qr[t];
        const float* __restrict__ krow = kb + t * L;
#pragma GCC ivdep
        for (int64_t j = 0; j < n_keys; ++j) s[j] += qt * krow[j];
      }
      float top = -INFINITY;
      for (int64_t j = 0; j < n_keys; ++j)
        if (!ar || ar[j]) top = s[j] > top ? s[j] : top;
#pragma GCC ivdep
      for (int64_t j = 0; j < n_keys; ++j) s[j] = exp_nonpositive(s[j] - top);
      float total = 0.f;
      for (int64_t j = 0; j < n_keys; ++j)
        if (!ar || ar[j]) total += s[j];
      float* __restrict__ o = op + row * D;
      for (int64_t t = 0; t < D; ++t) o[t] = 0.f;
      for (int64_t j = 0; j < n_keys; ++j) {
        if (ar && !ar[j]) continue;
        const float a = s[j] / total;
        const float* __restrict__ vr = vb + j * D;
#pragma GCC ivdep
        for (int64_t t = 0; t < D; ++t) o[t] += a * vr[t];
      }
    }
  });
  return out;
}

#if defined(__AMX_BF16__) && defined(__AMX_TILE__)
#include <sys/syscall.h>
#include <unistd.h>
// AMX tiles: out^T (16 outputs x 16 rows, float32) += W block (16 outputs x 32 k, bfloat16, read in place) times
// x^T (32 k x 16 rows, packed in pairs). Rows beyond M are zeros; every row of x always sits in a full 16-row
// tile and goes through the same tile instructions in the same k order, so its result never depends on M.
static bool amx_ready() {
  static const bool ok = syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XTILEDATA */) == 0;
  return ok;
}
struct TileConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {0};
  uint16_t colsb[16] = {0};
  uint8_t rows[16] = {0};
};
template <bool Packed>
static void rows_linear_amx(const uint16_t* xp, const uint16_t* wp, float* op, int64_t M, int64_t IN, int64_t OUT) {
  const int64_t ksteps = IN / 32, ctiles = (M + 15) / 16;
  // x^T packed per (column tile, k step): 16 k-pair rows of 16 rows x 2 values, zero padded
  // Kept per calling thread between calls (zeroing a new one on each of a pass's 121 calls was measurable): rows
  // written by an earlier call beyond this call's M are zeroed again, a new shape starts from zeros.
  thread_local std::vector<uint16_t> xb;
  thread_local int64_t shape_ks = -1, shape_ct = -1, filled = 0;
  if (shape_ks != ksteps || shape_ct != ctiles) {
    xb.assign(ctiles * ksteps * 16 * 32, 0);
    shape_ks = ksteps; shape_ct = ctiles; filled = 0;
  }
  for (int64_t m = M; m < filled; ++m)
    for (int64_t k = 0; k < IN; ++k) {
      const int64_t ct = m / 16, col = m % 16, ks = k / 32, kp = (k % 32) / 2;
      xb[((ct * ksteps + ks) * 16 + kp) * 32 + col * 2 + (k % 2)] = 0;
    }
  filled = M;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t k = 0; k < IN; ++k) {
      const int64_t ct = m / 16, col = m % 16, ks = k / 32, kp = (k % 32) / 2;
      xb[((ct * ksteps + ks) * 16 + kp) * 32 + col * 2 + (k % 2)] = xp[m * IN + k];
    }
  // Four blocks of 16 outputs at a time, each in its own accumulator tile, so four chains of tile products run
  // side by side (one chain alone waits on each product's latency). A block's chain is the same instructions in
  // the same k order whichever group it falls in.
  const int64_t blocks = OUT / 16;
  const uint16_t* packed = xb.data();  // the calling thread's buffer (inside the loop, xb would name each thread's own)
  at::parallel_for(0, (blocks + 3) / 4, 1, [&](int64_t begin, int64_t end) {
    TileConfig cfg;
    for (int t = 0; t < 8; ++t) { cfg.rows[t] = 16; cfg.colsb[t] = 64; }
    _tile_loadconfig(&cfg);
    alignas(64) float cbuf[16 * 16];
    auto store = [&](int64_t nb, int64_t ct) {
      for (int64_t col = 0; col < 16 && ct * 16 + col < M; ++col)
        for (int64_t r = 0; r < 16; ++r) op[(ct * 16 + col) * OUT + nb * 16 + r] = cbuf[r * 16 + col];
    };
    const int64_t stride = IN * 2;
    for (int64_t g = begin; g < end; ++g) {
      const int64_t nb0 = g * 4;
      const uint16_t* a = wp + nb0 * 16 * IN;
      for (int64_t ct = 0; ct < ctiles; ++ct) {
        const uint16_t* b = packed + ct * ksteps * 16 * 32;
        if (nb0 + 4 <= blocks) {
          _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
          for (int64_t ks = 0; ks < ksteps; ++ks) {
            _tile_loadd(6, b + ks * 16 * 32, 64);
            if constexpr (Packed) {  // block nb's tile for step ks: 16 rows x 32 k, 1 KB, at (nb * ksteps + ks) KB
              const uint16_t* pk = wp + (nb0 * ksteps + ks) * 512;
              _tile_loadd(4, pk, 64);
              _tile_loadd(5, pk + ksteps * 512, 64);
              _tile_dpbf16ps(0, 4, 6);
              _tile_dpbf16ps(1, 5, 6);
              _tile_loadd(4, pk + 2 * ksteps * 512, 64);
              _tile_loadd(5, pk + 3 * ksteps * 512, 64);
            } else {
              _tile_loadd(4, a + ks * 32, stride);
              _tile_loadd(5, a + 16 * IN + ks * 32, stride);
              _tile_dpbf16ps(0, 4, 6);
              _tile_dpbf16ps(1, 5, 6);
              _tile_loadd(4, a + 32 * IN + ks * 32, stride);
              _tile_loadd(5, a + 48 * IN + ks * 32, stride);
            }
            _tile_dpbf16ps(2, 4, 6);
            _tile_dpbf16ps(3, 5, 6);
          }
          _tile_stored(0, cbuf, 64); store(nb0, ct);
          _tile_stored(1, cbuf, 64); store(nb0 + 1, ct);
          _tile_stored(2, cbuf, 64); store(nb0 + 2, ct);
          _tile_stored(3, cbuf, 64); store(nb0 + 3, ct);
        } else {
          for (int64_t nb = nb0; nb < blocks; ++nb) {
            _tile_zero(0);
            for (int64_t ks = 0; ks < ksteps; ++ks) {
              _tile_loadd(6, b + ks * 16 * 32, 64);
              if constexpr (Packed) _tile_loadd(4, wp + (nb * ksteps + ks) * 512, 64);
              else _tile_loadd(4, wp + nb * 16 * IN + ks * 32, stride);
              _tile_dpbf16ps(0, 4, 6);
            }
            _tile_stored(0, cbuf, 64); store(nb, ct);
          }
        }
      }
    }
    _tile_release();
  });
}
#endif

#if defined(__AVX2__) && defined(__FMA__)
// AVX2 + FMA, bfloat16 weights (a CPU without bfloat16 arithmetic: AMD Zen 2/3, Intel before Cooper Lake).
// A decode pass is bound by reading the weights, so each block of T weight rows is read from memory once,
// widened to float32 (exact: a shift), and meets every row of x while it sits in registers. acc lane l sums
// x[m, k] w[j, k] over k = l, l + 8, ... in k order (one FMA each), then the 8 lanes by a fixed tree. Every
// (row, output) pair runs through the same instructions in the same order whatever M and the blocking, so a
// row's result never depends on how many rows share the pass.
//
// Two things make the extra rows of a verification pass nearly free:
// - the block shape (R rows x T outputs) keeps R x T accumulators side by side, enough to hide the FMA
//   latency, within the 16 vector registers (R x T + T + 1); it is chosen by M, never changing a result;
// - while one block computes, the next block's weights are prefetched, so reading memory and the arithmetic
//   of the extra rows overlap instead of taking turns. Into L2 (_MM_HINT_T1), not L1: prefetches into L1 held the
//   L1's few miss buffers, and the whole target's linears took 14.4-15.3 ms a one-row pass instead of 7.7-9.9
//   (the AVX2 code on a 2-core Zen 4 EPYC, interleaved in one process; not measured on a Zen 3).
#define ALWAYS_INLINE __attribute__((always_inline)) static inline  // inlined, the accumulators stay in registers
static inline __m256 load8(const uint16_t* p) {  // 8 bfloat16 weights widened to float32 (exact: a shift)
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}
static inline __m256 load8(const int8_t* p) {  // 8 int8 weights as float32 (exact); the row's scale comes after
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}
static inline float lanes_sum8(__m256 a) {                    // (l + l+4), then (l + l+2), then (0 + 1)
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}
// W: uint16_t (bfloat16 weights) or int8_t (int8 weights, each output's sum then times its row's scale, sc[j]).
template <int R, int T, typename W>
ALWAYS_INLINE void block_avx2(const float* xp, const W* wp, float* op, int64_t m0, int64_t j0, int64_t nj,
                              int64_t IN, int64_t OUT, const float* sc = nullptr) {
  __m256 acc[R][T];
  for (int r = 0; r < R; ++r) for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
  const W* w[T];
  for (int t = 0; t < T; ++t) w[t] = wp + (j0 + (t < nj ? t : 0)) * IN;
  const W* ahead = wp + (j0 + T) * IN;  // the next block (a prefetch past the end never faults)
  for (int64_t k = 0; k < IN; k += 8) {
    if ((k & 31) == 0)  // one 64-byte line of each of the next block's rows every 32 values
      for (int t = 0; t < T; ++t) _mm_prefetch(reinterpret_cast<const char*>(ahead + t * IN + k), _MM_HINT_T1);
    __m256 wv[T];
    for (int t = 0; t < T; ++t) wv[t] = load8(w[t] + k);
    for (int r = 0; r < R; ++r) {
      const __m256 xv = _mm256_loadu_ps(xp + (m0 + r) * IN + k);
      for (int t = 0; t < T; ++t) acc[r][t] = _mm256_fmadd_ps(xv, wv[t], acc[r][t]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < nj; ++t)
      op[(m0 + r) * OUT + j0 + t] = sc ? lanes_sum8(acc[r][t]) * sc[j0 + t] : lanes_sum8(acc[r][t]);
}
// Every row against one block of T = 2 outputs, in ceil(M / 6) groups of 3 to 6 rows (M >= 5).
template <typename W>
ALWAYS_INLINE void groups_avx2(const float* xp, const W* wp, float* op, int64_t M, int64_t j0, int64_t nj,
                               int64_t IN, int64_t OUT, const float* sc) {
  const int64_t groups = (M + 5) / 6;
  for (int64_t g = 0, m = 0; g < groups; ++g) {
    const int64_t size = (M - m) / (groups - g);  // an even split: sizes differ by at most one
    switch (size) {
      case 6: block_avx2<6, 2>(xp, wp, op, m, j0, nj, IN, OUT, sc); break;
      case 5: block_avx2<5, 2>(xp, wp, op, m, j0, nj, IN, OUT, sc); break;
      case 4: block_avx2<4, 2>(xp, wp, op, m, j0, nj, IN, OUT, sc); break;
      default: block_avx2<3, 2>(xp, wp, op, m, j0, nj, IN, OUT, sc); break;
    }
    m += size;
  }
}
template <int T, typename Block>
static void over_blocks_avx2(int64_t OUT, Block block) {
  at::parallel_for(0, (OUT + T - 1) / T, 64 / T, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) block(b * T, OUT - b * T < T ? OUT - b * T : T);
  });
}
// Block shapes measured on an AMD EPYC (see docs/invariant.md): 1 x 8, 2 x 6, 3 x 4, 4 x 3, then groups x 2.
template <typename W>
static void rows_linear_avx2(const float* x, const W* w, float* o, int64_t M, int64_t IN, int64_t OUT,
                             const float* sc = nullptr) {
  switch (M) {
    case 1: over_blocks_avx2<8>(OUT, [&](int64_t j, int64_t n) { block_avx2<1, 8>(x, w, o, 0, j, n, IN, OUT, sc); });
      break;
    case 2: over_blocks_avx2<6>(OUT, [&](int64_t j, int64_t n) { block_avx2<2, 6>(x, w, o, 0, j, n, IN, OUT, sc); });
      break;
    case 3: over_blocks_avx2<4>(OUT, [&](int64_t j, int64_t n) { block_avx2<3, 4>(x, w, o, 0, j, n, IN, OUT, sc); });
      break;
    case 4: over_blocks_avx2<3>(OUT, [&](int64_t j, int64_t n) { block_avx2<4, 3>(x, w, o, 0, j, n, IN, OUT, sc); });
      break;
    default: over_blocks_avx2<2>(OUT, [&](int64_t j, int64_t n) { groups_avx2(x, w, o, M, j, n, IN, OUT, sc); });
      break;
  }
}
#endif

#if defined(__AVX512BF16__) && defined(__AVX512F__) && defined(__AVX2__) && defined(__FMA__)
// AVX-512 BF16 (AMD Zen 4 and later; Intel Cooper Lake): bfloat16 x and w, IN a multiple of 32. One VDPBF16PS
// multiplies 32 bfloat16 pairs and adds them into 16 float32 lanes: acc lane l += x[k + 2l + 1] w[k + 2l + 1], then
// += x[k + 2l] w[k + 2l] (each product exact in float32, each sum rounded to nearest even), over 32-wide steps of k
// in order; then the 16 lanes by a fixed tree. No widening step, and four times an AVX2 FMA's products per
// instruction, so the arithmetic of a wide pass stays under the reading of the weights far longer than on the AVX2
// route. The blocking is the AVX2 route's (R rows x T outputs side by side in the 32 vector registers), and the
// block after next is prefetched into L2 while this one computes: on a 2-core Zen 4 EPYC the whole target's
// linears then take 10-11 ms a pass at 1 to 9 rows alike, against 12.4-14.3 at one row and 15-17 at nine with the
// next block prefetched into L1 (interleaved in one process; reading 269 MB at about 27 GB/s, where summing a
// 512 MB tensor reaches 33). Every (row, output) pair runs the same instructions in the
// same order whatever M and the blocking, so a row's result never depends on how many rows share the pass.
static inline float lanes_sum16(__m512 a) {  // (l + l+8), then lanes_sum8's tree
  const __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a), 1));
  return lanes_sum8(_mm256_add_ps(_mm512_castps512_ps256(a), hi));
}
template <int R, int T>
ALWAYS_INLINE void block_bf16(const uint16_t* xp, const uint16_t* wp, float* op, int64_t m0, int64_t j0, int64_t nj,
                              int64_t IN, int64_t OUT) {
  __m512 acc[R][T];
  for (int r = 0; r < R; ++r) for (int t = 0; t < T; ++t) acc[r][t] = _mm512_setzero_ps();
  const uint16_t* w[T];
  for (int t = 0; t < T; ++t) w[t] = wp + (j0 + (t < nj ? t : 0)) * IN;
  const uint16_t* ahead = wp + (j0 + 2 * T) * IN;  // the block after next (a prefetch past the end never faults)
  for (int64_t k = 0; k < IN; k += 32) {  // 32 bfloat16 values: one 64-byte line of each weight row
    for (int t = 0; t < T; ++t) _mm_prefetch(reinterpret_cast<const char*>(ahead + t * IN + k), _MM_HINT_T1);
    __m512bh wv[T];
    for (int t = 0; t < T; ++t) wv[t] = (__m512bh)_mm512_loadu_si512(w[t] + k);
    for (int r = 0; r < R; ++r) {
      const __m512bh xv = (__m512bh)_mm512_loadu_si512(xp + (m0 + r) * IN + k);
      for (int t = 0; t < T; ++t) acc[r][t] = _mm512_dpbf16_ps(acc[r][t], xv, wv[t]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < nj; ++t) op[(m0 + r) * OUT + j0 + t] = lanes_sum16(acc[r][t]);
}
// Every row against one block of T = 4 outputs, in ceil(M / 6) groups of 3 to 6 rows (M >= 5).
ALWAYS_INLINE void groups_bf16(const uint16_t* xp, const uint16_t* wp, float* op, int64_t M, int64_t j0, int64_t nj,
                               int64_t IN, int64_t OUT) {
  const int64_t groups = (M + 5) / 6;
  for (int64_t g = 0, m = 0; g < groups; ++g) {
    const int64_t size = (M - m) / (groups - g);  // an even split: sizes differ by at most one
    switch (size) {
      case 6: block_bf16<6, 4>(xp, wp, op, m, j0, nj, IN, OUT); break;
      case 5: block_bf16<5, 4>(xp, wp, op, m, j0, nj, IN, OUT); break;
      case 4: block_bf16<4, 4>(xp, wp, op, m, j0, nj, IN, OUT); break;
      default: block_bf16<3, 4>(xp, wp, op, m, j0, nj, IN, OUT); break;
    }
    m += size;
  }
}
static void rows_linear_bf16(const uint16_t* x, const uint16_t* w, float* o, int64_t M, int64_t IN, int64_t OUT) {
  switch (M) {
    case 1: over_blocks_avx2<8>(OUT, [&](int64_t j, int64_t n) { block_bf16<1, 8>(x, w, o, 0, j, n, IN, OUT); });
      break;
    case 2: over_blocks_avx2<8>(OUT, [&](int64_t j, int64_t n) { block_bf16<2, 8>(x, w, o, 0, j, n, IN, OUT); });
      break;
    case 3: over_blocks_avx2<6>(OUT, [&](int64_t j, int64_t n) { block_bf16<3, 6>(x, w, o, 0, j, n, IN, OUT); });
      break;
    case 4: over_blocks_avx2<5>(OUT, [&](int64_t j, int64_t n) { block_bf16<4, 5>(x, w, o, 0, j, n, IN, OUT); });
      break;
    default: over_blocks_avx2<4>(OUT, [&](int64_t j, int64_t n) { groups_bf16(x, w, o, M, j, n, IN, OUT); });
      break;
  }
}
#define SPECSIM_BF16_ROUTE 1
#endif

std::string linear_path();

// rows_linear on the AMX route with the weights packed in its tile order, (OUT / 16, IN / 32, 16, 32): each block of
// 16 outputs holds its tiles one after another in k order (specsim.core.fused.pack_tiles), so the kernel reads the
// weights as a few sequential streams instead of 16 rows at a time, 1,152 or 3,072 bytes apart; the memory
// prefetchers keep up (measured here: the bundled target's linears 11.0 -> 9.9 ms a pass). The same tile products
// in the same k order as rows_linear, so the same values. x (M, IN) bfloat16; returns float32 (M, OUT).
at::Tensor rows_linear_packed(at::Tensor x, at::Tensor packed) {
  TORCH_CHECK(x.dim() == 2 && packed.dim() == 4 && packed.size(2) == 16 && packed.size(3) == 32
              && x.size(1) == packed.size(1) * 32 && x.scalar_type() == at::kBFloat16
              && packed.scalar_type() == at::kBFloat16 && packed.is_contiguous(),
              "rows_linear_packed: x (M, IN) bfloat16 and tiles (OUT / 16, IN / 32, 16, 32) bfloat16");
  const int64_t M = x.size(0), IN = x.size(1), OUT = packed.size(0) * 16;
  auto out = at::empty({M, OUT}, x.options().dtype(at::kFloat));
#if defined(__AMX_BF16__) && defined(__AMX_TILE__)
  if (amx_ready()) {
    auto xc = x.contiguous();
    rows_linear_amx<true>(reinterpret_cast<const uint16_t*>(xc.data_ptr<at::BFloat16>()),
                          reinterpret_cast<const uint16_t*>(packed.data_ptr<at::BFloat16>()), out.data_ptr<float>(),
                          M, IN, OUT);
    return out;
  }
#endif
  TORCH_CHECK(false, "rows_linear_packed needs the AMX route: ", linear_path());
  return out;
}

// x (M, IN) times w (OUT, IN) transposed, in float32 with reductions fixed per (row, output): a row's result
// does not depend on M or on the thread count. Returns float32 (M, OUT).
at::Tensor rows_linear(at::Tensor x, at::Tensor w) {
  TORCH_CHECK(x.dim() == 2 && w.dim() == 2 && x.size(1) == w.size(1));
  TORCH_CHECK(w.size(1) % 16 == 0, "rows_linear needs in_features divisible by 16");
  w = w.contiguous();
  const int64_t M = x.size(0), IN = x.size(1), OUT = w.size(0);
  auto out = at::empty({M, OUT}, x.options().dtype(at::kFloat));
#if defined(__AMX_BF16__) && defined(__AMX_TILE__)
  if (x.scalar_type() == at::kBFloat16 && w.scalar_type() == at::kBFloat16 && IN % 32 == 0 && OUT % 16 == 0
      && amx_ready()) {
    auto xc = x.contiguous();
    rows_linear_amx<false>(reinterpret_cast<const uint16_t*>(xc.data_ptr<at::BFloat16>()),
                    reinterpret_cast<const uint16_t*>(w.data_ptr<at::BFloat16>()), out.data_ptr<float>(), M, IN, OUT);
    return out;
  }
#endif
#if defined(SPECSIM_BF16_ROUTE)
  if (x.scalar_type() == at::kBFloat16 && w.scalar_type() == at::kBFloat16 && IN % 32 == 0) {
    auto xc = x.contiguous();
    rows_linear_bf16(reinterpret_cast<const uint16_t*>(xc.data_ptr<at::BFloat16>()),
                     reinterpret_cast<const uint16_t*>(w.data_ptr<at::BFloat16>()), out.data_ptr<float>(), M, IN, OUT);
    return out;
  }
#endif
#if defined(__AVX2__) && defined(__FMA__)
  if (w.scalar_type() == at::kBFloat16 && IN % 8 == 0) {
    auto xf = x.to(at::kFloat).contiguous();
    rows_linear_avx2(xf.data_ptr<float>(), reinterpret_cast<const uint16_t*>(w.data_ptr<at::BFloat16>()),
                     out.data_ptr<float>(), M, IN, OUT);
    return out;
  }
#endif
  // Nothing takes it: weights not bfloat16, or a build with neither route (linear_path() then names no route and
  // specsim.core.fused.linear_kernel() never hands this function out; the invariant path keeps the probed stock linears).
  TORCH_CHECK(false, "rows_linear has no route for ", x.scalar_type(), " x ", w.scalar_type(), " (", IN, " -> ",
              OUT, ") on this build: ", linear_path());
  return out;
}

// x (M, IN) float32 times an int8 weight (OUT, IN) transposed, each output's sum times its row's scale (OUT) float32:
// x @ (w * scale[:, None]).T, a quarter of float32's bytes and half of bfloat16's read from memory. The same blocks
// as rows_linear's AVX2 route, so a row's result does not depend on M either. Returns float32 (M, OUT).
at::Tensor rows_linear_q8(at::Tensor x, at::Tensor w, at::Tensor scale) {
  TORCH_CHECK(x.dim() == 2 && w.dim() == 2 && x.size(1) == w.size(1) && w.scalar_type() == at::kChar
              && scale.scalar_type() == at::kFloat && scale.numel() == w.size(0),
              "rows_linear_q8: x (M, IN), w (OUT, IN) int8 and scale (OUT) float32");
  const int64_t M = x.size(0), IN = x.size(1), OUT = w.size(0);
  auto out = at::empty({M, OUT}, x.options().dtype(at::kFloat));
#if defined(__AVX2__) && defined(__FMA__)
  TORCH_CHECK(IN % 8 == 0, "rows_linear_q8 needs in_features divisible by 8");
  auto xf = x.to(at::kFloat).contiguous();
  w = w.contiguous(); scale = scale.contiguous();
  rows_linear_avx2(xf.data_ptr<float>(), w.data_ptr<int8_t>(), out.data_ptr<float>(), M, IN, OUT,
                   scale.data_ptr<float>());
  return out;
#else
  TORCH_CHECK(false, "rows_linear_q8 needs a build with AVX2 and FMA");
  return out;
#endif
}
// Whether rows_linear_q8 runs on this build (AVX2 and FMA).
bool q8_ready() {
#if defined(__AVX2__) && defined(__FMA__)
  return true;
#else
  return false;
#endif
}
// A draft matrix as draft_pass reads it: bfloat16 through rows_linear, or int8 with its rows' scales.
static inline at::Tensor draft_linear(const at::Tensor& x, const at::Tensor& w, const at::Tensor& scale) {
  return w.scalar_type() == at::kChar ? rows_linear_q8(x, w, scale) : rows_linear(x, w);
}

// One pass of a Llama draft (no biases, default RoPE) over n new tokens, the whole pass in one call: the same
// steps as specsim.core.draft_forward.LeanLlama.forward, which is its readable reference (tests compare the two).
// Activations float32, matrices bfloat16 as stored through rows_linear, or int8 through rows_linear_q8 with their
// rows' scales (scales: one tensor per entry of layers, empty for the norms and for bfloat16 matrices; head_scale
// likewise for the head). x: (n, d) embeddings of the new
// tokens; layers: per layer w_in (d), w_qkv, w_o, w_post (d), w_gate_up, w_down; keys, values: (layers, kv
// heads, capacity, head dim), written at positions start .. start + n - 1; cos, sin: (n, head dim) for those
// positions. Returns the logits at the last position, (vocab).
static at::Tensor rms_scaled(const at::Tensor& x, const at::Tensor& w, double eps) {
  const int64_t n = x.size(0), d = x.size(1);
  auto out = at::empty_like(x);
  const float* xp = x.data_ptr<float>();
  const float* wp = w.data_ptr<float>();
  float* op = out.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i) {
    float ss = 0.f;
    for (int64_t j = 0; j < d; ++j) ss += xp[i * d + j] * xp[i * d + j];
    const float r = 1.f / std::sqrt(ss / static_cast<float>(d) + static_cast<float>(eps));
    for (int64_t j = 0; j < d; ++j) op[i * d + j] = wp[j] * (xp[i * d + j] * r);
  }
  return out;
}
static inline void rope_into(const float* in, const float* c, const float* s, float* out, int64_t hd) {
  const int64_t half = hd / 2;
  for (int64_t t = 0; t < hd; ++t) out[t] = in[t] * c[t] + (t < half ? -in[t + half] : in[t - half]) * s[t];
}
at::Tensor draft_pass(at::Tensor x, std::vector<at::Tensor> layers, std::vector<at::Tensor> scales,
                      at::Tensor keys, at::Tensor values, at::Tensor cos, at::Tensor sin, int64_t start,
                      int64_t heads, int64_t kv_heads, double eps, at::Tensor norm, at::Tensor head,
                      at::Tensor head_scale) {
  TORCH_CHECK(x.dtype() == at::kFloat && keys.dtype() == at::kFloat && layers.size() % 6 == 0
              && scales.size() == layers.size());
  TORCH_CHECK(keys.is_contiguous() && values.is_contiguous());
  x = x.contiguous(); cos = cos.contiguous(); sin = sin.contiguous();
  const int64_t n = x.size(0), hd = keys.size(3), cap = keys.size(2);
  const int64_t qw = heads * hd, kvw = kv_heads * hd, group = heads / kv_heads;
  TORCH_CHECK(start + n <= cap, "draft_pass: the cache is too small");
  const float scale = 1.f / std::sqrt(static_cast<float>(hd));
  const float* cp = cos.data_ptr<float>();
  const float* sp = sin.data_ptr<float>();
  std::vector<float> q(hd), w(start + n);
  for (size_t l = 0; l < layers.size() / 6; ++l) {
    const at::Tensor* L = &layers[6 * l];
    const at::Tensor* S = &scales[6 * l];
    auto qkv = draft_linear(rms_scaled(x, L[0], eps), L[1], S[1]);  // (n, qw + 2 kvw)
    const float* qkvp = qkv.data_ptr<float>();
    float* kc = keys.data_ptr<float>() + l * kv_heads * cap * hd;
    float* vc = values.data_ptr<float>() + l * kv_heads * cap * hd;
    for (int64_t i = 0; i < n; ++i) {  // keys rotated by their position, values as they are, into the cache
      const float* row = qkvp + i * (qw + 2 * kvw);
      for (int64_t g = 0; g < kv_heads; ++g) {
        rope_into(row + qw + g * hd, cp + i * hd, sp + i * hd, kc + (g * cap + start + i) * hd, hd);
        std::memcpy(vc + (g * cap + start + i) * hd, row + qw + kvw + g * hd, hd * sizeof(float));
      }
    }
    auto attended = at::zeros({n, qw}, x.options());
    float* ap = attended.data_ptr<float>();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t seen = start + i + 1;  // causal: every cached key and the new ones up to its own position
      for (int64_t h = 0; h < heads; ++h) {
        rope_into(qkvp + i * (qw + 2 * kvw) + h * hd, cp + i * hd, sp + i * hd, q.data(), hd);
        const float* kb = kc + (h / group) * cap * hd;
        const float* vb = vc + (h / group) * cap * hd;
        float top = -INFINITY, total = 0.f;
        for (int64_t j = 0; j < seen; ++j) {
          float dot = 0.f;
          for (int64_t t = 0; t < hd; ++t) dot += q[t] * kb[j * hd + t];
          w[j] = dot * scale;
          top = w[j] > top ? w[j] : top;
        }
        for (int64_t j = 0; j < seen; ++j) { w[j] = std::exp(w[j] - top); total += w[j]; }
        float* o = ap + i * qw + h * hd;
        for (int64_t j = 0; j < seen; ++j) {
          const float a = w[j] / total;
          for (int64_t t = 0; t < hd; ++t) o[t] += a * vb[j * hd + t];
        }
      }
    }
    x = x.add(draft_linear(attended, L[2], S[2]));
    auto gate_up = draft_linear(rms_scaled(x, L[3], eps), L[4], S[4]);  // (n, 2 I): gate, then up
    const int64_t inter = gate_up.size(1) / 2;
    auto act = at::empty({n, inter}, x.options());
    const float* gp = gate_up.data_ptr<float>();
    float* actp = act.data_ptr<float>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < inter; ++j) {
        const float g = gp[i * 2 * inter + j];
        actp[i * inter + j] = g / (1.f + std::exp(-g)) * gp[i * 2 * inter + inter + j];
      }
    x = x.add(draft_linear(act, L[5], S[5]));
  }
  return draft_linear(rms_scaled(x.slice(0, n - 1, n).contiguous(), norm, eps), head, head_scale)[0];
}

// One decode pass of the position-invariant bfloat16 target over n new tokens (a Llama: no biases, default RoPE,
// SiLU MLP), the whole pass in one call. It computes what transformers' LlamaForCausalLM.forward computes on the
// invariant path (specsim.core.invariant: KernelLinear, invariant_attention), value for value: the linears and the
// attention are the same kernels; the two reductions that are not (each RMSNorm's mean, the SiLU's exp) call the
// same ATen operators on tensors of the same shapes; every other step is elementwise IEEE arithmetic, done here the
// way ATen does it (bfloat16 values widened to float32, one operation, rounded to nearest even). So a pass's logits
// and cache entries are bitwise the forward's (tests/test_target_pass.py compares them for every pass size and
// along whole decodings). What it leaves out is the Python around the about 3,000 operator calls of that forward.
// specsim.core.target_pass is its caller and describes the steps.
// ids: (1, n) int64 token ids; embed: (vocab, d) bfloat16, the embedding table; layers: per layer w_in, w_qkv (q, k
// and v stacked), w_o, w_post, w_gate_up (gate and up stacked), w_down, bfloat16 (a stacked product's outputs are
// each what their own product gives: rows_linear computes every output alone); keys, values: per layer (1, kv
// heads, past, head dim) bfloat16, the cache before the pass; cos, sin: (positions, head dim) bfloat16, the rotary
// tables from position 0 (the model's own rotary module computed them); positions: (n) int64, each new token's
// position (a token tree's node sits at the root's position plus its depth), or empty for past, past + 1, ...;
// allowed: (1, n, past + n) bool, the keys each new token may see (a tree's context and its ancestors), or empty for
// the causal rule. Returns the logits of the last `keep`
// positions (all when keep is 0), (1, keep, vocab) bfloat16, then each layer's keys and then each layer's values with
// the new positions
// appended (what the cache's torch.cat would give).
static inline float bf(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
static inline uint16_t to_bf(float f) {  // c10::BFloat16's round to nearest even
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
  u += ((u >> 16) & 1u) + 0x7fffu;
  return static_cast<uint16_t>(u >> 16);
}
static inline uint16_t* bfp(const at::Tensor& t) { return reinterpret_cast<uint16_t*>(t.data_ptr<at::BFloat16>()); }
// LlamaRMSNorm: w * bf16(x * rsqrt(mean(x^2) + eps)), in float32; the mean is ATen's, over a (1, n, d) tensor.
static at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& w, double eps) {
  const int64_t n = x.size(1), d = x.size(2);
  auto f = at::empty({1, n, d}, x.options().dtype(at::kFloat));
  const uint16_t* xp = bfp(x);
  float* fp = f.data_ptr<float>();
  for (int64_t i = 0; i < n * d; ++i) { const float v = bf(xp[i]); fp[i] = v * v; }  // pow(2): v * v
  auto variance = f.mean(-1, true);
  const float* vp = variance.data_ptr<float>();
  const uint16_t* wp = bfp(w);
  auto out = at::empty_like(x);
  uint16_t* op = bfp(out);
  for (int64_t i = 0; i < n; ++i) {
    const float r = 1.f / std::sqrt(vp[i] + static_cast<float>(eps));
    for (int64_t j = 0; j < d; ++j) op[i * d + j] = to_bf(bf(wp[j]) * bf(to_bf(bf(xp[i * d + j]) * r)));
  }
  return out;
}
// KernelLinear: the row-invariant product in float32, rounded to bfloat16. x: (1, n, in) bfloat16; w: (out, in), or
// packed in tiles (rows_linear_packed).
static at::Tensor kernel_linear(const at::Tensor& x, const at::Tensor& w) {
  const bool tiles = w.dim() == 4;
  const int64_t n = x.size(1), out_features = tiles ? w.size(0) * 16 : w.size(0);
  auto rows = x.reshape({n, x.size(2)});
  auto f = tiles ? rows_linear_packed(rows, w) : rows_linear(rows, w);
  auto out = at::empty({1, n, out_features}, x.options());
  const float* fp = f.data_ptr<float>();
  uint16_t* op = bfp(out);
  for (int64_t i = 0; i < n * out_features; ++i) op[i] = to_bf(fp[i]);
  return out;
}
// apply_rotary_pos_emb for one head's row: bf16(bf16(x cos) + bf16(rotate_half(x) sin)).
static inline void rotary_row(const uint16_t* x, const uint16_t* c, const uint16_t* s, uint16_t* out, int64_t hd) {
  const int64_t half = hd / 2;
  for (int64_t t = 0; t < hd; ++t) {
    const float rotated = t < half ? -bf(x[t + half]) : bf(x[t - half]);
    out[t] = to_bf(bf(to_bf(bf(x[t]) * bf(c[t]))) + bf(to_bf(rotated * bf(s[t]))));
  }
}
static inline void residual_add(uint16_t* x, const uint16_t* y, int64_t count) {
  for (int64_t i = 0; i < count; ++i) x[i] = to_bf(bf(x[i]) + bf(y[i]));
}
std::vector<at::Tensor> target_pass(at::Tensor ids, at::Tensor embed, std::vector<at::Tensor> layers,
                                    std::vector<at::Tensor> keys, std::vector<at::Tensor> values,
                                    at::Tensor cos, at::Tensor sin, int64_t heads, int64_t kv_heads,
                                    double eps, double scaling, at::Tensor norm, at::Tensor head,
                                    int64_t keep, at::Tensor positions, at::Tensor allowed) {
  const int64_t count = static_cast<int64_t>(layers.size()) / 6;
  TORCH_CHECK(layers.size() % 6 == 0 && static_cast<int64_t>(keys.size()) == count
              && static_cast<int64_t>(values.size()) == count && ids.dim() == 2 && ids.size(0) == 1
              && ids.scalar_type() == at::kLong && embed.scalar_type() == at::kBFloat16
              && cos.scalar_type() == at::kBFloat16 && cos.is_contiguous() && sin.is_contiguous());
  const int64_t n = ids.size(1), d = embed.size(1), hd = keys[0].size(3), groups = heads / kv_heads;
  const int64_t past = keys[0].size(2), length = past + n, qw = heads * hd, kvw = kv_heads * hd, row = qw + 2 * kvw;
  TORCH_CHECK(cos.size(0) >= length && cos.size(1) == hd, "target_pass: the rotary table is too short");
  auto x = at::empty({1, n, d}, embed.options());  // the residual stream, from the embedding, updated in place
  ids = ids.contiguous();
  const int64_t* idp = ids.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    TORCH_CHECK(idp[i] >= 0 && idp[i] < embed.size(0), "target_pass: token id out of range");
    std::memcpy(bfp(x) + i * d, bfp(embed) + idp[i] * d, d * 2);
  }
  // Each new token's rows of the rotary tables: its own position's (the model's rotary module gives a position the
  // same row in any pass, so gathering the rows is what computing them for these positions gives).
  std::vector<const uint16_t*> crow(n), srow(n);
  const bool placed = positions.numel() > 0;
  TORCH_CHECK(!placed || (positions.scalar_type() == at::kLong && positions.numel() == n),
              "target_pass: positions must hold one int64 position per new token");
  positions = positions.contiguous();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t at = placed ? positions.data_ptr<int64_t>()[i] : past + i;
    TORCH_CHECK(at >= 0 && at < cos.size(0), "target_pass: a position outside the rotary table");
    crow[i] = bfp(cos) + at * hd;
    srow[i] = bfp(sin) + at * hd;
  }
  TORCH_CHECK(allowed.numel() == 0 || (allowed.scalar_type() == at::kBool && allowed.dim() == 3
                                       && allowed.size(0) == 1 && allowed.size(1) == n && allowed.size(2) == length),
              "target_pass: the mask must be (1, new tokens, past + new tokens) booleans");
  allowed = allowed.contiguous();
  const float scale = static_cast<float>(scaling);
  std::vector<at::Tensor> out(1 + 2 * count);
  auto f32 = x.options().dtype(at::kFloat);
  for (int64_t l = 0; l < count; ++l) {
    const at::Tensor* L = &layers[6 * l];
    // A cropped cache holds views: each head's rows are contiguous, the heads may sit further apart.
    const at::Tensor &pk = keys[l], &pv = values[l];
    TORCH_CHECK(pk.size(2) == past && pv.size(2) == past && pk.size(1) == kv_heads && pv.size(1) == kv_heads
                && (past == 0 || (pk.stride(3) == 1 && pk.stride(2) == hd && pv.stride(3) == 1 && pv.stride(2) == hd)),
                "target_pass: a cache layer is not laid out as transformers' cache");
    auto h = rms_norm(x, L[0], eps);
    auto qkv = kernel_linear(h, L[1]);  // (1, n, qw + 2 kvw): each row's q, then k, then v
    TORCH_CHECK(qkv.size(2) == row, "target_pass: w_qkv has ", qkv.size(2), " outputs, not ", row);
    // The cache grows by the new positions (keys rotated, values as they are), as torch.cat on dim 2 would.
    auto k_all = at::empty({1, kv_heads, length, hd}, x.options());
    auto v_all = at::empty({1, kv_heads, length, hd}, x.options());
    const uint16_t* kp = bfp(qkv) + qw;
    const uint16_t* vp = bfp(qkv) + qw + kvw;
    for (int64_t g = 0; g < kv_heads; ++g) {
      if (past) {
        std::memcpy(bfp(k_all) + g * length * hd, bfp(pk) + g * pk.stride(1), past * hd * 2);
        std::memcpy(bfp(v_all) + g * length * hd, bfp(pv) + g * pv.stride(1), past * hd * 2);
      }
      for (int64_t i = 0; i < n; ++i) {
        rotary_row(kp + i * row + g * hd, crow[i], srow[i], bfp(k_all) + (g * length + past + i) * hd, hd);
        std::memcpy(bfp(v_all) + (g * length + past + i) * hd, vp + i * row + g * hd, hd * 2);
      }
    }
    out[1 + l] = k_all;
    out[1 + count + l] = v_all;
    // invariant_attention: q (rotated, float32, scaled) as (1, kv heads, groups, n, hd), keys transposed.
    auto qs = at::empty({1, kv_heads, groups, n, hd}, f32);
    auto kt = at::empty({1, kv_heads, hd, length}, f32);
    auto vf = at::empty({1, kv_heads, length, hd}, f32);
    std::vector<uint16_t> rotated(hd);
    const uint16_t* qp = bfp(qkv);
    float* qsp = qs.data_ptr<float>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t hh = 0; hh < heads; ++hh) {
        rotary_row(qp + i * row + hh * hd, crow[i], srow[i], rotated.data(), hd);
        float* dst = qsp + (hh * n + i) * hd;  // (kv head, group) = head hh, row i
        for (int64_t t = 0; t < hd; ++t) dst[t] = bf(rotated[t]) * scale;
      }
    const uint16_t* kap = bfp(k_all);
    const uint16_t* vap = bfp(v_all);
    float* ktp = kt.data_ptr<float>();
    float* vfp = vf.data_ptr<float>();
    for (int64_t g = 0; g < kv_heads; ++g)
      for (int64_t j = 0; j < length; ++j)
        for (int64_t t = 0; t < hd; ++t) {
          ktp[(g * hd + t) * length + j] = bf(kap[(g * length + j) * hd + t]);
          vfp[(g * length + j) * hd + t] = bf(vap[(g * length + j) * hd + t]);
        }
    auto att = attend(qs, kt, vf, allowed);  // (1, kv heads, groups, n, hd) float32
    auto merged = at::empty({1, n, qw}, x.options());  // transposed to (1, n, heads * hd), in bfloat16
    const float* ap = att.data_ptr<float>();
    uint16_t* mp = bfp(merged);
    for (int64_t hh = 0; hh < heads; ++hh)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t t = 0; t < hd; ++t) mp[i * qw + hh * hd + t] = to_bf(ap[(hh * n + i) * hd + t]);
    residual_add(bfp(x), bfp(kernel_linear(merged, L[2])), n * d);
    h = rms_norm(x, L[3], eps);
    auto gate_up = kernel_linear(h, L[4]);  // (1, n, 2 inter): each row's gate, then up
    const int64_t inter = gate_up.size(2) / 2;
    auto gate = gate_up.slice(2, 0, inter).contiguous();
    auto act = at::silu(gate);  // ATen's SiLU on the (1, n, inter) bfloat16 gate, as LlamaMLP calls it
    uint16_t* actp = bfp(act);
    const uint16_t* gup = bfp(gate_up);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < inter; ++j)
        actp[i * inter + j] = to_bf(bf(actp[i * inter + j]) * bf(gup[i * 2 * inter + inter + j]));
    residual_add(bfp(x), bfp(kernel_linear(act, L[5])), n * d);
  }
  auto last = rms_norm(x, norm, eps);
  if (keep > 0) last = last.slice(1, -keep).contiguous();
  out[0] = kernel_linear(last, head);
  return out;
}

// Which route rows_linear takes for bfloat16 weights on this build and machine: "amx" (AMX tiles, the kernel
// granted their use) or "avx2" (AVX2 + FMA on a CPU without bfloat16 arithmetic); else why none is taken, and the
// invariant path keeps the probed stock linears.
std::string linear_path() {
#if defined(__AMX_BF16__) && defined(__AMX_TILE__)
  if (amx_ready()) return "amx";
#endif
#if defined(SPECSIM_BF16_ROUTE)
  return "avx512bf16";
#elif defined(__AVX2__) && defined(__FMA__)
  return "avx2";
#else
  return "no linear route: no AVX2 + FMA";
#endif
}

// The module specsim.core.fused loads (torch names it). wrap_pybind_function turns a failed TORCH_CHECK into a Python
// RuntimeError with its message, as load_inline's generated bindings did.
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("attend", torch::wrap_pybind_function(attend), "softmax(q k^T) v row by row, in a fixed order");
  m.def("rows_linear", torch::wrap_pybind_function(rows_linear), "x @ w.T in float32, row-count invariant");
  m.def("rows_linear_packed", torch::wrap_pybind_function(rows_linear_packed), "rows_linear on AMX-packed tiles");
  m.def("rows_linear_q8", torch::wrap_pybind_function(rows_linear_q8), "x @ (w * scale).T, int8 weights, AVX2");
  m.def("q8_ready", torch::wrap_pybind_function(q8_ready), "whether rows_linear_q8 runs on this build");
  m.def("draft_pass", torch::wrap_pybind_function(draft_pass), "one pass of a Llama draft, logits at the last");
  m.def("target_pass", torch::wrap_pybind_function(target_pass), "one decode pass of the invariant target");
  m.def("linear_path", torch::wrap_pybind_function(linear_path), "which route rows_linear takes here");
}
