#pragma once
// A file of named Results, written by agreement_probe and read by test_agreement: per result its
// name, its sizes, then every array in zip_arrays order. Same machine, same build tree: raw bytes.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "saltation/result.hpp"

namespace saltation::agreement {

inline void write_result(std::FILE* f, const std::string& name, Result& r) {
  const unsigned long long sizes[] = {name.size(),
                                      r.n,
                                      static_cast<unsigned long long>(r.N),
                                      static_cast<unsigned long long>(r.P),
                                      static_cast<unsigned long long>(r.C),
                                      r.sensitivities ? 1ull : 0ull};
  std::fwrite(sizes, sizeof sizes, 1, f);
  std::fwrite(name.data(), 1, name.size(), f);
  zip_arrays(r, r, [&](const auto& array, const auto&) {
    if (!array.empty()) std::fwrite(array.data(), sizeof(array[0]), array.size(), f);  // data() may be null when empty
  });
}

// Every result in the file by name; empty when the file cannot be read.
inline std::map<std::string, Result> read_results(const std::string& path) {
  std::map<std::string, Result> out;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return out;
  unsigned long long sizes[6];
  while (std::fread(sizes, sizeof sizes, 1, f) == 1) {
    std::string name(sizes[0], '\0');
    if (std::fread(&name[0], 1, name.size(), f) != name.size()) break;
    Result r(sizes[1], static_cast<int>(sizes[2]), static_cast<int>(sizes[3]), static_cast<int>(sizes[4]),
             sizes[5] != 0);
    bool complete = true;
    zip_arrays(r, r, [&](auto& array, auto&) {
      complete =
          complete && (array.empty() || std::fread(array.data(), sizeof(array[0]), array.size(), f) == array.size());
    });
    if (!complete) break;
    out.emplace(name, std::move(r));
  }
  std::fclose(f);
  return out;
}

}  // namespace saltation::agreement
