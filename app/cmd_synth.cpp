// attn-viz synth: writes the planted-heads layer (ground truth for the analysis) as a weights
// file and an input file.
#include <cstdio>
#include <sstream>

#include "commands.hpp"
#include "option_checks.hpp"
#include "output_dir.hpp"
#include "output_options.hpp"
#include "synth_layer.hpp"
#include "utf8.hpp"

namespace attn_viz_cli {
namespace {

struct SynthOptions {
    std::string sentence;
    uint64_t seed = 1;
    OutputOptionValues output;
};

void declare_synth_options(CLI::App* cmd, SynthOptions& o) {
    cmd->description(
        "Write a layer with planted heads (previous-token, sink, uniform, self, two identical next-token heads) "
        "and its input: ground truth for the analysis.");
    add_output_options(cmd, o.output, {"Output directory: weights.json (attn-viz/weights@1) and input.json"});
    cmd->add_option("--tokens", o.sentence,
                    "Words of the input, separated by spaces (2 to 64; default: a 12-word sentence)")
        ->check(refuse_empty("names no word"));
    cmd->add_option("--seed", o.seed, "Seed for the content vectors and value/output weights (default 1)")
        ->transform(whole_number_u64());
}

int synth(const SynthOptions& o) {
    using namespace attn_viz;
    std::vector<std::string> tokens;
    std::istringstream words(o.sentence);
    for (std::string word; words >> word;) tokens.push_back(escape_invalid_utf8(word));
    if (o.sentence.empty()) tokens = planted_demo_tokens();
    const PlantedLayer layer = make_planted_layer(tokens, o.seed);
    OutputDir out(o.output.out, o.output.force);
    write_planted_layer(out.file("weights.json"), out.file("input.json"), layer);
    out.commit();
    if (!o.output.quiet) {
        std::printf("planted heads:");
        for (size_t h = 0; h < layer.planted.size(); ++h) std::printf(" %zu=%s", h, layer.planted[h].c_str());
        std::printf(" (heads %lld and %lld identical)\nwrote %s/weights.json and %s/input.json\n",
                    static_cast<long long>(layer.identical_a), static_cast<long long>(layer.identical_b),
                    o.output.out.c_str(), o.output.out.c_str());
    }
    return 0;
}

}  // namespace

void add_synth_command(CLI::App& app, CommandAction& action) {
    add_command(app, action, "synth", declare_synth_options, synth);
}

}  // namespace attn_viz_cli
