#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>
#include <pthread.h>
static void pin(int c){cpu_set_t s;CPU_ZERO(&s);CPU_SET(c,&s);pthread_setaffinity_np(pthread_self(),sizeof s,&s);}
int main(){
  const size_t B=256<<10; const int N=2000;
  std::vector<char> slot(B), src(B,3), dst(B);
  std::vector<char> big((size_t)N*B/8+B*2,1); // DRAM source region (N*B/8 = 64 MiB)
  std::atomic<int> turn{0};
  double t_other=0;
  std::thread w([&]{pin(1);for(int i=0;i<N;i++){while(turn.load()!=2*i);memcpy(slot.data(),src.data(),B);src[0]++;turn.store(2*i+1);}});
  pin(0);
  for(int i=0;i<N;i++){while(turn.load()!=2*i+1);auto a=std::chrono::steady_clock::now();memcpy(dst.data(),slot.data(),B);auto b=std::chrono::steady_clock::now();t_other+=std::chrono::duration<double,std::micro>(b-a).count();turn.store(2*i+2);}
  w.join();
  double t_same=0, t_dram=0;
  for(int i=0;i<N;i++){memcpy(slot.data(),src.data(),B);auto a=std::chrono::steady_clock::now();memcpy(dst.data(),slot.data(),B);auto b=std::chrono::steady_clock::now();t_same+=std::chrono::duration<double,std::micro>(b-a).count();}
  size_t off=0;
  for(int i=0;i<N;i++){off=(size_t)(i%256)*B; auto a=std::chrono::steady_clock::now();memcpy(dst.data(),big.data()+off,B);auto b=std::chrono::steady_clock::now();t_dram+=std::chrono::duration<double,std::micro>(b-a).count();}
  printf("copy 256 KiB: just written by other core %.1f us, by this core %.1f us, from DRAM(ish) %.1f us\n",t_other/N,t_same/N,t_dram/N);
}
