// The README's first-screen example, compiled by the build so that it stays correct.
// (tools/check_readme_example.py verifies this file matches the README.)
#include <apiary/apiary.cuh>

#include <cstdio>
#include <vector>

struct Part { float* parts; unsigned table, part; };
struct CreateLeg {                                  // a task type: work item + worker size + shared memory
  using Item = Part;
  static constexpr unsigned threads = 32, shared_bytes = 0;
  static constexpr const char* name = "CreateLeg";
  template <class Ctx> __device__ void operator()(apiary::Worker w, const Item& p, Ctx& ctx) const {
    if (w.rank() == 0) p.parts[p.table * 5 + p.part] = 1.0f;
  }
};
struct AssembleTable {
  using Item = Part;
  static constexpr unsigned threads = 64, shared_bytes = 0;
  static constexpr const char* name = "AssembleTable";
  template <class Ctx> __device__ void operator()(apiary::Worker w, const Item& p, Ctx&) const {
    if (w.rank() == 0) p.parts[p.table * 5 + 4] = p.parts[p.table * 5] + p.parts[p.table * 5 + 3];
  }
};
struct CreateTabletop {                             // tasks spawn tasks while they run
  using Item = Part;
  static constexpr unsigned threads = 64, shared_bytes = 0;
  static constexpr const char* name = "CreateTabletop";
  template <class Ctx> __device__ void operator()(apiary::Worker w, const Item& p, Ctx& ctx) const {
    if (w.rank() < 4) ctx.template spawn<CreateLeg>(Part{p.parts, p.table, w.rank()});
    if (w.rank() == 0) ctx.template spawn<AssembleTable>(p);    // runs in phase 2
  }
};
using Graph = apiary::PhaseQueue<apiary::Phase<CreateLeg, CreateTabletop>,   // phase 1
                                 apiary::Phase<AssembleTable>>;              // phase 2

int main() {
  float* parts; cudaMalloc(&parts, 1000 * 5 * sizeof(float));
  apiary::Runtime<Graph> rt{apiary::Config{}};      // or Config::load("run.json")
  std::vector<Part> tops; for (unsigned t = 0; t < 1000; ++t) tops.push_back({parts, t, 4});
  rt.seed<CreateTabletop>(tops);
  apiary::Report r = rt.run();                      // megakernel scheduler
  std::printf("%s", r.format().c_str());            // tasks per type, time, phases, errors
}
