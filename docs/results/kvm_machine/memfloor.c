#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int c,char**v){size_t n=(size_t)atoi(v[1])<<20;char*a=malloc(n),*b=malloc(n);memset(a,1,n);memset(b,2,n);
double best=1e9,s=0;for(int i=0;i<20;i++){double t=now();memcpy(b,a,n);t=now()-t;s+=t;if(t<best)best=t;}
printf("%zu MiB memcpy: best %.2f ms mean %.2f ms  (%.1f GB/s best)\n",n>>20,best*1e3,s/20*1e3,2*n/best/1e9);}
