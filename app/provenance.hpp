// What a run's results came from, recorded in stats.json (and compare.json) as "provenance":
// attn-viz's version, the command line, every file the run read with its size and SHA-256 (the
// lib/core input_files registry lists them), and the seed of randomly made inputs.
#pragma once

#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

namespace attn_viz_cli {

// Remembers the command line; main() calls it once, before parsing.
void record_command_line(int argc, char** argv);

// {"tool": "attn-viz", "version": "0.1.0", "command_line": ["attn-viz", "run", ...],
//  "inputs": [{"path", "role", "bytes", "sha256"}, ...] (sorted by path), "seed": N (only when
// given)}. Call it once every input has been read: each is hashed now (the pictures' font is
// not an input).
nlohmann::json run_provenance(std::optional<uint64_t> seed = std::nullopt);

}  // namespace attn_viz_cli
