#pragma once
// Independent checks of the impact pendulum without damping (c = 0), where the energy
// omega^2 / 2 - k cos(phi), k = g / L, is conserved between impacts:
//  - the speed at the first impact: omega_1^2 = omega_0^2 + 2 k (cos(wall) - cos(phi0));
//  - every later impact: the bob leaves the wall at -e omega, swings out and comes back to the
//    wall with the speed it left at, so omega_(n+1) = e omega_n;
//  - the first impact time t_1 = integral from phi0 to wall of dphi / omega(phi), and its
//    derivatives by differentiating under the integral, by quadrature.
// Valid while the bob swings towards the wall from the start (omega > 0 on [phi0, wall]).
#include <cmath>
#include <functional>

#include "impact_pendulum.hpp"

namespace pendulum {

struct FirstImpact {
  double speed;  // omega_1
  double d_speed_d_omega0;
  double time;                       // t_1
  double d_time[ImpactPendulum::P];  // d t_1 / d theta (the c entry is left 0: c = 0 here)
};

// Composite Simpson rule on [a, b] with 2 * 2000 intervals: the integrands are smooth.
inline double simpson(const std::function<double(double)>& f, double a, double b) {
  const int n = 4000;
  const double h = (b - a) / n;
  double sum = f(a) + f(b);
  for (int i = 1; i < n; ++i) sum += (i % 2 ? 4.0 : 2.0) * f(a + i * h);
  return sum * h / 3.0;
}

inline FirstImpact first_impact(double gravity, const double* theta) {
  using P = ImpactPendulum::Param;
  const double phi0 = theta[P::Phi0], w0 = theta[P::Omega0], L = theta[P::Length], wall = theta[P::Wall];
  const double k = gravity / L;
  auto omega = [&](double phi) { return std::sqrt(w0 * w0 + 2.0 * k * (std::cos(phi) - std::cos(phi0))); };
  FirstImpact r{};
  r.speed = omega(wall);
  r.d_speed_d_omega0 = w0 / r.speed;
  r.time = simpson([&](double phi) { return 1.0 / omega(phi); }, phi0, wall);
  auto cube = [&](double phi) { return std::pow(omega(phi), 3); };
  // d omega / d x along the path, divided by omega^2 and integrated with a minus sign.
  r.d_time[P::Omega0] = -simpson([&](double phi) { return w0 / cube(phi); }, phi0, wall);
  const double d_time_d_k =
      -simpson([&](double phi) { return (std::cos(phi) - std::cos(phi0)) / cube(phi); }, phi0, wall);
  r.d_time[P::Length] = d_time_d_k * (-gravity / (L * L));
  r.d_time[P::Phi0] = -1.0 / w0 - simpson([&](double phi) { return k * std::sin(phi0) / cube(phi); }, phi0, wall);
  r.d_time[P::Wall] = 1.0 / r.speed;
  return r;
}

}  // namespace pendulum
