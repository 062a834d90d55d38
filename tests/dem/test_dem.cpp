// Disk-contact engine: closed forms, conservation, Verlet order, restitution, tangents vs
// finite differences, cell list vs all pairs, systems that stop, batched fits, bad input.
// The physics bodies are written once (TEST_P on DemPhysics) and run on every backend compiled
// in; CPU-only paths (the OpenMP team, the lockstep driver) and CUDA-vs-CPU agreement follow.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <new>
#include <stdexcept>
#include <vector>

#include "backends.hpp"
#include "engine_internal.hpp"
#include "lockstep.hpp"
#include "saltation/backend.hpp"
#include "saltation/dem/engine.hpp"
#include "saltation/dem/fit.hpp"
#include "saltation/dem/rollout.hpp"
#include "saltation/errors.hpp"
#include "simd_choice.hpp"

using namespace saltation;
using namespace saltation::dem;

namespace {
const double kPi = std::acos(-1.0);

// Head-on pair along x: disk 0 at -gap/2 - R moving +v0, disk 1 mirrored with -v1.
DiskBatch head_on(double R, double m0, double m1, double x, double v0, double v1, double theta = 0.0) {
  DiskBatch b = DiskBatch::make(1, 2);
  b.r(0, 0) = b.r(0, 1) = R;
  b.m(0, 0) = m0;
  b.m(0, 1) = m1;
  b.x(0, 0, 0) = -x;
  b.x(0, 1, 0) = x;
  b.v(0, 0, 0) = v0;
  b.v(0, 1, 0) = -v1;
  b.log_stiffness[0] = theta;
  return b;
}

RolloutOptions opts(double dt, int frames, int stride, double k = 1.0, double e = 1.0) {
  RolloutOptions o;
  o.dt = dt;
  o.n_frames = frames;
  o.stride = stride;
  o.materials = {Material{k, e, 0.0, 0.0}};
  return o;
}

// Deterministic pseudo-random numbers for test configurations.
double rnd(unsigned long i) {
  unsigned long x = i * 0x9e3779b97f4a7c15UL + 12345;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9UL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebUL;
  x ^= x >> 31;
  return (x >> 11) * 0x1.0p-53;
}

// A small gas of n_disks disks on a jittered grid in a box, n_systems systems with different velocities.
DiskBatch gas(int n_systems, int n_disks, double spacing, double R, unsigned long seed) {
  DiskBatch b = DiskBatch::make(n_systems, n_disks);
  const int side = (int)std::ceil(std::sqrt((double)n_disks));
  for (int s = 0; s < n_systems; ++s)
    for (int d = 0; d < n_disks; ++d) {
      b.r(s, d) = R * (0.8 + 0.2 * rnd(seed + 7 * d));
      b.m(s, d) = 1.0 + rnd(seed + 11 * d);
      b.x(s, d, 0) = spacing * (d % side) + 0.1 * R * rnd(seed + 13 * d + s);
      b.x(s, d, 1) = spacing * (d / side) + 0.1 * R * rnd(seed + 17 * d + s);
      b.v(s, d, 0) = rnd(seed + 19 * d + 3 * s) - 0.5;
      b.v(s, d, 1) = rnd(seed + 23 * d + 5 * s) - 0.5;
      if (n_disks > 1) b.material[(long)d * n_systems + s] = d % 2;
    }
  return b;
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0.0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}
double max_abs(const std::vector<double>& a) {
  double m = 0.0;
  for (double v : a) m = std::max(m, std::fabs(v));
  return m;
}

// The physics tests, once per backend.
class DemPhysics : public saltation::testing::BackendTest {
 protected:
  RolloutResult run(const DiskBatch& b, const RolloutOptions& o) const { return rollout(b, o, backend()); }
  RolloutResult run(const DiskBatch& b, const RolloutOptions& o, const LossSpec& l) const {
    return rollout(b, o, l, backend());
  }
};
}  // namespace

TEST_P(DemPhysics, ClosedFormContactDurationHeadOnPair) {
  // Unequal masses: m_eff = 0.75; k = 30; t_c = pi sqrt(m_eff / k).
  const double k = 30.0, m0 = 1.0, m1 = 3.0, meff = m0 * m1 / (m0 + m1), dt = 1e-4;
  RolloutOptions o = opts(dt, 6000, 1, k);
  const RolloutResult r = run(head_on(0.5, m0, m1, 0.52, 0.4, 0.2), o);
  ASSERT_EQ(r.status_of(0), Status::Finished);
  int in_contact = 0;
  for (int f = 0; f < o.n_frames; ++f)
    if (r.pos(f, 0, 1, 0) - r.pos(f, 0, 0, 0) < 1.0) ++in_contact;
  const double tc = kPi * std::sqrt(meff / k);
  EXPECT_NEAR(in_contact * dt, tc, 2 * dt) << "contact duration";
  // Momentum-weighted: after contact the velocities are the elastic-collision ones.
  const double u = 0.6;  // approach speed
  const int last = o.n_frames - 1;
  EXPECT_NEAR(r.vel(last, 0, 1, 0) - r.vel(last, 0, 0, 0), u, 1e-6) << "elastic: relative speed restored";
}

