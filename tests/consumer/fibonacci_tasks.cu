// A user's own task graph: naive Fibonacci as a task tree (fib(n) spawns fib(n-1) and
// fib(n-2); leaves add to a device counter), checked against the closed form.
#include <apiary/apiary.cuh>

#include <cstdio>

struct Fib {
  struct Item {
    unsigned n;
    unsigned long long* leaves;
  };
  static constexpr unsigned threads = 1;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Fib";
  template <class Ctx>
  __device__ void operator()(apiary::Worker, const Item& item, Ctx& ctx) const {
    if (item.n < 2) {
      atomicAdd(item.leaves, static_cast<unsigned long long>(item.n));
      return;
    }
    ctx.template spawn<Fib>(Item{item.n - 1, item.leaves});
    ctx.template spawn<Fib>(Item{item.n - 2, item.leaves});
  }
};

using Graph = apiary::PhaseQueue<apiary::Phaseless<Fib>>;

int main() {
  try {
    const unsigned n = 25;
    unsigned long long* leaves = nullptr;
    apiary::Config config;
    config.queue_capacity = 1u << 20;
    apiary::Runtime<Graph> rt{config};
    cudaMalloc(&leaves, sizeof(*leaves));
    cudaMemset(leaves, 0, sizeof(*leaves));
    rt.seed<Fib>(std::vector<Fib::Item>{{n, leaves}});
    const apiary::Report report = rt.run();
    unsigned long long result = 0;
    cudaMemcpy(&result, leaves, sizeof(result), cudaMemcpyDeviceToHost);
    unsigned long long a = 0, b = 1;
    for (unsigned i = 0; i < n; ++i) {
      const unsigned long long c = a + b;
      a = b;
      b = c;
    }
    std::printf("fib(%u) = %llu (expected %llu) from %llu tasks\n", n, result, a,
                static_cast<unsigned long long>(report.total_executed));
    return result == a ? 0 : 1;
  } catch (const apiary::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 3;
  }
}
