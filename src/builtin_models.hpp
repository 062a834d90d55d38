#pragma once
// The table of built-in models: every type listed here gets both drivers compiled into the
// library (src/cuda_builtin_models.cu) and a registry entry under its Model::name
// (src/registry.cpp); types sharing a name are variants chosen by Model::variant_key.
// Adding a built-in model: its header under include/saltation/models/, one line here, tests.
#include "saltation/models/bouncing_ball.hpp"
#include "saltation/models/terrain_ball.hpp"
#include "saltation/models/thermostat.hpp"

#define SALTATION_FOR_EACH_BUILTIN_MODEL(X) \
  X(::saltation::BouncingBall)              \
  X(::saltation::Thermostat)                \
  X(::saltation::TerrainBall<0>)            \
  X(::saltation::TerrainBall<3>)            \
  X(::saltation::TerrainBall<24>)           \
  X(::saltation::TerrainBall<192>)
