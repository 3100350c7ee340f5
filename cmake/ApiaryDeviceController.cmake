# apiary_enable_device_controller(<target>)
#   The persistent device controller scheduler (Scheduler::device_controller and
#   device_controller_wave) launches kernels from the GPU (CUDA dynamic parallelism). That needs
#   relocatable device code and the device runtime library in the target that instantiates
#   apiary::Runtime<Graph>::run(). Targets built without it still compile; choosing the device
#   controller there throws apiary::InputError before the run starts. Call this only for the
#   targets that use the device controller: RDC builds are slower and linking the device runtime
#   can slow other kernels.
include_guard(GLOBAL)

if(NOT CUDAToolkit_FOUND)
  find_package(CUDAToolkit REQUIRED)
endif()

function(apiary_enable_device_controller target)
  if(TARGET CUDA::cudadevrt)
    set(devrt CUDA::cudadevrt)
  else()
    # FindCUDAToolkit before CMake 3.27 has no CUDA::cudadevrt target.
    find_library(APIARY_CUDADEVRT_LIBRARY cudadevrt
      HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_TARGET_DIR}/lib64 ${CUDAToolkit_TARGET_DIR}/lib REQUIRED)
    set(devrt ${APIARY_CUDADEVRT_LIBRARY})
  endif()
  set_target_properties(${target} PROPERTIES
    CUDA_SEPARABLE_COMPILATION ON
    CUDA_RESOLVE_DEVICE_SYMBOLS ON)
  target_link_libraries(${target} PRIVATE ${devrt})
endfunction()
