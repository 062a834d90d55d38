#include "saltation/io/overrides.hpp"

#include <climits>

#include "saltation/errors.hpp"

namespace saltation::io {

namespace {

// The digits of `text` as a number; false when it is empty, holds anything but digits or
// exceeds 2^64 - 1.
bool digits_value(const std::string& text, std::uint64_t& value) {
  if (text.empty()) return false;
  value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    const std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) return false;
    value = value * 10 + digit;
  }
  return true;
}

}  // namespace

std::uint64_t parse_count(const std::string& name, const std::string& text, std::uint64_t low, std::uint64_t high) {
  std::uint64_t value = 0;
  const std::string range = "[" + std::to_string(low) + ", " + std::to_string(high) + "]";
  if (!digits_value(text, value)) throw InvalidInput(name, -1, "\"" + text + "\" is not a whole number in " + range);
  if (value < low || value > high) throw InvalidInput(name, -1, text + " is outside " + range);
  return value;
}

std::uint64_t parse_bytes(const std::string& name, const std::string& text) {
  const char unit = text.empty() ? '\0' : text.back();
  const int shift = unit == 'K' ? 10 : unit == 'M' ? 20 : unit == 'G' ? 30 : 0;
  std::uint64_t value = 0;
  const bool number = digits_value(shift ? text.substr(0, text.size() - 1) : text, value);
  if (!number || value == 0)
    throw InvalidInput(name, -1,
                       "\"" + text +
                           "\" is not a byte count: a whole number of bytes >= 1, optionally with "
                           "K, M or G (e.g. 268435456, 256M, 2G)");
  if (value > (kMaxStudyInteger >> shift)) throw InvalidInput(name, -1, text + " is more than 2^63 - 1 bytes");
  return value << shift;
}

ShardSpec parse_shard(const std::string& name, const std::string& text) {
  const std::size_t slash = text.find('/');
  const std::string usage = "\"" + text + "\" is not i/N with 0 <= i < N (e.g. 0/4)";
  if (slash == std::string::npos) throw InvalidInput(name, -1, usage);
  std::uint64_t i = 0, n = 0;
  if (!digits_value(text.substr(0, slash), i) || !digits_value(text.substr(slash + 1), n) || n < 1 || n > INT_MAX ||
      i >= n)
    throw InvalidInput(name, -1, usage);
  return {static_cast<int>(i), static_cast<int>(n)};
}

}  // namespace saltation::io