TEST_P(DemPhysics, ClosedFormOverlapMatchesSinSolution) {
  for (double k : {40.0, 25.0}) {
    for (double v : {0.5, 0.35}) {
      RolloutOptions o = opts(0.002, 80, 5);
      const RolloutResult r = run(head_on(0.5, 1.0, 1.0, 0.54, v, v, std::log(k)), o);
      const double omega = std::sqrt(k / 0.5), t0 = 0.08 / (2 * v);
      double err = 0.0, peak = 0.0;
      for (int f = 0; f < 80; ++f) {
        const double age = 0.01 * (f + 1) - t0;
        const double an = (age >= 0 && age <= kPi / omega) ? 2 * v / omega * std::sin(omega * age) : 0.0;
        const double nu = std::max(0.0, 1.0 - (r.pos(f, 0, 1, 0) - r.pos(f, 0, 0, 0)));
        err = std::max(err, std::fabs(nu - an));
        peak = std::max(peak, nu);
      }
      EXPECT_LT(err, 2e-5) << "k=" << k << " v=" << v;
      EXPECT_NEAR(peak, 2 * v / omega, 2e-3 * 2 * v / omega);
    }
  }
}

TEST_P(DemPhysics, ConservationMomentumWithDampingFrictionAndManyDisks) {
  RolloutOptions o = opts(1e-3, 50, 20);
  o.materials = {Material{200.0, 0.7, 0.4, 2.0}, Material{100.0, 0.9, 0.2, 1.0}};
  o.tangential = true;
  o.neighbors = Neighbors::AllPairs;
  const int n_systems = 3, n_disks = 16;
  DiskBatch b = gas(n_systems, n_disks, 0.9, 0.5, 5);
  const RolloutResult r = run(b, o);
  int contacts_seen = 0;
  for (int s = 0; s < n_systems; ++s) {
    ASSERT_EQ(r.status_of(s), Status::Finished);
    double p0[2] = {0, 0};
    for (int d = 0; d < n_disks; ++d)
      for (int c = 0; c < 2; ++c) p0[c] += b.m(s, d) * b.v(s, d, c);
    for (int f = 0; f < o.n_frames; ++f)
      for (int c = 0; c < 2; ++c) {
        double p = 0;
        for (int d = 0; d < n_disks; ++d) p += b.m(s, d) * r.vel(f, s, d, c);
        EXPECT_NEAR(p, p0[c], 1e-12);
      }
    for (int d = 0; d < n_disks; ++d)
      if (std::fabs(r.vel(o.n_frames - 1, s, d, 0) - b.v(s, d, 0)) > 1e-3) ++contacts_seen;
  }
  EXPECT_GT(contacts_seen, 10) << "the gas must actually collide for this test to mean anything";
}

TEST_P(DemPhysics, VerletEnergyDriftOrderAtLeast1p8) {
  // Elastic gas in a box with walls; max |E(t) - E0| over the frames at fixed physical times.
  const int n_disks = 9, n_systems = 1;
  DiskBatch b = gas(n_systems, n_disks, 1.1, 0.5, 9);
  std::vector<double> drift;
  for (int refine : {1, 2, 4}) {
    RolloutOptions o = opts(2e-3 / refine, 40, 25 * refine, 50.0);
    o.materials = {Material{50.0}, Material{80.0}};
    o.walls = true;
    o.box_lo[0] = o.box_lo[1] = -0.6;
    o.box_hi[0] = o.box_hi[1] = 2.9;
    const RolloutResult r = run(b, o);
    EXPECT_EQ(r.status_of(0), Status::Finished);
    auto energy = [&](auto pos, auto vel) {
      double E = 0;
      for (int d = 0; d < n_disks; ++d) {
        const double R = b.r(0, d), m = b.m(0, d);
        const int md = d % 2;
        const double kd = md ? 80.0 : 50.0;
        E += 0.5 * m * (vel(d, 0) * vel(d, 0) + vel(d, 1) * vel(d, 1));
        for (int a = 0; a < 2; ++a) {
          const double lo = R - (pos(d, a) + 0.6), hi = R - (2.9 - pos(d, a));
          if (lo > 0) E += 0.5 * kd * lo * lo;
          if (hi > 0) E += 0.5 * kd * hi * hi;
        }
        for (int j = d + 1; j < n_disks; ++j) {
          const double kj = (j % 2) ? 80.0 : 50.0;
          const double k = md == (j % 2) ? kd : 2 * kd * kj / (kd + kj);
          const double dx = pos(d, 0) - pos(j, 0), dy = pos(d, 1) - pos(j, 1);
          const double delta = R + b.r(0, j) - std::sqrt(dx * dx + dy * dy);
          if (delta > 0) E += 0.5 * k * delta * delta;
        }
      }
      return E;
    };
    const double E0 = energy([&](int d, int c) { return b.x(0, d, c); }, [&](int d, int c) { return b.v(0, d, c); });
    double dmax = 0;
    for (int f = 0; f < o.n_frames; ++f)
      dmax = std::max(dmax, std::fabs(energy([&](int d, int c) { return r.pos(f, 0, d, c); },
                                             [&](int d, int c) { return r.vel(f, 0, d, c); }) -
                                      E0));
    drift.push_back(dmax);
  }
  ASSERT_GT(drift[0], 0.0);
  const double order1 = std::log2(drift[0] / drift[1]), order2 = std::log2(drift[1] / drift[2]);
  EXPECT_GE(order1, 1.8) << drift[0] << " " << drift[1];
  EXPECT_GE(order2, 1.8) << drift[1] << " " << drift[2];
}

