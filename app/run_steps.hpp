// The last steps `run` and `model` share: committing the staged outputs and printing --timings.
#pragma once

#include <string>

#include "output_dir.hpp"
#include "timings.hpp"

namespace attn_viz_cli {

// Moves the staged outputs into place, timed as "commit".
void commit_outputs(attn_viz::OutputDir& out, attn_viz::Timings& timings);

// "  attention rate 12.3 GFLOP/s (0.456 GFLOP)\n": `flops` over the time spent in "attention".
std::string attention_rate(const attn_viz::Timings& timings, double flops);

// "  peak RSS   12.3 MB\n": the process's peak resident memory so far.
std::string peak_memory_line();

// --timings: the time of each stage on stderr, then `extra` (after stdout is flushed, so the two
// do not interleave).
void print_timings(const attn_viz::Timings& timings, const std::string& extra = "");

}  // namespace attn_viz_cli
