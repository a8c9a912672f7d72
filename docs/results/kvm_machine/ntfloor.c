#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <immintrin.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static void ntcopy(char*d,const char*s,size_t n){for(size_t i=0;i<n;i+=64){__m128i a=_mm_load_si128((const __m128i*)(s+i)),b=_mm_load_si128((const __m128i*)(s+i+16)),c=_mm_load_si128((const __m128i*)(s+i+32)),e=_mm_load_si128((const __m128i*)(s+i+48));_mm_stream_si128((__m128i*)(d+i),a);_mm_stream_si128((__m128i*)(d+i+16),b);_mm_stream_si128((__m128i*)(d+i+32),c);_mm_stream_si128((__m128i*)(d+i+48),e);}_mm_sfence();}
int main(int c,char**v){size_t n=(size_t)atoi(v[1])<<20;char*a=aligned_alloc(64,n),*b=aligned_alloc(64,n);memset(a,1,n);memset(b,2,n);
double m[40],t0;int k=0;for(int i=0;i<20;i++){t0=now();memcpy(b,a,n);m[k++]=now()-t0;t0=now();ntcopy(b,a,n);m[k++]=now()-t0;}
double sm=0,sn=0,bm=1e9,bn=1e9;for(int i=0;i<40;i+=2){sm+=m[i];sn+=m[i+1];if(m[i]<bm)bm=m[i];if(m[i+1]<bn)bn=m[i+1];}
printf("%zu MiB: memcpy mean %.2f best %.2f | stream mean %.2f best %.2f ms\n",n>>20,sm/20e-3,bm*1e3,sn/20e-3,bn*1e3);}
