// Synthetic GGUF models for CLI tests, written by scripts/make_synthetic_gguf.py.
#pragma once

#include <cstdint>
#include <string>

#include <doctest/doctest.h>

#include "support.hpp"

namespace test_support {

// The shape of a model scripts/make_synthetic_gguf.py writes.
struct SyntheticShape {
    int64_t dim, layers, heads, kv_heads, ffn, vocab;
};

// scripts/make_synthetic_gguf.py's model of shape `s` and type `type` (F32, F16, Q8_0, Q4_K) at
// `path`, drawn from `seed` (REQUIREd to succeed).
inline void make_synthetic_gguf(const std::string& path, const std::string& type, const SyntheticShape& s,
                                unsigned seed) {
    const CommandResult made =
        run_command("/usr/bin/python3 " + source_dir() + "/scripts/make_synthetic_gguf.py --out " + path + " --type " +
                    type + " --dim " + std::to_string(s.dim) + " --layers " + std::to_string(s.layers) + " --heads " +
                    std::to_string(s.heads) + " --kv-heads " + std::to_string(s.kv_heads) + " --ffn " +
                    std::to_string(s.ffn) + " --vocab " + std::to_string(s.vocab) + " --seed " + std::to_string(seed));
    REQUIRE_MESSAGE(made.exit_code == 0, made.output);
}

}  // namespace test_support
