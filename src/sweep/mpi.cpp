#include "sweep/mpi.hpp"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "saltation/backend.hpp"
#include "saltation/errors.hpp"
#include "saltation/interrupt.hpp"
#include "saltation/io/files.hpp"

#ifdef SALTATION_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace saltation::sweep::mpi {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kTreeTag = 1;

RankFailure classify(int rank, const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const InvalidInput& e) {
    return {rank, FailureKind::InvalidInput, 0, e.what()};  // what() starts with "invalid input: "
  } catch (const IoError& e) {
    return {rank, FailureKind::Io, 0, std::string("I/O error: ") + e.what()};
  } catch (const Interrupted& e) {
    return {rank, FailureKind::Interrupted, e.signal(),
            "interrupted: signal " + std::to_string(e.signal()) +
                ": the run stopped before it finished; nothing was written"};
  } catch (const CudaError& e) {
    return {rank, FailureKind::Cuda, 0, std::string("CUDA error: ") + e.what()};
  } catch (const std::bad_alloc& e) {
    return {rank, FailureKind::Internal, 0, std::string("out of memory: ") + e.what()};
  } catch (const std::exception& e) {
    return {rank, FailureKind::Internal, 0, std::string("internal error: ") + e.what()};
  } catch (...) {
    return {rank, FailureKind::Internal, 0, "internal error: an exception of unknown type"};
  }
}

// Every rank's string, on rank 0 (empty vector elsewhere). Strings are messages and index entries,
// cut at 64 KiB so that no rank can fail here (a failure in a collective would leave the others waiting).
std::vector<std::string> gather_strings(const Session& session, const std::string& mine) {
  const int length = static_cast<int>(std::min<std::size_t>(mine.size(), 65536));
  const bool root = session.rank() == 0;
  std::vector<int> lengths(root ? session.size() : 0), offsets(lengths.size());
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::size_t total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    offsets[r] = static_cast<int>(total);
    total += lengths[r];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (std::size_t r = 0; r < lengths.size(); ++r) out.push_back(all.substr(offsets[r], lengths[r]));
  return out;
}

std::vector<std::uint8_t> to_bytes(const StudyResult& result) {
  std::vector<std::uint8_t> bytes = json::to_cbor(result_to_json(result));
  if (bytes.size() > INT_MAX)
    throw InvalidInput("mpi", -1, "a partial of more than 2 GiB cannot be sent in one message");
  return bytes;
}

StudyResult from_bytes(const std::vector<std::uint8_t>& bytes, int from) {
  try {
    return result_from_json(json::from_cbor(bytes));
  } catch (const json::exception& e) {
    throw InvalidInput("mpi", -1,
                       "the partial received from rank " + std::to_string(from) + " is not readable: " + e.what());
  }
}

void send_bytes(const std::vector<std::uint8_t>& bytes, int to) {
  MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, to, kTreeTag, MPI_COMM_WORLD);
}

std::vector<std::uint8_t> receive_bytes(int from) {
  MPI_Status status;
  MPI_Probe(from, kTreeTag, MPI_COMM_WORLD, &status);
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(count));
  MPI_Recv(bytes.data(), count, MPI_BYTE, from, kTreeTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return bytes;
}

// The results of ranks 0 .. active-1 (rank r: shard r) merged along a binomial tree fixed by the
// rank count: in round k = 1, 2, 4, ... rank r with r mod 2k = k sends everything it holds to
// r - k and leaves; rank r with r mod 2k = 0 appends what r + k sends, which covers the shards
// right after its own. Only contiguous runs of shards are ever merged, in index order, so the
// block tree's arithmetic is untouched (merge_partials). Rank 0 ends with the whole study after
// ceil(log2 active) rounds. A rank that failed sends an empty message up, so no rank waits for
// ever; the agreement afterwards reports the failure.
StudyResult reduce_on_tree(const Session& session, StudyResult local, int active) {
  const int r = session.rank();
  std::exception_ptr error;
  bool broken = false;  // this rank or a rank below it in the tree failed
  if (r < active) {
    for (int k = 1; k < active; k *= 2) {
      if (r % (2 * k) == k) {
        std::vector<std::uint8_t> bytes;
        if (!broken) {
          try {
            bytes = to_bytes(local);
          } catch (...) {
            error = std::current_exception();
          }
        }
        send_bytes(bytes, r - k);
        break;
      }
      if (r + k >= active) continue;
      const std::vector<std::uint8_t> bytes = receive_bytes(r + k);
      if (broken) continue;
      if (bytes.empty()) {
        broken = true;
        continue;
      }
      try {
        StudyResult later = from_bytes(bytes, r + k);
        if (later.header != local.header)
          throw InvalidInput("study", -1,
                             "rank " + std::to_string(r + k) + " ran another study than rank " + std::to_string(r) +
                                 " (model, options, parameters, objectives or nominal trajectory differ): every rank "
                                 "must read the same study with the same options");
        local = merge_results({local, later});
      } catch (...) {
        error = std::current_exception();
        broken = true;
      }
    }
  }
  agree(session, [&] {
    if (error) std::rethrow_exception(error);
  });
  return r == 0 ? std::move(local) : StudyResult{};
}

