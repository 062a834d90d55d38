#pragma once
// Typed reads from one JSON object, every error naming the full key ("options.dt",
// "config.g", "materials[1].friction"), and unknown keys rejected: a key nobody read is a
// typo, and reject_unknown() says so. Every parser of user input in the library uses it.
#include <nlohmann/json.hpp>

#include <initializer_list>
#include <set>
#include <string>
#include <vector>

namespace saltation::io {

class JsonObject {
 public:
  // `where` is the key path of this object in the input ("" for the top level). A null value
  // reads as an empty object; anything else that is not an object is InvalidInput.
  JsonObject(const nlohmann::json& value, std::string where);

  bool has(const std::string& key) const;
  const nlohmann::json& raw(const std::string& key) const;  // marks it read; throws when absent
  std::string path(const std::string& key) const;           // "where.key"

  double number(const std::string& key) const;  // required
  double number(const std::string& key, double fallback) const;
  int integer(const std::string& key) const;
  int integer(const std::string& key, int fallback) const;
  long long integer64(const std::string& key, long long fallback) const;
  bool boolean(const std::string& key, bool fallback) const;
  std::string string(const std::string& key) const;
  std::string string(const std::string& key, const std::string& fallback) const;
  std::string choice(const std::string& key, std::initializer_list<const char*> allowed,
                     const std::string& fallback) const;
  std::vector<double> numbers(const std::string& key) const;  // an array of numbers
  JsonObject object(const std::string& key) const;            // a nested object (absent: empty)

  // Throws InvalidInput naming the first key that was never read, listing the keys asked about.
  void reject_unknown(const std::string& what = "") const;

  const nlohmann::json& value() const { return value_; }
  const std::string& where() const { return where_; }

 private:
  nlohmann::json value_;
  std::string where_;
  mutable std::set<std::string> read_, known_;  // keys read; keys asked about (for messages)
};

}  // namespace saltation::io