TEST_P(DemPhysics, DampingRestitutionWithin1e3) {
  for (double e : {0.9, 0.7, 0.4}) {
    for (double mass1 : {1.0, 2.5}) {
      const double k = 1000.0, meff = mass1 / (1 + mass1);
      const double tc = kPi * std::sqrt(meff / k);
      RolloutOptions o = opts(tc / 2000, 40, 100, k, e);
      const RolloutResult r = run(head_on(0.5, 1.0, mass1, 0.505, 0.5, 0.5), o);
      ASSERT_EQ(r.status_of(0), Status::Finished);
      const int last = o.n_frames - 1;
      const double after = r.vel(last, 0, 1, 0) - r.vel(last, 0, 0, 0);
      EXPECT_NEAR(after / 1.0, e, 1e-3) << "e=" << e << " m1=" << mass1;
    }
  }
}

// Tangents of the whole rollout against central finite differences.
TEST_P(DemPhysics, TangentsMatchCentralFiniteDifferences) {
  for (int model = 0; model < 2; ++model) {
    RolloutOptions o = opts(1e-3, 12, 25);
    o.normal = model ? NormalModel::Hertz : NormalModel::Linear;
    o.materials = {Material{300.0, 0.6, 0.3, 1.5}, Material{150.0, 0.8, 0.5, 3.0}};
    o.tangential = true;
    o.walls = true;
    o.box_lo[0] = o.box_lo[1] = -0.6;
    o.box_hi[0] = o.box_hi[1] = 2.0;
    o.tangents = {{TangentKind::LogStiffness},
                  {TangentKind::Damping},
                  {TangentKind::InitialVelocity, 1, 0},
                  {TangentKind::InitialVelocity, 2, 1},
                  {TangentKind::InitialPosition, 0, 1}};
    DiskBatch b = gas(2, 4, 0.95, 0.5, 21);
    b.log_stiffness = {0.3, -0.2};
    b.damping_ratio = {0.05, 0.1};
    const RolloutResult r = run(b, o);
    ASSERT_EQ(r.status_of(0), Status::Finished);
    const double h = 1e-6;
    for (int p = 0; p < (int)o.tangents.size(); ++p) {
      DiskBatch bp = b, bm = b;
      for (int s = 0; s < 2; ++s) {
        const TangentParam& t = o.tangents[p];
        switch (t.kind) {
          case TangentKind::LogStiffness: bp.log_stiffness[s] += h, bm.log_stiffness[s] -= h; break;
          case TangentKind::Damping: bp.damping_ratio[s] += h, bm.damping_ratio[s] -= h; break;
          case TangentKind::InitialVelocity:
            bp.v(s, t.disk, t.component) += h, bm.v(s, t.disk, t.component) -= h;
            break;
          case TangentKind::InitialPosition:
            bp.x(s, t.disk, t.component) += h, bm.x(s, t.disk, t.component) -= h;
            break;
        }
      }
      RolloutOptions of = o;
      of.tangents.clear();
      const RolloutResult rp = run(bp, of), rm = run(bm, of);
      double err = 0, scale = 0;
      for (int f = 0; f < o.n_frames; ++f)
        for (int s = 0; s < 2; ++s)
          for (int d = 0; d < 4; ++d)
            for (int c = 0; c < 2; ++c) {
              const double fdx = (rp.pos(f, s, d, c) - rm.pos(f, s, d, c)) / (2 * h);
              const double fdv = (rp.vel(f, s, d, c) - rm.vel(f, s, d, c)) / (2 * h);
              err = std::max({err, std::fabs(fdx - r.dpos(f, p, s, d, c)), std::fabs(fdv - r.dvel(f, p, s, d, c))});
              scale = std::max({scale, std::fabs(fdx), std::fabs(fdv)});
            }
      EXPECT_GT(scale, 1e-3) << "tangent " << p << " must be nontrivial";
      EXPECT_LT(err, 1e-6 * scale) << "model " << model << " tangent " << p << " err " << err << " scale " << scale;
    }
  }
}

TEST_P(DemPhysics, LossGradientMatchesFiniteDifferenceAndSeedValue) {
  RolloutOptions o = opts(0.002, 80, 5);
  const RolloutResult obs = run(head_on(0.5, 1, 1, 0.54, 0.5, 0.5, std::log(40.0)), o);
  LossSpec l;
  l.observed = obs.x;
  l.scale = {0.5};
  o.tangents = {{TangentKind::LogStiffness}};
  auto lg = [&](double th) {
    const RolloutResult r = run(head_on(0.5, 1, 1, 0.54, 0.5, 0.5, th), o, l);
    return std::make_pair(r.loss[0], r.grad[0]);
  };
  const double th = std::log(18.0), h = 1e-4;
  const double g = lg(th).second, fd = (lg(th + h).first - lg(th - h).first) / (2 * h);
  EXPECT_NEAR(g, fd, 2e-4 * std::fabs(fd));
  EXPECT_NEAR(g, -0.04288933, 5e-9) << "the seed's JAX value";
  EXPECT_NEAR(lg(std::log(40.0)).first, 0.0, 1e-28);
}

