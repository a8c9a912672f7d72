// accumulate: 4-pass (init + 3 combines per window) vs fused one pass, SSE2 vs AVX-512, in-process alternation
#include <immintrin.h>
#include <sys/mman.h>
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <algorithm>
using clk = std::chrono::steady_clock;
static double ms(clk::time_point a, clk::time_point b){ return std::chrono::duration<double,std::milli>(b-a).count(); }
constexpr size_t S = 16u << 20, W = 256u << 10;
__attribute__((noinline)) void init_e(float* __restrict a, const float* __restrict x, size_t n){ for(size_t i=0;i<n;++i) a[i]=x[i]; }
__attribute__((noinline)) void comb_e(float* a, const float* x, size_t n){ for(size_t i=0;i<n;++i) a[i]=a[i]+x[i]; }
void init(float* a, const float* x, size_t n){ for(size_t b=0;b<n;b+=256){ for(size_t l=0;l<256;l+=16) __builtin_prefetch(x+b+l+1024); init_e(a+b,x+b,256);} }
void comb(float* a, const float* x, size_t n){ for(size_t b=0;b<n;b+=256){ for(size_t l=0;l<256;l+=16) __builtin_prefetch(x+b+l+1024); comb_e(a+b,x+b,256);} }
__attribute__((noinline,target("avx512f"))) void comb512(float* a, const float* x, size_t n){ for(size_t i=0;i<n;i+=16){ __builtin_prefetch(x+i+1024); _mm512_store_ps(a+i, _mm512_add_ps(_mm512_load_ps(a+i), _mm512_loadu_ps(x+i))); } }
__attribute__((noinline,target("avx512f"))) void fused512(float* a, const float* x0, const float* x1, const float* x2, const float* x3, size_t n){
  for(size_t i=0;i<n;i+=16){ __builtin_prefetch(x0+i+1024); __builtin_prefetch(x1+i+1024); __builtin_prefetch(x2+i+1024); __builtin_prefetch(x3+i+1024);
    __m512 s=_mm512_loadu_ps(x0+i); s=_mm512_add_ps(s,_mm512_loadu_ps(x1+i)); s=_mm512_add_ps(s,_mm512_loadu_ps(x2+i)); s=_mm512_add_ps(s,_mm512_loadu_ps(x3+i)); _mm512_store_ps(a+i,s);} }
__attribute__((noinline)) void fused(float* a, const float* x0, const float* x1, const float* x2, const float* x3, size_t n){
  for(size_t i=0;i<n;++i){ if(i%16==0){__builtin_prefetch(x0+i+1024); __builtin_prefetch(x1+i+1024); __builtin_prefetch(x2+i+1024); __builtin_prefetch(x3+i+1024);} a[i]=((x0[i]+x1[i])+x2[i])+x3[i]; } }

template<int dummy=0> __attribute__((noinline)) void blockwise(float* a, const float* const* x, int k, size_t n){
  for(size_t b=0;b<n;b+=256){ for(int j=0;j<k;++j) for(size_t l=0;l<256;l+=16) __builtin_prefetch(x[j]+b+l+1024);
    init_e(a+b,x[0]+b,256); for(int j=1;j<k;++j) comb_e(a+b,x[j]+b,256);} }
__attribute__((noinline,target("avx2"))) void init_e2(float* __restrict a, const float* __restrict x, size_t n){ for(size_t i=0;i<n;++i) a[i]=x[i]; }
__attribute__((noinline,target("avx2"))) void comb_e2(float* a, const float* x, size_t n){ for(size_t i=0;i<n;++i) a[i]=a[i]+x[i]; }
__attribute__((noinline,target("avx2"))) void blockwise2(float* a, const float* const* x, int k, size_t n){
  for(size_t b=0;b<n;b+=256){ for(int j=0;j<k;++j) for(size_t l=0;l<256;l+=16) __builtin_prefetch(x[j]+b+l+1024);
    init_e2(a+b,x[0]+b,256); for(int j=1;j<k;++j) comb_e2(a+b,x[j]+b,256);} }
int main(int argc,char**argv){ int reps=atoi(argv[1]);
  float* own=(float*)aligned_alloc(4096,S); for(size_t i=0;i<S/4;++i) own[i]=1;
  float* sh[3]; for(int k=0;k<3;++k){ sh[k]=(float*)mmap(nullptr,S,PROT_READ|PROT_WRITE,MAP_SHARED|MAP_ANONYMOUS,-1,0); for(size_t i=0;i<S/4;++i) sh[k][i]=k+2; }
  float* win=(float*)aligned_alloc(4096,W);
  std::vector<double> t[6]; double chk=0;
  for(int r=0;r<reps;++r){
    auto a=clk::now(); for(size_t o=0;o<S;o+=W){ size_t n=W/4, e=o/4; init(win,own+e,n); for(int k=0;k<3;++k) comb(win,sh[k]+e,n); chk+=win[7]; } t[0].push_back(ms(a,clk::now()));
    a=clk::now(); for(size_t o=0;o<S;o+=W){ size_t n=W/4, e=o/4; init(win,own+e,n); for(int k=0;k<3;++k) comb512(win,sh[k]+e,n); chk+=win[7]; } t[1].push_back(ms(a,clk::now()));
    a=clk::now(); for(size_t o=0;o<S;o+=W){ size_t n=W/4, e=o/4; fused(win,own+e,sh[0]+e,sh[1]+e,sh[2]+e,n); chk+=win[7]; } t[2].push_back(ms(a,clk::now()));
    a=clk::now(); for(size_t o=0;o<S;o+=W){ size_t n=W/4, e=o/4; fused512(win,own+e,sh[0]+e,sh[1]+e,sh[2]+e,n); chk+=win[7]; } t[3].push_back(ms(a,clk::now()));
    a=clk::now(); for(size_t o=0;o<S;o+=W){ size_t n=W/4, e=o/4; const float* xs[4]={own+e,sh[0]+e,sh[1]+e,sh[2]+e}; blockwise(win,xs,4,n); chk+=win[7]; } t[4].push_back(ms(a,clk::now()));
    a=clk::now(); for(size_t o=0;o<S;o+=W){ size_t n=W/4, e=o/4; const float* xs[4]={own+e,sh[0]+e,sh[1]+e,sh[2]+e}; blockwise2(win,xs,4,n); chk+=win[7]; } t[5].push_back(ms(a,clk::now()));
  }
  const char* nm[]={"4pass_sse2","4pass_avx512","fused_sse2","fused_avx512","block_sse2","block_avx2"};
  for(int k=0;k<6;++k){ std::sort(t[k].begin(),t[k].end()); printf("%-13s %.2f  ", nm[k], t[k][reps/2]); } printf(" chk %.0f\n", chk);
}
