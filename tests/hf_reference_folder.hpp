// Random Hugging Face model folders with their expected float64 forward, written by the Python
// references (scripts/reference_hf_llama.py, scripts/reference_hf_transformer.py).
#pragma once

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "support.hpp"

namespace test_support {

inline std::vector<int> read_ids(const std::string& path) {
    std::istringstream numbers(read_text(path));
    std::vector<int> ids;
    for (int id; numbers >> id;) ids.push_back(id);
    return ids;
}

// "1,2,3": ids as --tokens and --target-tokens take them.
inline std::string id_list(const std::vector<int>& ids) {
    std::string list;
    for (int id : ids) list += (list.empty() ? "" : ",") + std::to_string(id);
    return list;
}

// Writes a reference model folder into `dir` with scripts/`script` and `arguments`, seeded from rng().
inline void make_reference_folder(const ScratchDir& dir, const std::string& script, const std::string& arguments) {
    const CommandResult made =
        run_command("/usr/bin/python3 " + source_dir() + "/scripts/" + script + " --out " + dir.path().string() +
                    " --seed " + std::to_string(rng()() % 100000) + " " + arguments);
    REQUIRE_MESSAGE(made.exit_code == 0, made.output);
}

// The largest magnitude in `t`, at least 1: the scale a relative tolerance applies to.
inline double magnitude(const attn_viz::Tensor& t) {
    double largest = 1.0;
    for (float v : t.data) largest = std::max(largest, std::fabs(double(v)));
    return largest;
}

}  // namespace test_support