TEST_P(DemPhysics, FitBatchedLockstepFitRecoversStiffnesses) {
  const std::vector<double> ks = {12.0, 25.0, 40.0, 66.0, 90.0};
  const int n_systems = (int)ks.size();
  DiskBatch truth = DiskBatch::make(n_systems, 2), start;
  for (int s = 0; s < n_systems; ++s) {
    for (int d = 0; d < 2; ++d) truth.r(s, d) = 0.5, truth.m(s, d) = 1.0;
    truth.x(s, 0, 0) = -0.54;
    truth.x(s, 1, 0) = 0.54;
    truth.v(s, 0, 0) = 0.3 + 0.1 * s;
    truth.v(s, 1, 0) = -(0.3 + 0.1 * s);
    truth.log_stiffness[s] = std::log(ks[s]);
  }
  RolloutOptions o = opts(0.002, 80, 5);
  const RolloutResult r = run(truth, o);
  LossSpec l;
  l.observed = r.x;
  l.scale.assign(n_systems, 0.5);
  start = truth;
  start.log_stiffness.assign(n_systems, std::log(10.0));
  FitOptions fo;
  const FitResult fit = fit_log_stiffness(start, o, l, fo, backend());
  for (int s = 0; s < n_systems; ++s) {
    EXPECT_EQ(fit.outcome[s], FitConverged) << fit.message[s];
    EXPECT_NEAR(std::exp(fit.theta[s]), ks[s], 1e-3 * ks[s]);
    EXPECT_LT(fit.loss[s], 1e-6 * fit.initial_loss[s]);
  }
  // one batched evaluation per round, never more rounds than the slowest system's evaluations
  int max_ev = 0;
  for (int e : fit.evaluations) max_ev = std::max(max_ev, e);
  EXPECT_EQ(fit.rounds, max_ev);
  EXPECT_EQ(fit.round_sizes[0], n_systems);
}

TEST_P(DemPhysics, NeighborsCellListMatchesAllPairs) {
  const int n_systems = 2, n_disks = 150;
  DiskBatch b = gas(n_systems, n_disks, 0.95, 0.5, 3);
  RolloutOptions o = opts(1e-3, 10, 20);
  o.materials = {Material{200.0, 0.8, 0.3, 1.0}, Material{300.0, 0.9, 0.3, 1.0}};
  o.tangential = true;
  o.tangents = {{TangentKind::LogStiffness}};
  o.neighbors = Neighbors::AllPairs;
  const RolloutResult a = run(b, o);
  o.neighbors = Neighbors::CellList;
  const RolloutResult c = run(b, o);
  ASSERT_FALSE(a.used_cells);
  ASSERT_TRUE(c.used_cells);
  for (int s = 0; s < n_systems; ++s) ASSERT_EQ(c.status_of(s), Status::Finished);
  EXPECT_LT(max_abs_diff(a.x, c.x), 1e-9 * max_abs(a.x));
  EXPECT_LT(max_abs_diff(a.dx, c.dx), 1e-7 * max_abs(a.dx));
}

TEST(DemNeighbors, OpenMPTeamOverDisksIsBitwiseSerial) {
  // n_systems = 1 with n_disks >= cpu_team_threshold runs the OpenMP team over disks; n_systems = 2 runs one system per
  // thread.
  const int n_disks = 300;
  DiskBatch one = gas(1, n_disks, 0.95, 0.5, 4), two = DiskBatch::make(2, n_disks);
  for (int d = 0; d < n_disks; ++d)
    for (int s = 0; s < 2; ++s) {
      two.r(s, d) = one.r(0, d);
      two.m(s, d) = one.m(0, d);
      two.material[(long)d * 2 + s] = one.material[d];
      for (int c = 0; c < 2; ++c) two.x(s, d, c) = one.x(0, d, c), two.v(s, d, c) = one.v(0, d, c);
    }
  RolloutOptions o = opts(1e-3, 5, 10, 100.0);
  o.materials = {Material{100.0, 0.8}, Material{150.0, 0.9}};
  o.neighbors = Neighbors::CellList;
  o.tangents = {{TangentKind::InitialVelocity, 3, 0}};
  o.cpu_team_threshold = 256;
  const RolloutResult r1 = rollout(one, o, Backend::Cpu), r2 = rollout(two, o, Backend::Cpu);
  for (int f = 0; f < 5; ++f)
    for (int d = 0; d < n_disks; ++d)
      for (int c = 0; c < 2; ++c) {
        ASSERT_EQ(r1.pos(f, 0, d, c), r2.pos(f, 1, d, c));
        ASSERT_EQ(r1.dpos(f, 0, 0, d, c), r2.dpos(f, 0, 1, d, c));
      }
}

namespace {
// Every system of a prepared rollout through rollout_system with the compile-time facts `Fixed`.
template <class Fixed>
RolloutResult run_body(const DiskBatch& b, const RolloutOptions& o, const LossSpec& loss) {
  dem::detail::Prepared prep = dem::detail::prepare(b, o, &loss);
  const RolloutView view = prep.host_view();
  std::vector<double> wd((size_t)view.work_doubles());
  std::vector<int> wi((size_t)view.work_ints());
  const Work w{wd.data(), 1, wi.data(), 1};
  for (int s = 0; s < view.n_systems; ++s) rollout_system<SerialTeam, Fixed>(SerialTeam{}, view, s, w);
  return std::move(prep.result);
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](double x, double y) {
           return x == y || (std::isnan(x) && std::isnan(y));
         });
}

// Every output of two rollouts with the same bits (a NaN matching a NaN), and the same statuses.
void expect_same_outputs(const RolloutResult& a, const RolloutResult& b) {
  EXPECT_TRUE(same_bits(a.x, b.x) && same_bits(a.v, b.v));
  EXPECT_TRUE(same_bits(a.dx, b.dx) && same_bits(a.dv, b.dv));
  EXPECT_TRUE(same_bits(a.loss, b.loss) && same_bits(a.grad, b.grad));
  EXPECT_EQ(a.status, b.status);
}

// o with two materials (damping, friction, tangential damping) and the given contact laws.
RolloutOptions with_two_materials(RolloutOptions o, NormalModel normal, bool tangential) {
  o.materials = {Material{150.0, 0.7, 0.3, 2.0}, Material{90.0, 0.8, 0.2, 1.0}};
  o.normal = normal;
  o.tangential = tangential;
  return o;
}
}  // namespace

