#pragma once
// telar sim over many cases in one process (docs/sim.md, "Sweeps"): the lines of a file of
// STONNE command lines (--cases FILE), or one command over the values of its flags (--sweep
// NAME=V1,V2,...; several --sweep: every combination), run on every core (--jobs). Every case
// is checked before any runs; each writes its stats files into a directory of its own under
// --out, and summary.csv gets a row per case.
#include "cli/sim_request.hpp"

namespace telar::cli {

// `base`: the command line's options (applied to every case; a case's line may override them)
// and, with --sweep, the command swept. Returns the exit status: 0 when every case ran and
// matched its reference, 1 otherwise (the failures are in summary.csv and on stderr).
int run_sim_sweep(const SimRequest& base, const SweepFlags& flags);

}  // namespace telar::cli
