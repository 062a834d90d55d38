#pragma once
// The parameter columns of a trajectory's sensitivities: X at the segment start (Xs, N x P). The
// segment tangent Y (tangents.hpp) rides along every step; the P columns change only at the start
// (X(0) = dq0/dtheta), at each event (the saltation jump, jump.hpp) and at the end (dqf = Y_q Xs +
// Y_theta). Two policies do that work, with the same operations in the same order on every column,
// so with the same bits:
//   LaneColumns      the trajectory keeps Xs and jumps it at each event (the CPU driver's way);
//   RecordedColumns  the trajectory records each event (EventRecord: its map and state, a few
//                    N (N+F) numbers whatever P) and its tangent at the end, and compose_columns
//                    forms a chunk of columns from a row's records afterwards: on the device a
//                    second, dense kernel, so that the stepping kernel carries no P-wide array and
//                    does no P-wide work (docs/gpu.md, "Parameter columns apart").
// A trajectory records when its output policy is a RecordingColumns<Model, Output>.
#include <cmath>
#include <cstddef>

#include "saltation/config.hpp"
#include "saltation/core/jump.hpp"
#include "saltation/core/options.hpp"
#include "saltation/core/params.hpp"
#include "saltation/core/tangents.hpp"
#include "saltation/dual.hpp"
#include "saltation/model.hpp"

namespace saltation::core {

// What RecordedColumns keeps of an event for compose_columns: its map, its state, the mode and
// guard its parameter partials are formed at, and where the output puts its columns (`Note`,
// Output::column_note).
template <class Model, class Note>
struct EventRecord {
  static constexpr int N = Model::N, W = tangent_width<Model>();
  EventMap<Model> map;
  double q_minus[N], f_minus[N], Y[N * W];
  int mode, guard;
  Note note;
};

// Column p of X = Y_q Xs + Y_theta (Y brought up to date), column p of Xs at
// Xs[l * xs_cols + p - xs_first].
template <class Model>
SALTATION_HD void tangent_column(const double* Y, const double* Xs, int xs_cols, int xs_first, int p, double* x) {
  constexpr int N = Model::N, W = tangent_width<Model>();
  const int f_col = Tangents<Model, true>::flow_column(p);
  for (int i = 0; i < N; ++i) {
    double acc = f_col >= 0 ? Y[i * W + f_col] : 0.0;
    for (int l = 0; l < N; ++l) acc += Y[i * W + l] * Xs[l * xs_cols + p - xs_first];
    x[i] = acc;
  }
}

// X(0) = dq0/dtheta for the chunk of columns from p0 (kChunk of them, those below P), column p of
// Xs at Xs[l * xs_cols + p - xs_first].
template <class Model, class Th>
SALTATION_HD void initial_columns(const Model& m, const Th& th, int p0, double* Xs, int xs_cols, int xs_first) {
  constexpr int N = Model::N, P = Model::P;
  Dual<kChunk> q0[N];
  m.initial_state(ChunkSeededParams<kChunk, Th>{th, p0}, q0);
  for (int d = 0; d < kChunk && p0 + d < P; ++d)
    for (int k = 0; k < N; ++k) Xs[k * xs_cols + p0 + d - xs_first] = q0[k].d[d];
}

// dqf for columns [p_begin, p_end) = X(t_end) from the tangent Y at the end (tangent_column).
template <class Model, class Output>
SALTATION_HD void final_columns(const double* Y, const double* Xs, int xs_cols, int xs_first, int p_begin, int p_end,
                                const Output& out) {
  for (int p = p_begin; p < p_end; ++p) {
    double x[Model::N];
    tangent_column<Model>(Y, Xs, xs_cols, xs_first, p, x);
    for (int k = 0; k < Model::N; ++k) out.final_dq(k, p, x[k]);
  }
}

// An invalid row's dqf for columns [p_begin, p_end): NaN, no derivative.
template <class Model, class Output>
SALTATION_HD void undefined_columns(int p_begin, int p_end, const Output& out) {
  for (int k = 0; k < Model::N; ++k)
    for (int p = p_begin; p < p_end; ++p) out.final_dq(k, p, ::nan(""));
}

// The trajectory keeps Xs. Forward runs keep nothing.
template <class Model, bool Sens>
class LaneColumns {
 public:
  template <class Output>
  SALTATION_HD explicit LaneColumns(const Output&) {}
};

template <class Model>
class LaneColumns<Model, true> {
 public:
  static constexpr int N = Model::N, P = Model::P;
  // Xs's row length: whole column groups (jump_columns forms and stores whole groups).
  static constexpr int kXsCols = (P + ColumnGroup::size - 1) / ColumnGroup::size * ColumnGroup::size;

