#pragma once
// The contract every fuzz target checks: bytes that are not a valid request are answered with
// saltation::InvalidInput and nothing else. Any other exception escapes LLVMFuzzerTestOneInput,
// std::terminate aborts, and libFuzzer reports the input as a crash; ASan and UBSan report memory
// errors and undefined behaviour on the way.
#include <cstddef>
#include <cstdint>
#include <string>

#include "saltation/errors.hpp"
#include "saltation/io/files.hpp"

namespace saltation::fuzz {

template <class Use>
int with_parsed_json(const std::uint8_t* data, std::size_t size, Use&& use) {
  try {
    use(io::parse_json(std::string(reinterpret_cast<const char*>(data), size)));
  } catch (const InvalidInput&) {
  }
  return 0;
}

}  // namespace saltation::fuzz
