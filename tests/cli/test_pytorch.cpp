// attn-viz against PyTorch's torch.nn.MultiheadAttention (scripts/reference.py, Debian's python3-torch).
#include <string>

#include <doctest/doctest.h>

#include "npy.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

int heads_of(const std::string& args) { return std::stoi(args.substr(args.find("--heads ") + 8)); }

}  // namespace

TEST_SUITE("python") {

TEST_CASE("per-head weights and output match torch.nn.MultiheadAttention") {
    struct Config {
        const char* args;
        bool cross;
    };
    const Config configs[] = {
        {"--d-model 12 --heads 3 --tokens 7", false},
        {"--d-model 16 --heads 1 --tokens 1", false},
        {"--d-model 30 --heads 5 --tokens 11 --no-bias", false},
        {"--d-model 24 --heads 4 --tokens 9 --causal", false},
        {"--d-model 12 --heads 2 --tokens 8 --padding 1,6", false},
        {"--d-model 12 --heads 3 --tokens 6 --causal --padding 3", false},
        {"--d-model 20 --heads 4 --tokens 5 --context 9 --padding 0,7", true},
    };
    const unsigned seed = static_cast<unsigned>(rng()() % 100000);
    for (const Config& c : configs) {
        CAPTURE(c.args);
        ScratchDir dir;
        CommandResult made =
            run_command(std::string("/usr/bin/python3 " + source_dir() + "/scripts/reference.py --out ") +
                        dir.path().string() + " --seed " + std::to_string(seed) + " " + c.args);
        REQUIRE_MESSAGE(made.exit_code == 0, made.output);
        CommandResult r =
            run_attn_viz("run -q --weights " + (dir / "weights.json") + " --input " + (dir / "input.json") +
                         (c.cross ? " --context " + (dir / "context.json") : std::string()) + " --out " +
                         (dir / "out") + " --dump-attention " + (dir / "a.npy") + " --dump-output " + (dir / "o.npy"));
        REQUIRE_MESSAGE(r.exit_code == 0, r.output);
        CHECK(max_abs_diff(read_npy(dir / "a.npy"), read_npy(dir / "expected_attention.npy")) < 1e-5);
        CHECK(max_abs_diff(read_npy(dir / "o.npy"), read_npy(dir / "expected_output.npy")) < 1e-5);

        // The same module read straight from its state_dict with --layout torch-mha.
        const bool causal = std::string(c.args).find("--causal") != std::string::npos;
        CommandResult st = run_attn_viz(
            "run -q --weights " + (dir / "mha.safetensors") + " --layout torch-mha --num-heads " +
            std::to_string(heads_of(c.args)) + (causal ? " --causal" : "") + " --input " + (dir / "input.json") +
            (c.cross ? " --context " + (dir / "context.json") : std::string()) + " --out " + (dir / "out2") +
            " --dump-attention " + (dir / "a2.npy") + " --dump-output " + (dir / "o2.npy"));
        REQUIRE_MESSAGE(st.exit_code == 0, st.output);
        CHECK(max_abs_diff(read_npy(dir / "a2.npy"), read_npy(dir / "expected_attention.npy")) < 1e-5);
        CHECK(max_abs_diff(read_npy(dir / "o2.npy"), read_npy(dir / "expected_output.npy")) < 1e-5);
    }
}

}  // TEST_SUITE("python")
