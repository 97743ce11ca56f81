#include "layer_options.hpp"

#include "layouts.hpp"
#include "option_checks.hpp"

namespace attn_viz_cli {

void add_layer_options(CLI::App* cmd, attn_viz::LayerSource& source, LayerOptionValues& values) {
    cmd->add_option("--layout", source.layout,
                    "Tensor naming of a .safetensors checkpoint: torch-mha, bert, gpt2 or llama")
        ->check(CLI::IsMember(attn_viz::layout_names()));
    cmd->add_option("--layer", source.layer, "Which layer of the checkpoint (default 0)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--num-heads", source.options.num_heads, "Query heads (default: config.json beside the checkpoint)")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--num-kv-heads", source.options.num_kv_heads,
                    "Key/value heads for grouped-query attention (llama)")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--rope", values.rope,
                    "Rotary position embedding: none, interleaved or half (default: the layout's)")
        ->check(CLI::IsMember({"none", "interleaved", "half", "half-split", "half_split"}));
    cmd->add_option("--rope-base", source.options.rope_base, "RoPE base (default: config rope_theta, else 10000)")
        ->check(finite_number(NumberSign::positive));
    cmd->add_flag("--causal", values.causal, "Causal mask (query i sees keys j <= i), overriding the file or layout");
    cmd->add_flag("--no-causal", values.no_causal, "No causal mask, overriding the file or layout")
        ->excludes("--causal");
    cmd->add_option("--prefix", source.options.prefix,
                    "Tensor-name prefix replacing the layout's ({layer} = layer index)");
    cmd->add_option("--config", source.options.config_path,
                    "Hugging Face config.json (default: the one beside the checkpoint)")
        ->check(CLI::ExistingFile);
}

void resolve_layer_options(attn_viz::LayerSource& source, const LayerOptionValues& values) {
    if (!values.rope.empty()) source.options.rope = attn_viz::parse_rope_style(values.rope);
    if (values.causal) source.options.causal = true;
    if (values.no_causal) source.options.causal = false;
}

}  // namespace attn_viz_cli