  template <class Output>
  SALTATION_HD explicit LaneColumns(const Output&) {}

  template <class Th, class Output>
  SALTATION_HD void start(const Model& m, const Th& th, const Output&) {
    for (double& x : Xs_) x = 0.0;  // the padding too
    for (int p0 = 0; p0 < P; p0 += kChunk) initial_columns(m, th, p0, Xs_, kXsCols, 0);
  }
  template <class Th, class Output>
  SALTATION_HD void jump(const EventPartials<Model, Th, true>& partials, const EventMap<Model>& map,
                         const EventState& at, const Output& out) {
    jump_columns(partials, map, at, Xs_, kXsCols, 0, 0, P, out);
  }
  template <class Output>
  SALTATION_HD void finish(const double* Y, const Output& out) const {
    final_columns<Model>(Y, Xs_, kXsCols, 0, 0, P, out);
  }
  template <class Output>
  SALTATION_HD void invalid(const Output& out) const {
    undefined_columns<Model>(0, P, out);
  }

 private:
  double Xs_[N * kXsCols];
};

// How a row's final derivative comes: from its last jump (a terminal event wrote it), from its
// tangent at the end, or undefined (an invalid row: NaN).
enum class ColumnsEnd : int { FromJump = 0, FromTangent = 1, Undefined = 2 };

// Where trajectories record for compose_columns: arrays indexed by the row within the launch.
template <class Model, class Note>
struct ColumnRecords {
  static constexpr int kTangentSize = Model::N * tangent_width<Model>();
  EventRecord<Model, Note>* events = nullptr;  // row i's at events[i * capacity + k]
  double* end_tangent = nullptr;               // row i's tangent at its end at [i * kTangentSize]
  int* jumps = nullptr;                        // row i's recorded jumps
  ColumnsEnd* end = nullptr;
  int capacity = 0;  // jumps per row: jumps_per_row(options)
};

// The most events a trajectory takes: its event capacity, and the one past it that ends the run.
SALTATION_HD inline int jumps_per_row(const Options& o) { return o.event_capacity + 1; }

// Room for the records of `rows` rows, in buffers of one kind (host or device arrays).
template <class Model, class Note, template <class> class Buffer>
struct ColumnRecordArrays {
  Buffer<EventRecord<Model, Note>> events;
  Buffer<double> end_tangent;
  Buffer<int> jumps;
  Buffer<ColumnsEnd> end;
  int capacity;

  ColumnRecordArrays(std::size_t rows, int capacity_)
      : events(rows * capacity_),
        end_tangent(rows * ColumnRecords<Model, Note>::kTangentSize),
        jumps(rows),
        end(rows),
        capacity(capacity_) {}
  ColumnRecords<Model, Note> view() { return {events.data(), end_tangent.data(), jumps.data(), end.data(), capacity}; }
};

// A trajectory's output, and its parameter columns recorded (RecordedColumns) instead of formed.
template <class Model, class Output>
class RecordingColumns : public Output {
 public:
  using Records = ColumnRecords<Model, typename Output::ColumnNote>;
  struct View {
    typename Output::View out;
    Records records;
  };
  SALTATION_HD RecordingColumns(const View& v, std::size_t i) : Output(v.out, i), records_(v.records), row_(i) {}
  SALTATION_HD View view() const { return {Output::view(), records_}; }
  SALTATION_HD const Records& records() const { return records_; }
  SALTATION_HD std::size_t row() const { return row_; }

