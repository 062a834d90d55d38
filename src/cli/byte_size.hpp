#pragma once
// Byte counts on the command line (--memory-budget of solve and sweep): one parser, one spelling.
#include <cstdint>
#include <exception>
#include <string>

#include "saltation/errors.hpp"

namespace saltation::cli {

// "1073741824", "512M", "4G" (K, M, G: powers of 1024): bytes. Anything else is InvalidInput
// naming memory-budget.
inline std::uint64_t parse_bytes(const std::string& text) {
  std::size_t used = 0;
  double value = 0.0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string unit = text.substr(used);
  const double scale = unit.empty() ? 1.0 : unit == "K" ? 1024.0 : unit == "M" ? 1048576.0 : unit == "G" ? 1073741824.0 : -1.0;
  if (used == 0 || scale < 0 || !(value > 0))
    throw InvalidInput("memory-budget", -1, "\"" + text + "\" is not a byte count (e.g. 268435456, 256M, 2G)");
  return static_cast<std::uint64_t>(value * scale);
}

}  // namespace saltation::cli
