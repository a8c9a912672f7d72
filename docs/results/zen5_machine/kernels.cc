#include <immintrin.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <cstdint>
#include <algorithm>
#include <vector>
#include <string>
using clk = std::chrono::steady_clock;
static size_t N = 64u << 20;
__attribute__((noinline)) uint64_t or_sse(const char* p, size_t n){ uint64_t acc=0; for(size_t i=0;i<n;i+=64){ __builtin_prefetch(p+i+4096); uint64_t w[8]; memcpy(w,p+i,64); acc|=((w[0]|w[1])|(w[2]|w[3]))|((w[4]|w[5])|(w[6]|w[7]));} return acc;}
__attribute__((noinline)) uint64_t or_sse_nopf(const char* p, size_t n){ uint64_t acc=0; for(size_t i=0;i<n;i+=64){ uint64_t w[8]; memcpy(w,p+i,64); acc|=((w[0]|w[1])|(w[2]|w[3]))|((w[4]|w[5])|(w[6]|w[7]));} return acc;}
__attribute__((noinline,target("avx512f"))) uint64_t or_512(const char* p, size_t n){ __m512i a=_mm512_setzero_si512(), b=a; for(size_t i=0;i<n;i+=128){ a=_mm512_or_si512(a,_mm512_loadu_si512(p+i)); b=_mm512_or_si512(b,_mm512_loadu_si512(p+i+64));} return _mm512_test_epi64_mask(_mm512_or_si512(a,b),_mm512_or_si512(a,b));}
__attribute__((noinline,target("avx2"))) uint64_t or_256(const char* p, size_t n){ __m256i a=_mm256_setzero_si256(), b=a; for(size_t i=0;i<n;i+=64){ __builtin_prefetch(p+i+4096); a=_mm256_or_si256(a,_mm256_loadu_si256((const __m256i*)(p+i))); b=_mm256_or_si256(b,_mm256_loadu_si256((const __m256i*)(p+i+32)));} return !_mm256_testz_si256(_mm256_or_si256(a,b),_mm256_or_si256(a,b));}
__attribute__((noinline)) void nt128(char* d, size_t n){ __m128i z=_mm_set1_epi8(getenv("NZ")?1:0); for(size_t i=0;i<n;i+=64){ _mm_stream_si128((__m128i*)(d+i),z);_mm_stream_si128((__m128i*)(d+i+16),z);_mm_stream_si128((__m128i*)(d+i+32),z);_mm_stream_si128((__m128i*)(d+i+48),z);} _mm_sfence();}
__attribute__((noinline,target("avx512f"))) void nt512(char* d, size_t n){ __m512i z=_mm512_setzero_si512(); for(size_t i=0;i<n;i+=64) _mm512_stream_si512((__m512i*)(d+i),z); _mm_sfence();}
__attribute__((noinline,target("avx2"))) void nt256(char* d, size_t n){ __m256i z=_mm256_setzero_si256(); for(size_t i=0;i<n;i+=64){ _mm256_stream_si256((__m256i*)(d+i),z);_mm256_stream_si256((__m256i*)(d+i+32),z);} _mm_sfence();}
__attribute__((noinline)) void cp128(char* d, const char* s, size_t n){ for(size_t i=0;i<n;i+=64){ __builtin_prefetch(s+i+4096); auto*q=(const __m128i*)(s+i); __m128i a=_mm_loadu_si128(q),b=_mm_loadu_si128(q+1),c=_mm_loadu_si128(q+2),e=_mm_loadu_si128(q+3); _mm_stream_si128((__m128i*)(d+i),a);_mm_stream_si128((__m128i*)(d+i+16),b);_mm_stream_si128((__m128i*)(d+i+32),c);_mm_stream_si128((__m128i*)(d+i+48),e);} _mm_sfence();}
__attribute__((noinline,target("avx512f"))) void cp512(char* d, const char* s, size_t n){ for(size_t i=0;i<n;i+=64){ __builtin_prefetch(s+i+4096); _mm512_stream_si512((__m512i*)(d+i),_mm512_loadu_si512(s+i)); } _mm_sfence();}
__attribute__((noinline)) void stosb(char* d, size_t n){ asm volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(0) : "memory"); }
int main(int argc,char**argv){ std::string what=argv[1]; int reps=atoi(argv[2]);
 char* a=(char*)aligned_alloc(4096,N); char* b=(char*)aligned_alloc(4096,N); memset(a,0,N); memset(b,1,N);
 std::vector<double> t; volatile uint64_t sink=0;
 for(int r=0;r<reps;++r){ auto s=clk::now();
  if(what=="memcpy") memcpy(a,b,N); else if(what=="memset") memset(a,0,N); else if(what=="stosb") stosb(a,N);
  else if(what=="or_sse") sink=or_sse(a,N); else if(what=="or_nopf") sink=or_sse_nopf(a,N); else if(what=="or_256") sink=or_256(a,N); else if(what=="or_512") sink=or_512(a,N);
  else if(what=="nt128") nt128(a,N); else if(what=="nt256") nt256(a,N); else if(what=="nt512") nt512(a,N);
  else if(what=="cp128") cp128(a,b,N); else if(what=="cp512") cp512(a,b,N);
  t.push_back(std::chrono::duration<double,std::milli>(clk::now()-s).count()); }
 std::sort(t.begin(),t.end()); printf("%-8s median %.2f ms min %.2f\n", what.c_str(), t[t.size()/2], t[0]); }