// The CPU driver runs disk pairs at compile-time sizes (Shape<2, 0 or 1, true>) so that the loops
// unroll; they must give the bits of the same body at run-time sizes: colliding pairs with
// damping, friction, walls, both normal models, a loss, without and with a tangent.
TEST(DemShapes, CompileTimePairSizesAreBitwiseTheRunTimeBody) {
  const DiskBatch b = gas(64, 2, 0.95, 0.5, 9);
  for (const NormalModel normal : {NormalModel::Linear, NormalModel::Hertz})
    for (const bool with_tangent : {false, true}) {
      RolloutOptions o = with_two_materials(opts(1e-3, 20, 10), normal, true);
      o.walls = true;
      o.box_lo[0] = o.box_lo[1] = -1.0;
      o.box_hi[0] = 2.0;
      o.box_hi[1] = 1.0;
      LossSpec loss;
      loss.observed = rollout(b, o, Backend::Cpu).x;
      for (double& x : loss.observed) x += 0.01;
      if (with_tangent) o.tangents = {{TangentKind::LogStiffness}};
      const RolloutResult fixed =
          with_tangent ? run_body<Shape<2, 1, true>>(b, o, loss) : run_body<Shape<2, 0, true>>(b, o, loss);
      const RolloutResult general = run_body<Shape<>>(b, o, loss);
      expect_same_outputs(fixed, general);
      if (with_tangent) {
        EXPECT_GT(max_abs(fixed.grad), 0.0) << "the tangent must see contacts";
      }
    }
}

// The same without walls: a pair's force on disk 1 is copied from disk 0's (rollout.hpp, forces).
TEST(DemShapes, PairForceCopiedFromTheOtherDiskIsBitwiseBothComputed) {
  const DiskBatch b = gas(64, 2, 0.9, 0.5, 4);
  for (const NormalModel normal : {NormalModel::Linear, NormalModel::Hertz})
    for (const bool tangential : {false, true}) {
      RolloutOptions o = with_two_materials(opts(1e-3, 20, 10), normal, tangential);
      o.tangents = {{TangentKind::LogStiffness}, {TangentKind::InitialVelocity, 1, 0}};
      LossSpec loss;
      loss.observed = rollout(b, o, Backend::Cpu).x;
      for (double& x : loss.observed) x -= 0.02;
      o.tangents.resize(1);
      const RolloutResult pair = run_body<Shape<2, 1, true>>(b, o, loss);
      const RolloutResult general = run_body<Shape<>>(b, o, loss);
      expect_same_outputs(pair, general);
      EXPECT_GT(max_abs(pair.grad), 0.0) << "the tangent must see contacts";
    }
}

TEST_P(DemPhysics, StatusLeavingTheGridIsReportedNeverDropped) {
  DiskBatch b = head_on(0.5, 1, 1, 2.0, -1.0, -1.0);  // flying apart
  RolloutOptions o = opts(0.01, 100, 10);
  o.neighbors = Neighbors::CellList;
  o.grid_lo[0] = o.grid_lo[1] = -4;
  o.grid_hi[0] = o.grid_hi[1] = 4;
  const RolloutResult r = run(b, o);
  EXPECT_EQ(r.status_of(0), Status::OutOfGrid);
  EXPECT_TRUE(std::isnan(r.pos(99, 0, 0, 0))) << "frames after the stop are NaN";
  EXPECT_FALSE(std::isnan(r.pos(0, 0, 0, 0)));
}

TEST_P(DemPhysics, WallsElasticBounceKeepsSpeed) {
  DiskBatch b = DiskBatch::make(1, 1);
  b.r(0, 0) = 0.5;
  b.m(0, 0) = 2.0;
  b.v(0, 0, 0) = 1.0;
  b.v(0, 0, 1) = -0.5;
  RolloutOptions o = opts(1e-3, 30, 100, 1e3);
  o.walls = true;
  o.box_lo[0] = o.box_lo[1] = -2;
  o.box_hi[0] = o.box_hi[1] = 2;
  const RolloutResult r = run(b, o);
  int flips = 0;
  for (int f = 1; f < 30; ++f) flips += (r.vel(f, 0, 0, 0) > 0) != (r.vel(f - 1, 0, 0, 0) > 0);
  EXPECT_GE(flips, 1);
  const double sp = std::hypot(r.vel(29, 0, 0, 0), r.vel(29, 0, 0, 1));
  EXPECT_NEAR(sp, std::hypot(1.0, 0.5), 1e-4);
  for (int f = 0; f < 30; ++f) EXPECT_LT(std::fabs(r.pos(f, 0, 0, 0)), 2.0);
}

TEST_P(DemPhysics, WallsWithHiNotAboveLoNameTheAxis) {
  DiskBatch b = DiskBatch::make(1, 1);
  b.r(0, 0) = 0.5;
  b.m(0, 0) = 1.0;
  RolloutOptions o = opts(1e-3, 3, 1, 1e3);
  o.walls = true;
  o.box_lo[0] = o.box_lo[1] = -2;
  o.box_hi[0] = 2;
  o.box_hi[1] = -3;
  try {
    run(b, o);
    ADD_FAILURE() << "walls with box_hi[1] < box_lo[1] must be refused";
  } catch (const saltation::InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("box_hi[1]"), std::string::npos) << e.what();
  }
}

