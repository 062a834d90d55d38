#include "saltation/io/json_object.hpp"

#include <limits>
#include <string>
#include <utility>

#include "saltation/errors.hpp"

namespace saltation::io {

using nlohmann::json;

JsonObject::JsonObject(const json& value, std::string where)
    : value_(value.is_null() ? json::object() : value), where_(std::move(where)) {
  if (!value_.is_object()) throw InvalidInput(where_.empty() ? "input" : where_, -1, "must be a JSON object");
}

std::string JsonObject::path(const std::string& key) const { return where_.empty() ? key : where_ + "." + key; }

bool JsonObject::has(const std::string& key) const {
  known_.insert(key);
  return value_.contains(key);
}

const json& JsonObject::raw(const std::string& key) const {
  known_.insert(key);
  if (!value_.contains(key)) throw InvalidInput(path(key), -1, "is required");
  read_.insert(key);
  return value_.at(key);
}

double JsonObject::number(const std::string& key) const {
  const json& v = raw(key);
  if (!v.is_number()) throw InvalidInput(path(key), -1, "must be a number");
  return v.get<double>();
}
double JsonObject::number(const std::string& key, double fallback) const { return has(key) ? number(key) : fallback; }

long long JsonObject::integer64(const std::string& key, long long fallback) const {
  if (!has(key)) return fallback;
  const json& v = raw(key);
  if (v.is_number_unsigned() &&
      v.get<unsigned long long>() > static_cast<unsigned long long>(std::numeric_limits<long long>::max()))
    throw InvalidInput(path(key), -1, "is too large");
  if (!v.is_number_integer()) throw InvalidInput(path(key), -1, "must be an integer");
  return v.get<long long>();
}

int JsonObject::integer(const std::string& key) const {
  raw(key);
  return integer(key, 0);
}
int JsonObject::integer(const std::string& key, int fallback) const {
  const long long v = integer64(key, fallback);
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
    throw InvalidInput(path(key), -1, std::to_string(v) + " is outside the 32-bit integer range");
  return static_cast<int>(v);
}

bool JsonObject::boolean(const std::string& key, bool fallback) const {
  if (!has(key)) return fallback;
  const json& v = raw(key);
  if (!v.is_boolean()) throw InvalidInput(path(key), -1, "must be true or false");
  return v.get<bool>();
}

std::string JsonObject::string(const std::string& key) const {
  const json& v = raw(key);
  if (!v.is_string()) throw InvalidInput(path(key), -1, "must be a string");
  return v.get<std::string>();
}
std::string JsonObject::string(const std::string& key, const std::string& fallback) const {
  return has(key) ? string(key) : fallback;
}

std::string JsonObject::choice(const std::string& key, std::initializer_list<const char*> allowed,
                               const std::string& fallback) const {
  const std::string v = string(key, fallback);
  std::string list;
  for (const char* a : allowed) {
    if (v == a) return v;
    list += std::string(list.empty() ? "" : ", ") + "\"" + a + "\"";
  }
  throw InvalidInput(path(key), -1, "\"" + v + "\" is not one of " + list);
}

std::vector<double> JsonObject::numbers(const std::string& key) const {
  const json& v = raw(key);
  if (!v.is_array()) throw InvalidInput(path(key), -1, "must be an array of numbers");
  std::vector<double> out;
  out.reserve(v.size());
  for (std::size_t k = 0; k < v.size(); ++k) {
    if (!v[k].is_number()) throw InvalidInput(path(key) + "[" + std::to_string(k) + "]", -1, "must be a number");
    out.push_back(v[k].get<double>());
  }
  return out;
}

JsonObject JsonObject::object(const std::string& key) const {
  if (!has(key)) return JsonObject(json::object(), path(key));
  return JsonObject(raw(key), path(key));
}

void JsonObject::reject_unknown(const std::string& what) const {
  for (const auto& item : value_.items()) {
    if (read_.count(item.key())) continue;
    std::string known;
    for (const auto& k : known_) known += (known.empty() ? "" : ", ") + k;
    throw InvalidInput(path(item.key()), -1,
                       "is not a key of " +
                           (what.empty() ? (where_.empty() ? std::string("the input") : where_) : what) +
                           (known.empty() ? std::string() : " (known keys: " + known + ")"));
  }
}

}  // namespace saltation::io
