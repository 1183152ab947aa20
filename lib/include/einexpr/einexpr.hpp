#pragma once
// einexpr: einops-style named-dimension tensor expressions, planned, costed and run.
// The one header downstream code includes.
#include "einexpr/config.hpp"
#include "einexpr/cost.hpp"
#include "einexpr/ops.hpp"
#include "einexpr/program.hpp"
#include "einexpr/train.hpp"
#include "einexpr/runtime/cache.hpp"
#include "einexpr/runtime/device.hpp"
#include "einexpr/runtime/dtype.hpp"
#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/layout.hpp"
#include "einexpr/runtime/npy.hpp"
#include "einexpr/runtime/storage.hpp"
#include "einexpr/runtime/tensor.hpp"
#include "einexpr/runtime/threads.hpp"
#include "einexpr/runtime/timing.hpp"