namespace {
// Three systems of 40 disks at rest on a line (no contacts): system 0 runs all frames; in
// system 1 disks 5 and 6 coincide (stops at the initial force: Coincident); disk 0 of system 2
// flies off so fast that its position overflows in the third step (NonFinite at frame 2). With
// 40 > 32 disks the CUDA driver runs a block per system, so the stops happen inside a team.
constexpr int kStopDisks = 40, kStopFrames = 5;
DiskBatch stopping_systems() {
  DiskBatch b = DiskBatch::make(3, kStopDisks);
  for (int s = 0; s < 3; ++s)
    for (int d = 0; d < kStopDisks; ++d) {
      b.r(s, d) = 0.4;
      b.m(s, d) = 1.0;
      b.x(s, d, 0) = 1.0 * d;
    }
  b.x(1, 6, 0) = b.x(1, 5, 0);
  b.v(2, 0, 0) = 6e7;  // x = k * dt * v: 6e307, 1.2e308, then past the largest double
  return b;
}
RolloutOptions stopping_options() {
  RolloutOptions o;
  o.dt = 1e300;
  o.n_frames = kStopFrames;
  o.stride = 1;
  o.neighbors = Neighbors::AllPairs;
  o.tangents = {{TangentKind::InitialVelocity, 0, 0}};
  return o;
}
LossSpec stopping_loss() {
  LossSpec l;
  l.observed.assign((size_t)kStopFrames * 2 * kStopDisks * 3, 0.0);
  return l;
}
void expect_stops(const RolloutResult& r) {
  EXPECT_EQ(r.status_of(0), Status::Finished);
  EXPECT_EQ(r.status_of(1), Status::Coincident);
  EXPECT_EQ(r.status_of(2), Status::NonFinite);
  for (int f = 0; f < kStopFrames; ++f)
    for (int d = 0; d < kStopDisks; ++d) {
      EXPECT_EQ(r.pos(f, 0, d, 0), 1.0 * d) << "frame " << f << " disk " << d;
      EXPECT_TRUE(std::isnan(r.pos(f, 1, d, 0))) << "a system stopped at the start has no frames";
      EXPECT_EQ(std::isnan(r.pos(f, 2, d, 1)), f >= 2) << "frame " << f << " disk " << d;
      EXPECT_EQ(std::isnan(r.dpos(f, 0, 2, d, 0)), f >= 2) << "frame " << f << " disk " << d;
    }
  EXPECT_TRUE(std::isfinite(r.loss[0]) && std::isfinite(r.grad[0]));
  EXPECT_TRUE(std::isnan(r.loss[1]) && std::isnan(r.loss[2])) << "no loss for a system that stopped";
  EXPECT_TRUE(std::isnan(r.grad[1]) && std::isnan(r.grad[2]));
}
}  // namespace

TEST_P(DemPhysics, StatusCoincidentAndNonFiniteStopTheirSystemOnly) {
  expect_stops(run(stopping_systems(), stopping_options(), stopping_loss()));
}

// The OpenMP team over the disks of one system (more threads than systems, a low team
// threshold): the stops are decided by the whole team, and every frame equals the serial path.
TEST(DemTeam, OpenMPTeamStopsLikeTheSerialPath) {
  const int threads_before = omp_get_max_threads();
  omp_set_num_threads(4);
  RolloutOptions team = stopping_options();
  team.cpu_team_threshold = 8;
  const RolloutResult on_team = rollout(stopping_systems(), team, stopping_loss(), Backend::Cpu);
  omp_set_num_threads(threads_before);
  expect_stops(on_team);
  const RolloutResult serial = rollout(stopping_systems(), stopping_options(), stopping_loss(), Backend::Cpu);
  EXPECT_EQ(on_team.status, serial.status);
  for (size_t i = 0; i < serial.x.size(); ++i)
    ASSERT_TRUE(on_team.x[i] == serial.x[i] || (std::isnan(on_team.x[i]) && std::isnan(serial.x[i]))) << i;
}

namespace {
// n_systems systems of n_disks disks: a jittered gas with two materials, or (with_stops) disks at
// rest on a line as in stopping_systems, where system 3 stops at the start (two disks coincide)
// and system 12 goes non-finite (with dt 1e300), so that groups of lanes hold stopped and running
// systems together.
DiskBatch lanes_batch(int n_systems, int n_disks, bool with_stops) {
  DiskBatch b = gas(n_systems, n_disks, 0.9, 0.5, 21);
  if (!with_stops) return b;
  for (int s = 0; s < n_systems; ++s)
    for (int d = 0; d < n_disks; ++d) {
      b.x(s, d, 0) = 3.0 * d;
      b.x(s, d, 1) = b.v(s, d, 0) = b.v(s, d, 1) = 0.0;
    }
  b.x(3, 1, 0) = b.x(3, 0, 0);
  b.v(12, 0, 0) = 6e7;
  return b;
}
}  // namespace