 private:
  Records records_;
  std::size_t row_;
};

template <class Model, class Note>
class RecordedColumns {
 public:
  template <class Output>
  SALTATION_HD explicit RecordedColumns(const Output& out) : records_(out.records()), row_(out.row()) {}

  template <class Th, class Output>
  SALTATION_HD void start(const Model&, const Th&, const Output&) {
    records_.jumps[row_] = 0;
    records_.end[row_] = ColumnsEnd::FromJump;
  }
  // At most event_capacity + 1 per row: the event past the capacity ends the run.
  template <class Th, class Output>
  SALTATION_HD void jump(const EventPartials<Model, Th, true>& partials, const EventMap<Model>& map,
                         const EventState& at, const Output& out) {
    constexpr int N = Model::N, kTangentSize = ColumnRecords<Model, Note>::kTangentSize;
    EventRecord<Model, Note>& record = records_.events[row_ * records_.capacity + jumps_];
    record.map = map;
    for (int k = 0; k < N; ++k) {
      record.q_minus[k] = at.q_minus[k];
      record.f_minus[k] = at.f_minus[k];
    }
    for (int e = 0; e < kTangentSize; ++e) record.Y[e] = at.Y[e];
    record.mode = partials.mode();
    record.guard = partials.guard();
    record.note = out.column_note();
    records_.jumps[row_] = ++jumps_;
  }
  template <class Output>
  SALTATION_HD void finish(const double* Y, const Output&) const {
    constexpr int kSize = ColumnRecords<Model, Note>::kTangentSize;
    for (int e = 0; e < kSize; ++e) records_.end_tangent[row_ * kSize + e] = Y[e];
    records_.end[row_] = ColumnsEnd::FromTangent;
  }
  template <class Output>
  SALTATION_HD void invalid(const Output&) const {
    records_.jumps[row_] = 0;
    records_.end[row_] = ColumnsEnd::Undefined;
  }

 private:
  ColumnRecords<Model, Note> records_;
  std::size_t row_;
  int jumps_ = 0;
};

// The columns policy of a trajectory with this output.
template <class Model, class Output, bool Sens>
struct columns_of {
  using type = LaneColumns<Model, Sens>;
};
template <class Model, class Output>
struct columns_of<Model, RecordingColumns<Model, Output>, true> {
  using type = RecordedColumns<Model, typename Output::ColumnNote>;
};

// Row i's parameter columns [p0, p0 + kChunk) (p0 a multiple of kChunk) from its records, into
// the output: X(0), each recorded jump in turn, the end, as LaneColumns forms them.
template <class Output, class Model, class Th>
SALTATION_HD void compose_columns(const Model& m, const Th& th, std::size_t i, const typename Output::View& view,
                                  const ColumnRecords<Model, typename Output::ColumnNote>& records, int p0) {
  constexpr int N = Model::N, P = Model::P;
  const Output out(view, i);
  const int p_end = P - p0 < kChunk ? P : p0 + kChunk;
  const ColumnsEnd end = records.end[i];
  if (end == ColumnsEnd::Undefined) {
    undefined_columns<Model>(p0, p_end, out);
    return;
  }
  double Xs[N * kChunk] = {};
  initial_columns(m, th, p0, Xs, kChunk, p0);
  for (int e = 0; e < records.jumps[i]; ++e) {
    const EventRecord<Model, typename Output::ColumnNote>& record = records.events[i * records.capacity + e];
    const EventPartials<Model, Th, true> partials(m, record.mode, th, record.guard, record.q_minus);
    out.take_column_note(record.note);
    jump_columns(partials, record.map, EventState{record.q_minus, record.f_minus, record.Y}, Xs, kChunk, p0, p0, p_end,
                 out);
  }
  if (end == ColumnsEnd::FromTangent) {
    const double* Y = records.end_tangent + i * ColumnRecords<Model, typename Output::ColumnNote>::kTangentSize;
    final_columns<Model>(Y, Xs, kChunk, p0, p0, p_end, out);
  }
}

}  // namespace saltation::core
