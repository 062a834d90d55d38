#pragma once
// LBFGSpp's More-Thuente line search with a hook: the objective is told each accepted iterate
// (f.accepted(x, fx)), and the line search's own failures (the std::logic_error and
// std::runtime_error LBFGSpp throws) become `Stalled`. An exception of type `Passes` (the
// objective's own, which may derive from those) and anything not a std::exception pass through.
// Shared by the disk engine's stiffness fits (src/dem/fit.cpp) and robust design
// (src/sweep/robust_design.cpp); use as LBFGSBSolver<double, RecordingLineSearch<Stalled, Passes>::Type>.
#include <LBFGSB.h>

#include <stdexcept>

namespace saltation {

template <class Stalled, class Passes>
struct RecordingLineSearch {
  template <typename Scalar>
  class Type {
   public:
    template <typename Objective, typename Vector>
    static void LineSearch(Objective& f, Scalar& fx, Vector& x, Vector& grad, Scalar& step, const Scalar& step_max,
                           const Vector& drt, const Vector& xp, const LBFGSpp::LBFGSBParam<Scalar>& param) {
      try {
        LBFGSpp::LineSearchMoreThuente<Scalar>::LineSearch(f, fx, x, grad, step, step_max, drt, xp, param);
      } catch (const Passes&) {
        throw;
      } catch (const std::logic_error& e) {
        throw Stalled(e.what());
      } catch (const std::runtime_error& e) {
        throw Stalled(e.what());
      }
      f.accepted(x, fx);
    }
  };
};

}  // namespace saltation