// The SIMD lanes (engine_lanes.cpp, docs/simd_lanes.md) against one system per call
// (SALTATION_SIMD=0): every output bitwise equal on each vector target this CPU has, for pairs
// (the compile-time pair body) and 3 disks, both normal models, friction, damping, walls, two
// materials, tangents of three kinds, a loss, a batch size that leaves a tail of single systems
// after the last full group, and groups in which some systems stop (coincident, non-finite).
TEST(DemLanes, BitwiseOneSystemPerCall) {
  std::vector<std::string> targets;
  for (const char* t : {"best", "avx2"}) {
    saltation::testing::SimdChoice choice(t);
    const int width = dem::detail::system_lanes().width;
    if (width > 0 && (targets.empty() || std::string(t) == "best" || width == 4)) targets.push_back(t);
  }
  if (targets.empty()) GTEST_SKIP() << "this CPU has no AVX2";
  int runs = 0;
  for (const int n_disks : {2, 3})
    for (const bool stops : {false, true})
      for (const NormalModel normal : {NormalModel::Linear, NormalModel::Hertz})
        for (const bool walls : {false, true}) {
          const int n_systems = 29;
          const DiskBatch b = lanes_batch(n_systems, n_disks, stops);
          RolloutOptions o = with_two_materials(stops ? stopping_options() : opts(1e-3, 12, 10), normal, true);
          o.neighbors = Neighbors::AllPairs;
          o.walls = walls;
          o.box_lo[0] = o.box_lo[1] = -1.0;
          o.box_hi[0] = 3.0 * n_disks;
          o.box_hi[1] = 1.5;
          o.tangents = {{TangentKind::LogStiffness}, {TangentKind::Damping}, {TangentKind::InitialVelocity, 1, 0}};
          if (n_disks == 2) o.tangents.resize(1);  // the compile-time pair body
          LossSpec loss;
          loss.observed.assign((size_t)o.n_frames * 2 * n_disks * n_systems, 0.25);
          RolloutResult one;
          {
            saltation::testing::SimdChoice off("0");
            one = rollout(b, o, loss, Backend::Cpu);
          }
          for (const std::string& target : targets) {
            saltation::testing::SimdChoice choice(target.c_str());
            const RolloutResult lanes = rollout(b, o, loss, Backend::Cpu);
            SCOPED_TRACE(target + ", " + std::to_string(n_disks) + " disks, stops " + std::to_string(stops) +
                         ", normal " + std::to_string((int)normal) + ", walls " + std::to_string(walls));
            expect_same_outputs(lanes, one);
            ++runs;
          }
          if (stops) {
            EXPECT_EQ(one.status_of(3), Status::Coincident);
            EXPECT_NE(one.status_of(12), Status::Finished);
            EXPECT_EQ(one.status_of(11), Status::Finished);
          } else {
            EXPECT_GT(max_abs(one.grad), 0.0) << "the tangents must see contacts";
          }
        }
  EXPECT_GE(runs, 16);
}

TEST(DemCuda, MatchesCpuWithin1e12) {
  SALTATION_SKIP_WITHOUT_CUDA_DEVICE();
  for (int n_disks : {4, 200}) {
    DiskBatch b = gas(n_disks == 4 ? 300 : 3, n_disks, 0.95, 0.5, 8);
    RolloutOptions o = opts(1e-3, 8, 20);
    o.materials = {Material{200.0, 0.8, 0.3, 1.0}, Material{300.0, 0.9, 0.3, 1.0}};
    o.tangential = true;
    o.normal = n_disks == 4 ? NormalModel::Linear : NormalModel::Hertz;
    o.neighbors = n_disks == 4 ? Neighbors::AllPairs : Neighbors::CellList;
    o.tangents = {{TangentKind::LogStiffness}, {TangentKind::InitialVelocity, 1, 1}};
    LossSpec l;
    l.observed.assign((size_t)8 * 2 * n_disks * b.n_systems, 0.1);
    const RolloutResult cpu = rollout(b, o, l, Backend::Cpu);
    const RolloutResult gpu = rollout(b, o, l, Backend::Cuda);
    EXPECT_EQ(gpu.backend, Backend::Cuda);
    EXPECT_EQ(cpu.status, gpu.status);
    EXPECT_LE(max_abs_diff(cpu.x, gpu.x), 1e-12 * max_abs(cpu.x)) << "n_disks=" << n_disks;
    EXPECT_LE(max_abs_diff(cpu.v, gpu.v), 1e-12 * max_abs(cpu.v)) << "n_disks=" << n_disks;
    EXPECT_LE(max_abs_diff(cpu.dx, gpu.dx), 1e-12 * max_abs(cpu.dx)) << "n_disks=" << n_disks;
    EXPECT_LE(max_abs_diff(cpu.loss, gpu.loss), 1e-12 * max_abs(cpu.loss)) << "n_disks=" << n_disks;
    EXPECT_LE(max_abs_diff(cpu.grad, gpu.grad), 1e-12 * max_abs(cpu.grad)) << "n_disks=" << n_disks;
  }
}

namespace {
template <class F>
void expect_invalid(F&& f, const std::string& param, long row) {
  try {
    f();
    ADD_FAILURE() << "expected InvalidInput for " << param;
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.parameter(), param) << e.what();
    EXPECT_EQ(e.row(), row) << e.what();
    EXPECT_NE(std::string(e.what()).find(param), std::string::npos);
  }
}
}  // namespace

