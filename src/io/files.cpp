#include "saltation/io/files.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include "saltation/errors.hpp"

namespace saltation::io {

nlohmann::json parse_json(const std::string& text) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InvalidInput("input", -1, std::string("not valid JSON (NaN and Inf are not JSON numbers): ") + e.what());
  }
}

nlohmann::json read_json_file(const std::string& path) {
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw IoError(path, std::string("cannot open for reading: ") + std::strerror(errno));
    text.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    if (f.bad()) throw IoError(path, "read failed");
  }
  return parse_json(text);
}

std::string temporary_path(const std::string& path) { return path + ".tmp." + std::to_string(::getpid()); }

void commit_temporary(std::FILE* file, bool written, const std::string& path) {
  const std::string tmp = temporary_path(path);
  written = written && std::fflush(file) == 0 && ::fsync(::fileno(file)) == 0;
  const int err = errno;
  if (std::fclose(file) != 0 || !written) {
    std::remove(tmp.c_str());
    throw IoError(path, std::string("write failed: ") + std::strerror(err));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    throw IoError(path, std::string("cannot move the finished file into place: ") + std::strerror(e));
  }
}

void write_file_atomically(const std::string& path, const std::string& bytes) {
  std::FILE* f = std::fopen(temporary_path(path).c_str(), "wb");
  if (!f) throw IoError(path, std::string("cannot open for writing: ") + std::strerror(errno));
  commit_temporary(f, std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size(), path);
}

}  // namespace saltation::io
