// Host-side errors. Every error says what was wrong, where, and how to fix it.
#pragma once

#include <stdexcept>
#include <string>

namespace apiary {

// Base class of everything apiary throws.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad input: a config file, a JSON key, a Matrix Market file, a parameter. `where` names the
// file/line/column or key path.
class InputError : public Error {
 public:
  InputError(const std::string& where, const std::string& what)
      : Error(where.empty() ? what : where + ": " + what) {}
};

// A capacity (queue, waiting storage, dependency pool, trace buffer) was exhausted on the
// device. The message names the structure, its capacity and the config key that sets it.
class CapacityError : public Error {
 public:
  using Error::Error;
};

// A run stopped making progress (watchdog) or can never finish (tasks parked on
// dependencies that nothing can resolve). The message carries the run-state report.
class StallError : public Error {
 public:
  using Error::Error;
};

// A CUDA call failed, or no device is present.
class CudaError : public Error {
 public:
  using Error::Error;
};

}  // namespace apiary