TEST(DemBadInput, ClearErrorsNamingParameterAndSystem) {
  RolloutOptions o = opts(1e-3, 2, 2);
  auto pair3 = [] {
    DiskBatch b = DiskBatch::make(3, 2);
    for (int s = 0; s < 3; ++s)
      for (int d = 0; d < 2; ++d) b.r(s, d) = 0.5, b.m(s, d) = 1.0, b.x(s, d, 0) = 2.0 * d;
    return b;
  };
  {
    DiskBatch b = pair3();
    b.r(2, 1) = -0.1;
    expect_invalid([&] { rollout(b, o, Backend::Cpu); }, "radius", 2);
  }
  {
    DiskBatch b = pair3();
    b.m(1, 0) = 0.0;
    expect_invalid([&] { rollout(b, o, Backend::Cpu); }, "mass", 1);
  }
  for (double dt : {0.0, -1e-3}) {
    RolloutOptions bad = o;
    bad.dt = dt;
    expect_invalid([&] { rollout(pair3(), bad, Backend::Cpu); }, "dt", -1);
  }
  {
    RolloutOptions bad = o;
    bad.materials[0].restitution = 1.5;
    expect_invalid([&] { rollout(pair3(), bad, Backend::Cpu); }, "materials[0].restitution", -1);
  }
  {
    // 12 overlapping disks piled into one cell: overflow of a 8-disk cell.
    DiskBatch b = DiskBatch::make(2, 12);
    for (int s = 0; s < 2; ++s)
      for (int d = 0; d < 12; ++d) b.r(s, d) = 0.5, b.m(s, d) = 1.0, b.x(s, d, 0) = 3.0 * d * (s == 0);
    RolloutOptions c = o;
    c.neighbors = Neighbors::CellList;
    c.cell_capacity = 8;
    expect_invalid([&] { rollout(b, c, Backend::Cpu); }, "cell_capacity", 1);
  }
  {
    DiskBatch b = pair3();
    b.material[1] = 5;
    expect_invalid([&] { rollout(b, o, Backend::Cpu); }, "material", 1);  // [d*n_systems + b]: disk 0 of system 1
  }
}

// ---- the lockstep driver of the batched fits, with objectives that misbehave on purpose

namespace {
// Loss (theta - target_b)^2 for system b; `wrong_gradient` flips the gradient's sign.
dem::detail::BatchValues quadratic(const std::vector<int>& systems, const std::vector<double>& theta,
                                   bool wrong_gradient = false) {
  dem::detail::BatchValues v;
  for (size_t j = 0; j < systems.size(); ++j) {
    const double target = 2.0 + 0.5 * systems[j];
    v.loss.push_back((theta[j] - target) * (theta[j] - target));
    v.grad.push_back((wrong_gradient ? -2.0 : 2.0) * (theta[j] - target));
  }
  v.failure.resize(systems.size());
  return v;
}
const std::vector<double> kStart(4, 1.0), kLower(4, 0.0), kUpper(4, 10.0);
}  // namespace

TEST(DemLockstep, ConvergesAndCountsRounds) {
  const FitResult fit = dem::detail::minimize_in_lockstep(kStart, kLower, kUpper, FitOptions{},
                                                          [](auto& s, auto& t) { return quadratic(s, t); });
  for (int b = 0; b < 4; ++b) {
    EXPECT_EQ(fit.outcome[b], FitConverged) << fit.message[b];
    EXPECT_NEAR(fit.theta[b], 2.0 + 0.5 * b, 1e-8);
  }
  EXPECT_EQ(dem::detail::live_solvers(), 0);
}

TEST(DemLockstep, ObjectiveThrowingInRound2PropagatesAndUnwindsEverySolver) {
  int round = 0;
  try {
    dem::detail::minimize_in_lockstep(kStart, kLower, kUpper, FitOptions{}, [&](auto& s, auto& t) {
      if (++round == 2) throw std::runtime_error("device lost in round 2");
      return quadratic(s, t);
    });
    ADD_FAILURE() << "the objective's exception must propagate";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "device lost in round 2");
  }
  EXPECT_EQ(round, 2);
  EXPECT_EQ(dem::detail::live_solvers(), 0) << "every suspended solver is unwound";
  // The next fit on this thread starts from a clean state.
  const FitResult again = dem::detail::minimize_in_lockstep(kStart, kLower, kUpper, FitOptions{},
                                                            [](auto& s, auto& t) { return quadratic(s, t); });
  EXPECT_EQ(again.outcome[3], FitConverged);
}

TEST(DemLockstep, OutOfMemoryIsNotALineSearchStall) {
  int round = 0;
  EXPECT_THROW(dem::detail::minimize_in_lockstep(kStart, kLower, kUpper, FitOptions{},
                                                 [&](auto& s, auto& t) {
                                                   if (++round == 3) throw std::bad_alloc();
                                                   return quadratic(s, t);
                                                 }),
               std::bad_alloc);
  EXPECT_EQ(dem::detail::live_solvers(), 0);
}

TEST(DemLockstep, LineSearchFailureIsAStallAtTheLastAcceptedIterate) {
  // A gradient of the wrong sign: every search direction goes uphill, More-Thuente gives up.
  const FitResult fit = dem::detail::minimize_in_lockstep(kStart, kLower, kUpper, FitOptions{},
                                                          [](auto& s, auto& t) { return quadratic(s, t, true); });
  for (int b = 0; b < 4; ++b) {
    EXPECT_EQ(fit.outcome[b], FitLineSearchStalled) << fit.message[b];
    EXPECT_FALSE(fit.message[b].empty());
    EXPECT_EQ(fit.theta[b], 1.0) << "no step was accepted: the initial point";
  }
}

TEST(DemLockstep, MissingValueEndsThatSystemWithItsMessage) {
  int round = 0;
  const FitResult fit = dem::detail::minimize_in_lockstep(kStart, kLower, kUpper, FitOptions{}, [&](auto& s, auto& t) {
    dem::detail::BatchValues v = quadratic(s, t);
    if (++round == 2)
      for (size_t j = 0; j < s.size(); ++j)
        if (s[j] == 1) v.failure[j] = "engine: coincident";
    return v;
  });
  EXPECT_EQ(fit.outcome[1], FitError);
  EXPECT_EQ(fit.message[1], "engine: coincident");
  for (int b : {0, 2, 3}) EXPECT_EQ(fit.outcome[b], FitConverged) << fit.message[b];
  EXPECT_EQ(dem::detail::live_solvers(), 0);
}

SALTATION_INSTANTIATE_ON_EVERY_BACKEND(DemPhysics);
