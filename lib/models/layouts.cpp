// The layout presets: tensor names, orientations and defaults of each framework's attention layer.
#include "layouts.hpp"

#include <functional>

#include <fmt/format.h>

#include "error.hpp"

namespace attn_viz {
namespace {

struct LayerContext;
using BuildLayer = std::function<LayerWeights(const LayerContext&)>;

struct Preset {
    std::string name;
    std::vector<std::string> default_prefixes;
    std::string layer_path;  // "encoder.layer.{layer}." ('' for torch-mha)
    std::string probe;       // a tensor every layer has, after layer_path
    bool causal;
    RopeStyle rope;
    BuildLayer build;
};

// Everything one layer's builder needs: where names start, head counts and error context.
struct LayerContext {
    const TensorSource& file;
    std::string base;   // prefix + layer path, e.g. "bert.encoder.layer.3."
    std::string where;  // "<file>: layer 3 (bert)"
    const LayoutOptions& options;
    const HfConfig& config;

    bool has(const std::string& suffix) const { return file.contains(fmt::format("{}{}", base, suffix)); }

    // The tensor base + suffix, which must exist and have `shape` (-1 = any size).
    Tensor get(const std::string& suffix, const std::vector<int64_t>& shape) const {
        const std::string name = fmt::format("{}{}", base, suffix);
        if (!file.contains(name)) fail_input(where, fmt::format("missing tensor '{}'", name));
        const std::vector<int64_t>& actual = file.shape(name);
        bool ok = actual.size() == shape.size();
        for (size_t i = 0; ok && i < shape.size(); ++i) ok = shape[i] < 0 || shape[i] == actual[i];
        if (!ok)
            fail_input(where, fmt::format("tensor '{}' has shape {}, expected {}", name, shape_string(actual),
                                          shape_string(shape)));
        return file.load(name);
    }
    // Like get, or an empty tensor when absent.
    Tensor get_optional(const std::string& suffix, const std::vector<int64_t>& shape) const {
        return has(suffix) ? get(suffix, shape) : Tensor{};
    }