// One rank's per-sample arrays: written into a temporary folder of their own, moved next to the
// summary by publish() once every rank has finished, removed when the run fails on any rank.
class StagedFiles {
 public:
  explicit StagedFiles(const std::string& prefix)
      : folder_(io::temporary_path(prefix)),
        target_(fs::path(prefix).parent_path()),
        name_(fs::path(prefix).filename()) {
    if (target_.empty()) target_ = ".";
    std::error_code error;
    fs::remove_all(folder_, error);  // a leftover of a killed run of this process id
    fs::create_directories(folder_, error);
    if (error) throw IoError(folder_.string(), "cannot create the per-sample folder: " + error.message());
  }
  StagedFiles(const StagedFiles&) = delete;
  StagedFiles& operator=(const StagedFiles&) = delete;
  ~StagedFiles() {
    std::error_code ignored;
    fs::remove_all(folder_, ignored);
  }

  std::string prefix() const { return (folder_ / name_).string(); }

  // Moves the arrays into place; returns their names, sorted.
  std::vector<std::string> publish() {
    std::vector<std::string> names;
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(folder_, error)) names.push_back(entry.path().filename().string());
    if (error) throw IoError(folder_.string(), "cannot list the per-sample folder: " + error.message());
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) {
      fs::rename(folder_ / name, target_ / name, error);
      if (error)
        throw IoError((target_ / name).string(), "cannot move the per-sample array into place: " + error.message());
    }
    return names;
  }

 private:
  fs::path folder_, target_, name_;
};

}  // namespace

std::string describe(const RankFailure& failure) {
  // message is "<class>: <what>"; the rank goes after the class, so the line keeps the one
  // format's "saltation: <class>: " start.
  const std::string rank = "rank " + std::to_string(failure.rank);
  const std::size_t end_of_class = failure.message.find(": ");
  if (end_of_class == std::string::npos) return rank + ": " + failure.message;
  return failure.message.substr(0, end_of_class) + ": " + rank + failure.message.substr(end_of_class);
}

RanksFailed::RanksFailed(std::vector<RankFailure> failures)
    : std::runtime_error(describe(failures.at(0))), failures_(std::move(failures)) {}

Session::Session(int* argc, char*** argv) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &node_rank_);
  MPI_Comm_free(&node);
}

Session::~Session() { finalize(); }

void Session::finalize() {
  if (finalized_) return;
  finalized_ = true;
  MPI_Finalize();
}

void agree(const Session& session, const std::function<void()>& step) {
  RankFailure mine;
  bool failed = false;
  try {
    step();
  } catch (...) {
    mine = classify(session.rank(), std::current_exception());
    failed = true;
  }
  // Every rank learns every rank's outcome (kind + 1, or 0; and the signal), so all choose the
  // same exit code; the messages only travel to rank 0, which reports them.
  const int outcome[2] = {failed ? static_cast<int>(mine.kind) + 1 : 0, mine.signal};
  std::vector<int> outcomes(2 * static_cast<std::size_t>(session.size()));
  MPI_Allgather(outcome, 2, MPI_INT, outcomes.data(), 2, MPI_INT, MPI_COMM_WORLD);
  bool any = false;
  for (int r = 0; r < session.size(); ++r) any = any || outcomes[2 * r] != 0;
  if (!any) return;
  const std::vector<std::string> messages = gather_strings(session, failed ? mine.message : std::string());
  std::vector<RankFailure> failures;
  for (int r = 0; r < session.size(); ++r)
    if (outcomes[2 * r] != 0)
      failures.push_back({r, static_cast<FailureKind>(outcomes[2 * r] - 1), outcomes[2 * r + 1],
                          messages.empty() ? std::string() : messages[r]});
  throw RanksFailed(std::move(failures));
}

