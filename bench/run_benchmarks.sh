#!/usr/bin/env bash
# Runs the CPU benchmarks of an existing build (this script builds nothing) and writes their
# outputs into bench/results/cpu/ (or $SALTATION_RESULTS_DIR):
#   machine.txt                 lscpu, date, load, git revision, the exact commands
#   bench_sensitivity.txt/.json console table + Google Benchmark JSON (--benchmark_out)
#   sensitivity_summary.json/.csv  ratio per P, least-squares fit against P
#   bench_engine.txt/.json      per-step cost vs Boost.Odeint, batch size, bump count, event density
# Usage: bench/run_benchmarks.sh BUILD_DIR
#   e.g. cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DSALTATION_ENABLE_CUDA=OFF
#        cmake --build build-bench -j2 --target bench_sensitivity bench_engine
#        bench/run_benchmarks.sh build-bench
# Environment: SENS_FILTER / ENGINE_FILTER override the --benchmark_filter regexes;
# SENS_REPS overrides the sensitivity benchmark's repetitions (default: 3, built in);
# SALTATION_BENCH_REV describes the source tree when it is not a git checkout (e.g. an export
# of one commit made with `git archive`).
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${SALTATION_RESULTS_DIR:-$here/results/cpu}
mkdir -p "$out"

sens_bin=$build/bench/bench_sensitivity
engine_bin=$build/bench/bench_engine
for b in "$sens_bin" "$engine_bin"; do
  [[ -x $b ]] || { echo "missing $b: build the bench targets first" >&2; exit 1; }
done

sens_filter=${SENS_FILTER:-sensitivity/}
engine_filter=${ENGINE_FILTER:-perstep/|batch/|bumps/|events/}
sens_extra=()
[[ -n ${SENS_REPS:-} ]] && sens_extra+=(--benchmark_repetitions="$SENS_REPS")

sens_cmd=("$sens_bin" --benchmark_filter="$sens_filter" "${sens_extra[@]}" --benchmark_color=false
          --json "$out/sensitivity_summary.json"
          --benchmark_out="$out/bench_sensitivity.json" --benchmark_out_format=json)
engine_cmd=("$engine_bin" --benchmark_filter="$engine_filter" --benchmark_color=false
            --benchmark_out="$out/bench_engine.json" --benchmark_out_format=json)

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "host: $(uname -srm)"
  if [[ -n ${SALTATION_BENCH_REV:-} ]]; then
    echo "source: $SALTATION_BENCH_REV"
  else
    echo "git: $(git -C "$here/.." rev-parse HEAD 2>/dev/null || echo unknown)$(git -C "$here/.." diff --quiet HEAD -- include src 2>/dev/null || echo ' (include/ or src/ had uncommitted changes)')"
  fi
  echo "compiler: $(grep -m1 '^CMAKE_CXX_COMPILER:' "$build/CMakeCache.txt" 2>/dev/null | cut -d= -f2) $(grep -m1 '^CMAKE_BUILD_TYPE:' "$build/CMakeCache.txt" 2>/dev/null | cut -d= -f2) flags: $(grep -m1 '^CMAKE_CXX_FLAGS_RELEASE:' "$build/CMakeCache.txt" 2>/dev/null | cut -d= -f2)"
  echo "load before: $(cat /proc/loadavg)"
  echo "commands:"
  echo "  ${sens_cmd[*]}"
  echo "  ${engine_cmd[*]}"
  echo
  lscpu | head -20
} > "$out/machine.txt"

SALTATION_BENCH_CSV="$out/sensitivity_summary.csv" "${sens_cmd[@]}" 2>&1 | tee "$out/bench_sensitivity.txt"
"${engine_cmd[@]}" 2>&1 | tee "$out/bench_engine.txt"
echo "load after: $(cat /proc/loadavg)" >> "$out/machine.txt"
echo "results in $out"
