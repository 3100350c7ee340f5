// One translation unit holds Catch2's main so that test executables compile quickly.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
