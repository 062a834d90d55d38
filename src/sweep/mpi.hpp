#pragma once
// Sweeps over MPI ranks (docs/scale-out.md): one rank per GPU, each rank a contiguous slice of the
// study's blocks (the shards of run_study), the ranks' partials merged along a fixed binomial tree
// of the one merge algebra (block_reduction.hpp), so the summary is bitwise the single-process
// one for any rank count. Every step that can fail on some ranks ends in an agreement: either all
// ranks go on, or all of them throw RanksFailed, and no rank is left waiting in a collective.
//
// Built only with MPI (SALTATION_ENABLE_MPI); the header does not include mpi.h. Not installed:
// the `saltation sweep --mpi` command is its user.
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "saltation/any_model.hpp"
#include "saltation/sweep/robust_design.hpp"
#include "saltation/sweep/study.hpp"

namespace saltation::sweep::mpi {

// The class of a rank's error, as the CLI's exit codes distinguish them.
enum class FailureKind { InvalidInput, Io, Cuda, Interrupted, Internal };

struct RankFailure {
  int rank = 0;
  FailureKind kind = FailureKind::Internal;
  int signal = 0;       // Interrupted: the signal
  std::string message;  // "I/O error: PATH: ...", "invalid input: ...": on rank 0 for every failed rank
};

// "<class>: rank N: <what>": the one error format (docs/reliability.md) with the rank as context.
std::string describe(const RankFailure& failure);

// Thrown on every rank when a step failed on any rank. On rank 0 every failure carries its
// message; on the other ranks only the kinds are known.
class RanksFailed : public std::runtime_error {
 public:
  explicit RanksFailed(std::vector<RankFailure> failures);
  const std::vector<RankFailure>& failures() const { return failures_; }
  const RankFailure& first() const { return failures_.front(); }  // the lowest failed rank

 private:
  std::vector<RankFailure> failures_;
};

// MPI_Init_thread (funneled: OpenMP threads never call MPI) and MPI_Finalize, on MPI_COMM_WORLD.
class Session {
 public:
  Session(int* argc, char*** argv);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session();
  void finalize();  // idempotent

  int rank() const { return rank_; }
  int size() const { return size_; }
  int node_rank() const { return node_rank_; }  // rank among the ranks of this node (MPI_COMM_TYPE_SHARED)

 private:
  int rank_ = 0, size_ = 1, node_rank_ = 0;
  bool finalized_ = false;
};

// Runs `step` on this rank and agrees with every rank on the outcome: returns when it succeeded
// everywhere, throws RanksFailed on every rank otherwise. `step` must not call MPI.
void agree(const Session& session, const std::function<void()>& step);

// CUDA builds: makes device (node rank modulo the node's device count) this thread's current
// device and returns it. Throws CudaError when the node has no device.
int select_device(const Session& session);

// One whole sweep across the ranks. Ranks 0 .. A-1 run shards 0 .. A-1 of A = min(ranks, blocks)
// (the others idle), with run's backend, budget and progress. With run.per_sample_prefix P, rank
// R's arrays go to P_rank<R>_<name>.npy (written into a temporary folder, moved into place once
// every rank has finished) and rank 0 writes P_index.json (which rank holds which samples); none
// of them when a rank failed. Returns the complete result on rank 0, an empty one elsewhere.
StudyResult run_study_on_ranks(const Session& session, const AnyModel& model, const Study& study, const StudyRun& run);

// Robust design with rank 0 running the optimiser (and calling on_iterate) and every evaluation's
// sweep spread over the ranks: rank 0 broadcasts the design, all ranks sweep, the tree merges.
// Every rank must call it with the same arguments; the result is complete on rank 0 only.
RobustDesignResult optimize_design_on_ranks(const Session& session, const AnyModel& model, const Study& study,
                                            const RobustDesignSettings& settings, const StudyRun& run,
                                            const DesignProgress& on_iterate = {});

}  // namespace saltation::sweep::mpi
