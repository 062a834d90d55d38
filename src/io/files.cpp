#include "saltation/io/files.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "saltation/errors.hpp"

namespace saltation::io {

std::string parent_folder(const std::string& path) { return std::filesystem::path(path).parent_path().string(); }

nlohmann::json parse_json(const std::string& text) {
  // The parser's callback sees every key: a key given twice in one object is refused (JSON
  // parsers disagree on which one wins), and the last key read names where a number overflowed.
  std::vector<std::set<std::string>> objects;
  std::vector<std::string> path;  // "options", "objectives", "[]" for an array element
  std::string pending_key, last_key;
  auto where = [&path](const std::string& key) {
    std::string p;
    for (const auto& k : path) p += k.empty() || k == "[]" ? k : (p.empty() ? "" : ".") + k;
    return p.empty() ? key : p + "." + key;
  };
  const nlohmann::json::parser_callback_t check = [&](int, nlohmann::json::parse_event_t event,
                                                      nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (event == E::object_start || event == E::array_start) {
      if (event == E::object_start) objects.emplace_back();
      path.push_back(path.empty() ? "" : pending_key.empty() ? "[]" : pending_key);  // "": the document
      pending_key.clear();
    } else if (event == E::object_end || event == E::array_end) {
      if (event == E::object_end) objects.pop_back();
      path.pop_back();
    } else if (event == E::key) {
      pending_key = last_key = parsed.get<std::string>();
      if (!objects.back().insert(last_key).second)
        throw InvalidInput(where(last_key), -1, "is given twice in one object");
    } else if (event == E::value) {
      pending_key.clear();
    }
    return true;
  };
  try {
    return nlohmann::json::parse(text, check);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is the 1-based offset of the character the parser stopped at (one past the end at
    // end of input); its line and column are counted here so they can lead the message.
    const std::size_t at = std::min<std::size_t>(e.byte, text.size() + 1);
    const std::size_t line_start = at > 1 ? text.rfind('\n', at - 2) : std::string::npos;
    const long line = 1 + static_cast<long>(std::count(text.begin(), text.begin() + (at > 1 ? at - 1 : 0), '\n'));
    const long column = static_cast<long>(line_start == std::string::npos ? at : at - 1 - line_start);
    // nlohmann's text is "[json.exception.parse_error.101] parse error at line L, column C: <what>".
    const std::string message = e.what();
    const std::size_t what = message.find(": ", message.find("parse error"));
    throw InvalidInput("input", -1, line, std::max(column, 1L),
                       "not valid JSON (NaN and Inf are not JSON numbers): " +
                           (what == std::string::npos ? message : message.substr(what + 2)));
  } catch (const nlohmann::json::out_of_range& e) {
    throw InvalidInput(last_key.empty() ? "input" : last_key, -1,
                       "a number does not fit a double (" + std::string(e.what()) + ")");
  }
}

nlohmann::json read_json_file(const std::string& path) {
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    // A folder opens like a file and fails only when read, with an exception of the stream's.
    std::error_code error;
    if (std::filesystem::is_directory(path, error))
      throw IoError(path, "is a folder, not a file: give the JSON file's path");
    std::ifstream f(path, std::ios::binary);
    if (!f) throw IoError(path, std::string("cannot open for reading: ") + std::strerror(errno));
    try {
      text.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    } catch (const std::ios_base::failure& e) {
      throw IoError(path, std::string("read failed: ") + e.what());
    }
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
