// libFuzzer target: the command-line and Python overrides' one rule (io/overrides.hpp): any text
// as --samples, --memory-budget and --shard is a number in range or InvalidInput, nothing else.
#include <cstddef>
#include <cstdint>
#include <string>

#include "saltation/errors.hpp"
#include "saltation/io/overrides.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace saltation;
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto refused_or_in_range = [](auto parse) {
    try {
      parse();
    } catch (const InvalidInput&) {
    }
  };
  refused_or_in_range([&] {
    const std::uint64_t n = io::parse_count("--samples", text, 1, io::kMaxStudyInteger);
    if (n < 1 || n > io::kMaxStudyInteger) __builtin_trap();
  });
  refused_or_in_range([&] {
    if (io::parse_bytes("--memory-budget", text) == 0) __builtin_trap();
  });
  refused_or_in_range([&] {
    const io::ShardSpec s = io::parse_shard("--shard", text);
    if (s.index < 0 || s.index >= s.count) __builtin_trap();
  });
  return 0;
}
