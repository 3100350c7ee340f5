#include "cusparse_spmv.hpp"

#include <apiary/cuda_check.hpp>
#include <apiary/error.hpp>

#include <type_traits>

namespace apiary::spmv {

namespace {
void check(cusparseStatus_t status, const char* call) {
  if (status != CUSPARSE_STATUS_SUCCESS)
    throw CudaError(std::string("cuSPARSE error ") + cusparseGetErrorString(status) + " in " + call);
}
#define APIARY_CUSPARSE(call) check((call), #call)
}  // namespace

const char* name(CusparseAlg alg) { return alg == CusparseAlg::alg1 ? "cusparse_alg1" : "cusparse_alg2"; }

template <class T>
CusparseSpmv<T>::CusparseSpmv(sparse::CsrView<T> a, T* x, T* y, CusparseAlg alg, cudaStream_t stream)
    : alg_(alg == CusparseAlg::alg1 ? CUSPARSE_SPMV_CSR_ALG1 : CUSPARSE_SPMV_CSR_ALG2) {
  constexpr cudaDataType type = std::is_same_v<T, float> ? CUDA_R_32F : CUDA_R_64F;
  APIARY_CUSPARSE(cusparseCreate(&handle_));
  APIARY_CUSPARSE(cusparseSetStream(handle_, stream));
  APIARY_CUSPARSE(cusparseCreateCsr(&mat_, a.rows, a.cols, a.nnz, const_cast<sparse::index_t*>(a.row_offsets),
                                    const_cast<sparse::index_t*>(a.col_indices), const_cast<T*>(a.values),
                                    CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, type));
  APIARY_CUSPARSE(cusparseCreateDnVec(&x_, a.cols, x, type));
  APIARY_CUSPARSE(cusparseCreateDnVec(&y_, a.rows, y, type));
  std::size_t bytes = 0;
  APIARY_CUSPARSE(cusparseSpMV_bufferSize(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha_, mat_, x_, &beta_, y_, type,
                                          alg_, &bytes));
  APIARY_CUDA_CHECK(cudaMalloc(&buffer_, bytes ? bytes : 1));
  // Preprocessing (analysis) once, as an application multiplying repeatedly would.
  APIARY_CUSPARSE(cusparseSpMV_preprocess(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha_, mat_, x_, &beta_, y_, type,
                                          alg_, buffer_));
}

template <class T>
CusparseSpmv<T>::~CusparseSpmv() {
  if (buffer_) cudaFree(buffer_);
  if (x_) cusparseDestroyDnVec(x_);
  if (y_) cusparseDestroyDnVec(y_);
  if (mat_) cusparseDestroySpMat(mat_);
  if (handle_) cusparseDestroy(handle_);
}

template <class T>
void CusparseSpmv<T>::run() {
  constexpr cudaDataType type = std::is_same_v<T, float> ? CUDA_R_32F : CUDA_R_64F;
  APIARY_CUSPARSE(cusparseSpMV(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha_, mat_, x_, &beta_, y_, type, alg_, buffer_));
}

template class CusparseSpmv<float>;
template class CusparseSpmv<double>;

}  // namespace apiary::spmv
