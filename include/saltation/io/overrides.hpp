#pragma once
// Numbers that override a request's from the command line or from Python: one strict rule
// (docs/reliability.md). The text is a plain decimal integer (digits only: no sign, space,
// fraction, exponent or hex), then range-checked; anything else is InvalidInput naming `name`
// (the flag, e.g. "--samples", or the Python argument). Never clamped, replaced or ignored.
#include <cstdint>
#include <limits>
#include <string>

namespace saltation::io {

// The largest sample count or seed a study takes, from a flag or from the study's JSON alike.
constexpr std::uint64_t kMaxStudyInteger = static_cast<std::uint64_t>(std::numeric_limits<long long>::max());

// A decimal integer in [low, high].
std::uint64_t parse_count(const std::string& name, const std::string& text, std::uint64_t low, std::uint64_t high);

// A byte count: a decimal integer, optionally followed by K, M or G (powers of 1024), at least 1
// and at most 2^63 - 1 bytes ("268435456", "512M", "4G"; not "0.5G", "1e9" or "inf").
std::uint64_t parse_bytes(const std::string& name, const std::string& text);

// A shard "i/N" with 0 <= i < N (both plain integers): {i, N}.
struct ShardSpec {
  int index = 0, count = 1;
};
ShardSpec parse_shard(const std::string& name, const std::string& text);

}  // namespace saltation::io
