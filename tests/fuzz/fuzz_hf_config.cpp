// libFuzzer target: Hugging Face config.json files (read_hf_config). Whatever it accepts must be
// in the ranges it promises: counts in 1..2^24, a RoPE base above 1, RoPE scaling parameters
// that validate_layer accepts.
#include <optional>
#include <string>

#include "fuzz_support.hpp"
#include "hf_config.hpp"

namespace {

bool in_range(const std::optional<int64_t>& count) { return !count || (*count >= 1 && *count <= (int64_t{1} << 24)); }

void read_config(const std::string& path) {
    const attn_viz::HfConfig config = attn_viz::read_hf_config(path);
    if (!in_range(config.num_heads) || !in_range(config.num_kv_heads) || !in_range(config.d_model) ||
        !in_range(config.num_layers) || (config.rope_base && !(*config.rope_base > 1.0)))
        __builtin_trap();
    const attn_viz::RopeScaling& s = config.rope_scaling_parameters;
    if (s.kind != attn_viz::RopeScaling::Kind::none &&
        !(s.factor > 0 && s.low_freq_factor > 0 && s.high_freq_factor > s.low_freq_factor &&
          s.original_max_positions > 0))
        __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    ATTN_VIZ_FUZZ_EXPECT_CLEAN(read_config(attn_viz_fuzz::write_scratch_file(data, size, "config.json")));
    return 0;
}