    int64_t num_heads() const {
        if (!options.num_heads && !config.num_heads)
            fail_input(where, "number of heads unknown: no config.json with num_attention_heads beside the checkpoint",
                       Remedy::give_num_heads);
        const int64_t heads = options.num_heads ? *options.num_heads : *config.num_heads;
        if (heads <= 0) fail_input(where, fmt::format("the number of heads must be positive, not {}", heads));
        return heads;
    }
};

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    return text;
}

// Columns [begin, begin + count) of a [rows, cols] matrix.
Tensor columns_of(const Tensor& m, int64_t begin, int64_t count) {
    const int64_t rows = m.dim(0), cols = m.dim(1);
    Tensor part({rows, count});
    for (int64_t r = 0; r < rows; ++r)
        std::copy(m.data.begin() + r * cols + begin, m.data.begin() + r * cols + begin + count,
                  part.data.begin() + r * count);
    return part;
}

// Query heads and head size from Q's width; as many key/value heads (presets with GQA override).
void set_equal_heads(LayerWeights& w, const LayerContext& c, int64_t q_width) {
    w.num_heads = c.num_heads();
    if (q_width % w.num_heads != 0)
        fail_input(c.where, fmt::format("width {} is not divisible by {} heads", q_width, w.num_heads));
    w.num_kv_heads = w.num_heads;
    w.d_head = q_width / w.num_heads;
}

// Fused q/k/v projections: torch's in_proj_weight [3D, D] stacks q, k, v rows ([out, in]);
// GPT-2's Conv1D c_attn [D, 3D] holds their columns already as x W. The fused bias [3D] and the
// output projection ([out, in] for torch, x W for Conv1D) follow the same orientation.
struct FusedNames {
    const char* qkv_weight;
    const char* qkv_bias;
    const char* out_weight;
    const char* out_bias;
    bool out_in;  // true: torch [out, in]; false: Conv1D [in, out]
};

LayerWeights build_fused(const LayerContext& c, const FusedNames& n) {
    const Tensor qkv = c.get(n.qkv_weight, {-1, -1});
    const int64_t d = n.out_in ? qkv.dim(1) : qkv.dim(0);
    if ((n.out_in ? qkv.dim(0) : qkv.dim(1)) != 3 * d)
        fail_input(c.where, fmt::format("tensor '{}{}' has shape {}, expected {}", c.base, n.qkv_weight,
                                        shape_string(qkv.shape), n.out_in ? "[3D, D]" : "[D, 3D]"));
    LayerWeights w;
    w.d_model = d;
    set_equal_heads(w, c, d);
    Tensor* projections[3] = {&w.w_q, &w.w_k, &w.w_v};
    for (int64_t i = 0; i < 3; ++i)
        *projections[i] = n.out_in ? transposed(rows_of(qkv, i * d, d)) : columns_of(qkv, i * d, d);
    const Tensor out = c.get(n.out_weight, {d, d});
    w.w_o = n.out_in ? transposed(out) : out;
    if (c.has(n.qkv_bias)) {
        const Tensor bias = c.get(n.qkv_bias, {3 * d});
        w.b_q = rows_of(bias, 0, d), w.b_k = rows_of(bias, d, d), w.b_v = rows_of(bias, 2 * d, d);
    }
    w.b_o = c.get_optional(n.out_bias, {d});
    return w;
}

LayerWeights build_torch_mha(const LayerContext& c) {
    return build_fused(c, {"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias", true});
}

LayerWeights build_gpt2(const LayerContext& c) {
    return build_fused(c, {"attn.c_attn.weight", "attn.c_attn.bias", "attn.c_proj.weight", "attn.c_proj.bias", false});
}

// Separate q, k, v and output Linear layers ([out, in], each "<name>.weight" and optional
// "<name>.bias"). With `grouped_kv` (llama) K and V may have fewer heads than Q (GQA), and the head
// size is q's width / H; otherwise K and V have as many heads as Q.
struct SeparateNames {
    const char* q;
    const char* k;
    const char* v;
    const char* o;
    bool grouped_kv;
};

LayerWeights build_separate(const LayerContext& c, const SeparateNames& n) {
    const std::string q_name = fmt::format("{}.weight", n.q), k_name = fmt::format("{}.weight", n.k);
    const Tensor q = c.get(q_name, {-1, -1});
    const int64_t d = q.dim(1), q_width = q.dim(0);
    LayerWeights w;
    w.d_model = d;
    set_equal_heads(w, c, q_width);
    if (n.grouped_kv) {
        w.num_kv_heads = c.options.num_kv_heads  ? *c.options.num_kv_heads
                         : c.config.num_kv_heads ? *c.config.num_kv_heads
                                                 : w.num_heads;
        if (w.num_kv_heads <= 0 || w.num_heads % w.num_kv_heads != 0)
            fail_input(c.where,
                       fmt::format("key/value heads ({}) must divide the {} query heads", w.num_kv_heads, w.num_heads));
    }
    const int64_t kv_width = w.num_kv_heads * w.d_head;
    const Tensor k = c.get(k_name, {-1, d});
    if (k.dim(0) != kv_width)
        fail_input(c.where,
                   fmt::format("tensor '{}{}' has {} outputs, expected {} key/value heads x {}", c.base, k_name,
                               k.dim(0), w.num_kv_heads, w.d_head),
                   n.grouped_kv ? Remedy::give_num_kv_heads : Remedy::none);
    w.w_q = transposed(q);
    w.w_k = transposed(k);
    w.w_v = transposed(c.get(fmt::format("{}.weight", n.v), {kv_width, d}));
    w.w_o = transposed(c.get(fmt::format("{}.weight", n.o), {d, q_width}));
    w.b_q = c.get_optional(fmt::format("{}.bias", n.q), {q_width});
    w.b_k = c.get_optional(fmt::format("{}.bias", n.k), {kv_width});
    w.b_v = c.get_optional(fmt::format("{}.bias", n.v), {kv_width});
    w.b_o = c.get_optional(fmt::format("{}.bias", n.o), {d});
    return w;
}

LayerWeights build_bert(const LayerContext& c) {
    return build_separate(
        c, {"attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense", false});
}

// Qwen2 adds q/k/v biases; Llama, Mistral and Qwen2 have none on o_proj (read when present).
LayerWeights build_llama(const LayerContext& c) {
    return build_separate(c, {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", true});
}

const std::vector<Preset>& presets() {
    static const std::vector<Preset> all = {
        {"torch-mha", {""}, "", "in_proj_weight", false, RopeStyle::none, build_torch_mha},
        {"bert",
         {"", "bert.", "roberta."},
         "encoder.layer.{layer}.",
         "attention.self.query.weight",
         false,
         RopeStyle::none,
         build_bert},
        {"gpt2", {"", "transformer."}, "h.{layer}.", "attn.c_attn.weight", true, RopeStyle::none, build_gpt2},
        {"llama", {""}, "model.layers.{layer}.", "self_attn.q_proj.weight", true, RopeStyle::half_split, build_llama},
    };
    return all;
}

const Preset& find_preset(const std::string& layout) {
    for (const Preset& p : presets())
        if (p.name == layout) return p;
    throw Error(ErrorKind::usage,
                fmt::format("unknown layout '{}' (known: {})", layout, fmt::join(layout_names(), ", ")));
}

// prefix + layer path for one layer, with "{layer}" filled in.
std::string layer_base(const std::string& prefix, const Preset& preset, int layer) {
    return replace_all(fmt::format("{}{}", prefix, preset.layer_path), "{layer}", fmt::to_string(layer));
}

// The prefix under which the file holds this preset's layer 0 ("" candidates first), or null.
const std::string* find_prefix(const TensorSource& file, const Preset& preset, const LayoutOptions& options) {
    if (options.prefix)
        return file.contains(layer_base(*options.prefix, preset, 0) + preset.probe) ? &*options.prefix : nullptr;
    for (const std::string& prefix : preset.default_prefixes)
        if (file.contains(layer_base(prefix, preset, 0) + preset.probe)) return &prefix;
    return nullptr;
}

}  // namespace

const std::vector<std::string>& layout_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> n;
        for (const Preset& p : presets()) n.push_back(p.name);
        return n;
    }();
    return names;
}

