#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <pthread.h>
#include <vector>
#include <cstring>
static void pin(int c){cpu_set_t s;CPU_ZERO(&s);CPU_SET(c,&s);pthread_setaffinity_np(pthread_self(),sizeof s,&s);}
alignas(64) std::atomic<int> flag{0};
int main(){
  const int N=200000;
  std::thread t([&]{pin(1);for(int i=0;i<N;i++){while(flag.load(std::memory_order_acquire)!=2*i+1);flag.store(2*i+2,std::memory_order_release);}});
  pin(0);
  auto t0=std::chrono::steady_clock::now();
  for(int i=0;i<N;i++){flag.store(2*i+1,std::memory_order_release);while(flag.load(std::memory_order_acquire)!=2*i+2);}
  auto t1=std::chrono::steady_clock::now();
  t.join();
  printf("round trip %.1f ns\n",std::chrono::duration<double,std::nano>(t1-t0).count()/N);
  // bandwidth: thread on cpu1 writes 8 MiB buffer, cpu0 reads it (cache-to-cache) vs reads DRAM-cold
  size_t B=8<<20; std::vector<char> buf(B,1), big(512u<<20,1);
  std::atomic<int> go{0};
  double t_c2c=0,t_same=0,t_dram=0; volatile long sink=0;
  for(int rep=0;rep<5;rep++){
    std::thread w([&]{pin(1);memset(buf.data(),rep,B);go.store(1);});
    w.join();
    auto a=std::chrono::steady_clock::now(); long s=0; for(size_t i=0;i<B;i+=64) s+=buf[i]; auto b=std::chrono::steady_clock::now(); sink+=s;
    t_c2c+=std::chrono::duration<double,std::micro>(b-a).count();
    memset(buf.data(),rep,B);
    a=std::chrono::steady_clock::now(); s=0; for(size_t i=0;i<B;i+=64) s+=buf[i]; b=std::chrono::steady_clock::now(); sink+=s;
    t_same+=std::chrono::duration<double,std::micro>(b-a).count();
    size_t off=(size_t)rep*(64u<<20);
    a=std::chrono::steady_clock::now(); s=0; for(size_t i=0;i<B;i+=64) s+=big[off+i]; b=std::chrono::steady_clock::now(); sink+=s;
    t_dram+=std::chrono::duration<double,std::micro>(b-a).count();
  }
  printf("read 8 MiB: written by other cpu %.0f us, by this cpu %.0f us, from DRAM %.0f us\n",t_c2c/5,t_same/5,t_dram/5);
}
