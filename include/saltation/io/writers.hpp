#pragma once
// The writers of an ArrayTable. Each writes atomically (a temporary file renamed into place):
// a failure never leaves a half-written output, and throws IoError naming the path.
//
//   JSON: the table's meta keys, plus rows_key() ("trajectories"): one object per row whose keys are the
//         column names (a column with `count` trimmed to it).
//   NPY:  PREFIX.json (meta, plus "arrays": {name: {file, shape, dtype, description}}) and one
//         PREFIX_<name>.npy per column, row-major with the row axis first.
//   CSV:  one header line and one line per row; a column of inner shape S becomes prod(S)
//         columns named name[j] or name[j][k] (trimmed entries are left empty).
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "saltation/io/table.hpp"

namespace saltation::io {

// JSON and CSV are built whole in memory (a JSON document takes several times its text size), so
// the CLI refuses them beyond this estimated size; NPY streams any size (NpyTableWriter).
constexpr std::uint64_t max_text_output_bytes = std::uint64_t(256) << 20;
// An upper estimate of the JSON or CSV text of `rows` rows of the table `shape` (its own rows are
// not read): every value at 32 bytes (17 significant digits, separator and JSON's indentation),
// counted columns untrimmed.
std::uint64_t estimated_text_bytes(const ArrayTable& shape, std::uint64_t rows);
// Throws InvalidInput(parameter) when that estimate is beyond max_text_output_bytes, before
// anything is solved: `what` names the output, `way_out` says how to get it instead.
void refuse_large_text_output(const ArrayTable& shape, std::uint64_t rows, const std::string& parameter,
                              const std::string& what, const std::string& way_out);

nlohmann::json table_to_json(const ArrayTable& table);
std::string table_to_csv(const ArrayTable& table);

// "-" writes to standard output (not atomic, nothing to rename).
void write_json(const ArrayTable& table, const std::string& path);
void write_csv(const ArrayTable& table, const std::string& path);
// Returns the index document written to PREFIX.json.
nlohmann::json write_npy(const ArrayTable& table, const std::string& prefix);

}  // namespace saltation::io