RopeStyle parse_rope_style(const std::string& text) {
    if (text == "none") return RopeStyle::none;
    if (text == "interleaved") return RopeStyle::interleaved;
    if (text == "half" || text == "half_split" || text == "half-split") return RopeStyle::half_split;
    throw Error(ErrorKind::usage,
                fmt::format("unknown rotary embedding style '{}' (known: none, interleaved, half)", text));
}

int count_layers(const TensorSource& file, const std::string& layout, const LayoutOptions& options) {
    const Preset& preset = find_preset(layout);
    const std::string* prefix = find_prefix(file, preset, options);
    if (!prefix) return 0;
    if (layer_base(*prefix, preset, 0) == layer_base(*prefix, preset, 1)) return 1;  // no "{layer}" in the names
    int n = 0;
    while (file.contains(layer_base(*prefix, preset, n) + preset.probe)) ++n;
    return n;
}

LayerWeights load_layer(const TensorSource& file, const std::string& layout, int layer, const LayoutOptions& options,
                        const HfConfig& config) {
    const Preset& preset = find_preset(layout);
    const std::string where = fmt::format("{}: layer {} ({})", file.path(), layer, layout);

    // Step 1: find the prefix and check the layer exists.
    const std::string* prefix = find_prefix(file, preset, options);
    if (!prefix) {
        const std::vector<std::string> names = file.names();
        std::string sample;
        for (size_t i = 0; i < names.size() && i < 3; ++i) sample += fmt::format("{}{}'", i ? ", '" : "'", names[i]);
        fail_input(file.path(),
                   fmt::format("holds no {} layer: expected a tensor '{}{}' (its tensors start {})", layout,
                               layer_base(options.prefix.value_or(preset.default_prefixes.front()), preset, 0),
                               preset.probe, sample.empty() ? "<none>" : sample),
                   Remedy::change_layout);
    }
    const int layers = count_layers(file, layout, options);
    if (layer < 0 || layer >= layers)
        fail_input(file.path(), fmt::format("layer {} is out of range: the checkpoint has {} {} layer{} (0-{})", layer,
                                            layers, layout, layers == 1 ? "" : "s", layers - 1));

    // Step 2: the preset's tensors, converted to x W.
    const LayerContext context{file, layer_base(*prefix, preset, layer), where, options, config};
    LayerWeights w = preset.build(context);
    if (options.num_kv_heads && *options.num_kv_heads != w.num_kv_heads)
        fail_input(where, fmt::format("a key/value head count of {} does not apply: {} layers have as many key/value "
                                      "heads as query heads ({})",
                                      *options.num_kv_heads, layout, w.num_heads));
    if (config.d_model && *config.d_model != w.d_model)
        fail_input(where, fmt::format("tensors have width {} but {} says {}", w.d_model, config.path, *config.d_model));

    // Step 3: masking and position conventions, options first.
    w.causal = options.causal.value_or(preset.causal);
    w.rope = options.rope.value_or(preset.rope);
    w.rope_base = options.rope_base ? *options.rope_base : config.rope_base ? *config.rope_base : 10000.0;
    w.rope_scaling = config.rope_scaling_parameters;
    validate_layer(w, where);
    return w;
}

LayerWeights load_layer(const std::string& checkpoint_path, const std::string& layout, int layer,
                        const LayoutOptions& options, const LoadLimits& limits) {
    find_preset(layout);  // an unknown layout is a usage error before any file is read
    const HfConfig config =
        options.config_path.empty() ? find_hf_config_beside(checkpoint_path) : read_hf_config(options.config_path);
    const SafetensorsFile file(checkpoint_path, limits);
    return load_layer(file, layout, layer, options, config);
}

}  // namespace attn_viz
