// The whole public API of apiary in one include.
#pragma once

#include <apiary/config.hpp>
#include <apiary/context.cuh>
#include <apiary/dependency.hpp>
#include <apiary/error.hpp>
#include <apiary/graph.hpp>
#include <apiary/report.hpp>
#include <apiary/runtime.cuh>
#include <apiary/scheduler.hpp>
#include <apiary/task_type.hpp>
#include <apiary/trace.hpp>
#include <apiary/trace_check.hpp>
#include <apiary/trace_export.hpp>
#include <apiary/worker.cuh>
