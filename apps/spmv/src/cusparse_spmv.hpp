// The vendor baseline: cuSPARSE SpMV on the same CSR arrays (CSR ALG1 and ALG2).
#pragma once

#include <apiary/sparse/views.hpp>

#include <cuda_runtime_api.h>
#include <cusparse.h>

#include <memory>
#include <string>

namespace apiary::spmv {

enum class CusparseAlg { alg1, alg2 };
const char* name(CusparseAlg alg);

template <class T>
class CusparseSpmv {
 public:
  CusparseSpmv(sparse::CsrView<T> a, T* x, T* y, CusparseAlg alg, cudaStream_t stream = nullptr);
  ~CusparseSpmv();
  CusparseSpmv(const CusparseSpmv&) = delete;
  CusparseSpmv& operator=(const CusparseSpmv&) = delete;
  void run();  // y = A x

 private:
  cusparseHandle_t handle_ = nullptr;
  cusparseSpMatDescr_t mat_ = nullptr;
  cusparseDnVecDescr_t x_ = nullptr, y_ = nullptr;
  cusparseSpMVAlg_t alg_;
  void* buffer_ = nullptr;
  T alpha_ = 1, beta_ = 0;
};

}  // namespace apiary::spmv
