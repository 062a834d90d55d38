#pragma once
// The built-in models, listed once for every translation unit that instantiates them.
#include "saltation/models/bouncing_ball.hpp"
#include "saltation/models/terrain_ball.hpp"
#include "saltation/models/thermostat.hpp"

// Compiled-in bump counts of TerrainBall (its parameter count is 5 + 3K).
#define SALTATION_TERRAIN_BUMPS(X) X(0) X(3) X(24) X(192)

#define SALTATION_FOR_EACH_BUILTIN_MODEL(X) \
  X(::saltation::BouncingBall)              \
  X(::saltation::Thermostat)                \
  X(::saltation::TerrainBall<0>)            \
  X(::saltation::TerrainBall<3>)            \
  X(::saltation::TerrainBall<24>)           \
  X(::saltation::TerrainBall<192>)