int select_device(const Session& session) {
#ifdef SALTATION_HAVE_CUDA
  const CudaDevices devices = query_cuda_devices();
  if (devices.count == 0)
    throw CudaError("rank " + std::to_string(session.rank()) + " has no CUDA device on its node" +
                        (devices.error.empty() ? std::string() : " (" + devices.error + ")"),
                    __FILE__, __LINE__);
  const int device = session.node_rank() % devices.count;
  const cudaError_t e = cudaSetDevice(device);
  if (e != cudaSuccess)
    throw CudaError("cudaSetDevice(" + std::to_string(device) + "): " + cudaGetErrorString(e), __FILE__, __LINE__);
  return device;
#else
  (void)session;
  throw CudaError("this build has no CUDA backend", __FILE__, __LINE__);
#endif
}

StudyResult run_study_on_ranks(const Session& session, const AnyModel& model, const Study& study, const StudyRun& run) {
  const std::uint64_t n_blocks = BlockLayout{study.samples, study.block_size}.n_blocks();
  const int active = static_cast<int>(std::min<std::uint64_t>(static_cast<std::uint64_t>(session.size()), n_blocks));
  const int r = session.rank();
  StudyRun mine = run;
  mine.shard = r;
  mine.n_shards = active;
  std::unique_ptr<StagedFiles> files;
  StudyResult local;
  std::uint64_t first_sample = 0, samples = 0;
  agree(session, [&] {
    if (r >= active) return;
    if (!run.per_sample_prefix.empty()) {
      files = std::make_unique<StagedFiles>(run.per_sample_prefix + "_rank" + std::to_string(r));
      mine.per_sample_prefix = files->prefix();
    }
    local = run_study(model, study, mine);
    first_sample = local.partial.blocks.first * study.block_size;
    samples = std::min(local.partial.blocks.end * study.block_size, study.samples) - first_sample;
  });
  StudyResult whole = reduce_on_tree(session, std::move(local), active);
  if (run.per_sample_prefix.empty()) return whole;

  std::string entry;
  agree(session, [&] {
    if (!files) return;
    entry = json{{"rank", r}, {"first_sample", first_sample}, {"samples", samples}, {"files", files->publish()}}.dump();
  });
  const std::vector<std::string> entries = gather_strings(session, entry);
  agree(session, [&] {
    if (r != 0) return;
    json shards = json::array();
    for (const std::string& e : entries)
      if (!e.empty()) shards.push_back(json::parse(e));
    const json index = {{"format", "saltation-sweep-per-sample-index"},
                        {"version", 1},
                        {"samples", study.samples},
                        {"ranks", session.size()},
                        {"shards", shards}};
    io::write_file_atomically(run.per_sample_prefix + "_index.json", index.dump(1) + "\n");
  });
  return whole;
}

RobustDesignResult optimize_design_on_ranks(const Session& session, const AnyModel& model, const Study& study,
                                            const RobustDesignSettings& settings, const StudyRun& run,
                                            const DesignProgress& on_iterate) {
  agree(session, [&] {
    if (!run.per_sample_prefix.empty())
      throw InvalidInput("per_sample", -1, "robust design runs many sweeps; per-sample files do not apply");
  });
  // Rank 0's command to the others: {stop (0) or sweep (1), the sobol flag, the design values}.
  // The rest of a design's study is the one every rank was given.
  const std::size_t n_design = study.gradient_values().size();
  std::vector<double> command(2 + n_design);
  const auto broadcast = [&] {
    MPI_Bcast(command.data(), static_cast<int>(command.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  };

  if (session.rank() == 0) {
    const StudySweep sweep = [&](const Study& at) {
      command[0] = 1;
      command[1] = at.sobol ? 1 : 0;
      const std::vector<double> values = at.gradient_values();
      std::copy(values.begin(), values.end(), command.begin() + 2);
      broadcast();
      return run_study_on_ranks(session, model, at, run);
    };
    RobustDesignResult result;
    std::exception_ptr error;
    try {
      result = optimize_design(model, study, settings, sweep, on_iterate);
    } catch (const RanksFailed&) {
      throw;  // a sweep failed: every rank knows it and has left already
    } catch (...) {
      error = std::current_exception();
    }
    command[0] = 0;
    broadcast();
    agree(session, [&] {
      if (error) std::rethrow_exception(error);
    });
    return result;
  }
  for (;;) {
    broadcast();
    if (command[0] == 0) break;
    Study at = study;
    at.sobol = command[1] != 0;
    at.set_gradient_values(std::vector<double>(command.begin() + 2, command.end()));
    (void)run_study_on_ranks(session, model, at, run);
  }
  agree(session, [] {});
  return {};
}

}  // namespace saltation::sweep::mpi
