// The layout presets: tensor names, orientations and defaults of each framework's attention layer.
#include "layouts.hpp"

#include <functional>

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
    const SafetensorsFile& file;
    std::string base;  // prefix + layer path, e.g. "bert.encoder.layer.3."
    std::string where; // "<file>: layer 3 (bert)"
    const LayoutOptions& options;
    const HfConfig& config;

    bool has(const std::string& suffix) const { return file.contains(base + suffix); }

    // The tensor base + suffix, which must exist and have `shape` (-1 = any size).
    Tensor get(const std::string& suffix, const std::vector<int64_t>& shape) const {
        const std::string name = base + suffix;
        if (!file.contains(name)) fail_input(where, "missing tensor '" + name + "'");
        const std::vector<int64_t>& actual = file.shape(name);
        bool ok = actual.size() == shape.size();
        for (size_t i = 0; ok && i < shape.size(); ++i) ok = shape[i] < 0 || shape[i] == actual[i];
        if (!ok) fail_input(where, "tensor '" + name + "' has shape " + shape_string(actual) + ", expected " + shape_string(shape));
        return file.load(name);
    }
    // Like get, or an empty tensor when absent.
    Tensor get_optional(const std::string& suffix, const std::vector<int64_t>& shape) const {
        return has(suffix) ? get(suffix, shape) : Tensor{};
    }

    int64_t num_heads() const {
        if (!options.num_heads && !config.num_heads)
            fail_input(where, "number of heads unknown: pass --num-heads (or put a config.json with num_attention_heads beside the checkpoint)");
        const int64_t heads = options.num_heads ? *options.num_heads : *config.num_heads;
        if (heads <= 0) fail_input(where, "the number of heads must be positive, not " + std::to_string(heads));
        return heads;
    }
};

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    return text;
}

// Rows [begin, begin + count) of a [rows, cols] matrix, or elements of a vector.
Tensor rows_of(const Tensor& m, int64_t begin, int64_t count) {
    const int64_t cols = m.rank() == 2 ? m.dim(1) : 1;
    Tensor part(m.rank() == 2 ? std::vector<int64_t>{count, cols} : std::vector<int64_t>{count});
    std::copy(m.data.begin() + begin * cols, m.data.begin() + (begin + count) * cols, part.data.begin());
    return part;
}

// Columns [begin, begin + count) of a [rows, cols] matrix.
Tensor columns_of(const Tensor& m, int64_t begin, int64_t count) {
    const int64_t rows = m.dim(0), cols = m.dim(1);
    Tensor part({rows, count});
    for (int64_t r = 0; r < rows; ++r)
        std::copy(m.data.begin() + r * cols + begin, m.data.begin() + r * cols + begin + count, part.data.begin() + r * count);
    return part;
}

// Heads of the presets whose K and V are as wide as Q (no GQA).
void set_equal_heads(LayerWeights& w, const LayerContext& c, int64_t width) {
    w.num_heads = c.num_heads();
    if (width % w.num_heads != 0)
        fail_input(c.where, "width " + std::to_string(width) + " is not divisible by " + std::to_string(w.num_heads) + " heads");
    if (c.options.num_kv_heads && *c.options.num_kv_heads != w.num_heads)
        fail_input(c.where, "layout has as many key/value heads as query heads; --num-kv-heads applies to llama only");
    w.num_kv_heads = w.num_heads;
    w.d_head = width / w.num_heads;
}

// in_proj_weight [3D, D] stacking q, k, v in torch's [out, in]; out_proj.weight [D, D].
LayerWeights build_torch_mha(const LayerContext& c) {
    const Tensor in_proj = c.get("in_proj_weight", {-1, -1});
    const int64_t d = in_proj.dim(1);
    if (in_proj.dim(0) != 3 * d)
        fail_input(c.where, "tensor '" + c.base + "in_proj_weight' has shape " + shape_string(in_proj.shape) + ", expected [3D, D]");
    LayerWeights w;
    w.d_model = d;
    set_equal_heads(w, c, d);
    w.w_q = transposed(rows_of(in_proj, 0, d));
    w.w_k = transposed(rows_of(in_proj, d, d));
    w.w_v = transposed(rows_of(in_proj, 2 * d, d));
    w.w_o = transposed(c.get("out_proj.weight", {d, d}));
    if (c.has("in_proj_bias")) {
        const Tensor bias = c.get("in_proj_bias", {3 * d});
        w.b_q = rows_of(bias, 0, d), w.b_k = rows_of(bias, d, d), w.b_v = rows_of(bias, 2 * d, d);
    }
    w.b_o = c.get_optional("out_proj.bias", {d});
    return w;
}

// Separate query/key/value Linear layers ([out, in]) and an output dense layer.
LayerWeights build_bert(const LayerContext& c) {
    const Tensor query = c.get("attention.self.query.weight", {-1, -1});
    const int64_t d = query.dim(1), width = query.dim(0);
    LayerWeights w;
    w.d_model = d;
    set_equal_heads(w, c, width);
    w.w_q = transposed(query);
    w.w_k = transposed(c.get("attention.self.key.weight", {width, d}));
    w.w_v = transposed(c.get("attention.self.value.weight", {width, d}));
    w.w_o = transposed(c.get("attention.output.dense.weight", {d, width}));
    w.b_q = c.get_optional("attention.self.query.bias", {width});
    w.b_k = c.get_optional("attention.self.key.bias", {width});
    w.b_v = c.get_optional("attention.self.value.bias", {width});
    w.b_o = c.get_optional("attention.output.dense.bias", {d});
    return w;
}

// Conv1D weights are stored [in, out] and used as x W: no transpose; c_attn packs q, k, v columns.
LayerWeights build_gpt2(const LayerContext& c) {
    const Tensor qkv = c.get("attn.c_attn.weight", {-1, -1});
    const int64_t d = qkv.dim(0);
    if (qkv.dim(1) != 3 * d)
        fail_input(c.where, "tensor '" + c.base + "attn.c_attn.weight' has shape " + shape_string(qkv.shape) + ", expected [D, 3D]");
    LayerWeights w;
    w.d_model = d;
    set_equal_heads(w, c, d);
    w.w_q = columns_of(qkv, 0, d), w.w_k = columns_of(qkv, d, d), w.w_v = columns_of(qkv, 2 * d, d);
    w.w_o = c.get("attn.c_proj.weight", {d, d});
    if (c.has("attn.c_attn.bias")) {
        const Tensor bias = c.get("attn.c_attn.bias", {3 * d});
        w.b_q = rows_of(bias, 0, d), w.b_k = rows_of(bias, d, d), w.b_v = rows_of(bias, 2 * d, d);
    }
    w.b_o = c.get_optional("attn.c_proj.bias", {d});
    return w;
}

// q/k/v/o_proj Linear layers ([out, in]); K and V may have fewer heads (GQA); Qwen2 has q/k/v biases.
LayerWeights build_llama(const LayerContext& c) {
    const Tensor q = c.get("self_attn.q_proj.weight", {-1, -1});
    const int64_t d = q.dim(1), q_width = q.dim(0);
    LayerWeights w;
    w.d_model = d;
    w.num_heads = c.num_heads();
    if (q_width % w.num_heads != 0)
        fail_input(c.where, "q_proj has " + std::to_string(q_width) + " outputs, not divisible by " + std::to_string(w.num_heads) + " heads");
    w.d_head = q_width / w.num_heads;
    w.num_kv_heads = c.options.num_kv_heads ? *c.options.num_kv_heads : c.config.num_kv_heads ? *c.config.num_kv_heads : w.num_heads;
    if (w.num_kv_heads <= 0 || w.num_heads % w.num_kv_heads != 0)
        fail_input(c.where, "key/value heads (" + std::to_string(w.num_kv_heads) + ") must divide the " +
                                std::to_string(w.num_heads) + " query heads");
    const int64_t kv_width = w.num_kv_heads * w.d_head;
    const Tensor k = c.get("self_attn.k_proj.weight", {-1, d});
    if (k.dim(0) != kv_width)
        fail_input(c.where, "k_proj has " + std::to_string(k.dim(0)) + " outputs, expected " + std::to_string(w.num_kv_heads) +
                                " key/value heads x " + std::to_string(w.d_head) + " (pass --num-kv-heads)");
    w.w_q = transposed(q);
    w.w_k = transposed(k);
    w.w_v = transposed(c.get("self_attn.v_proj.weight", {kv_width, d}));
    w.w_o = transposed(c.get("self_attn.o_proj.weight", {d, q_width}));
    w.b_q = c.get_optional("self_attn.q_proj.bias", {q_width});
    w.b_k = c.get_optional("self_attn.k_proj.bias", {kv_width});
    w.b_v = c.get_optional("self_attn.v_proj.bias", {kv_width});
    w.b_o = c.get_optional("self_attn.o_proj.bias", {d});
    return w;
}

const std::vector<Preset>& presets() {
    static const std::vector<Preset> all = {
        {"torch-mha", {""}, "", "in_proj_weight", false, RopeStyle::none, build_torch_mha},
        {"bert", {"", "bert.", "roberta."}, "encoder.layer.{layer}.", "attention.self.query.weight", false, RopeStyle::none, build_bert},
        {"gpt2", {"", "transformer."}, "h.{layer}.", "attn.c_attn.weight", true, RopeStyle::none, build_gpt2},
        {"llama", {""}, "model.layers.{layer}.", "self_attn.q_proj.weight", true, RopeStyle::half_split, build_llama},
    };
    return all;
}

const Preset& find_preset(const std::string& layout) {
    for (const Preset& p : presets())
        if (p.name == layout) return p;
    std::string known;
    for (const std::string& name : layout_names()) known += (known.empty() ? "" : ", ") + name;
    throw Error(ErrorKind::usage, "unknown layout '" + layout + "' (known: " + known + ")");
}

// prefix + layer path for one layer, with "{layer}" filled in.
std::string layer_base(const std::string& prefix, const Preset& preset, int layer) {
    return replace_all(prefix + preset.layer_path, "{layer}", std::to_string(layer));
}

// The prefix under which the file holds this preset's layer 0 ("" candidates first), or null.
const std::string* find_prefix(const SafetensorsFile& file, const Preset& preset, const LayoutOptions& options) {
    if (options.prefix) return file.contains(layer_base(*options.prefix, preset, 0) + preset.probe) ? &*options.prefix : nullptr;
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
    throw Error(ErrorKind::usage, "unknown rotary embedding style '" + text + "' (known: none, interleaved, half)");
}

int count_layers(const SafetensorsFile& file, const std::string& layout, const LayoutOptions& options) {
    const Preset& preset = find_preset(layout);
    const std::string* prefix = find_prefix(file, preset, options);
    if (!prefix) return 0;
    if (layer_base(*prefix, preset, 0) == layer_base(*prefix, preset, 1)) return 1;  // no "{layer}" in the names
    int n = 0;
    while (file.contains(layer_base(*prefix, preset, n) + preset.probe)) ++n;
    return n;
}

LayerWeights load_layer(const SafetensorsFile& file, const std::string& layout, int layer, const LayoutOptions& options,
                        const HfConfig& config) {
    const Preset& preset = find_preset(layout);
    const std::string where = file.path() + ": layer " + std::to_string(layer) + " (" + layout + ")";

    // Step 1: find the prefix and check the layer exists.
    const std::string* prefix = find_prefix(file, preset, options);
    if (!prefix) {
        const std::vector<std::string> names = file.names();
        std::string sample;
        for (size_t i = 0; i < names.size() && i < 3; ++i) sample += (i ? ", '" : "'") + names[i] + "'";
        fail_input(file.path(), "holds no " + layout + " layer: expected a tensor '" +
                                    layer_base(options.prefix.value_or(preset.default_prefixes.front()), preset, 0) +
                                    preset.probe + "' (its tensors start " + (sample.empty() ? "<none>" : sample) +
                                    "; pick another --layout or a prefix)");
    }
    const int layers = count_layers(file, layout, options);
    if (layer < 0 || layer >= layers)
        fail_input(file.path(), "layer " + std::to_string(layer) + " is out of range: the checkpoint has " +
                                    std::to_string(layers) + " " + layout + " layer" + (layers == 1 ? "" : "s") +
                                    " (0-" + std::to_string(layers - 1) + ")");

    // Step 2: the preset's tensors, converted to x W.
    const LayerContext context{file, layer_base(*prefix, preset, layer), where, options, config};
    LayerWeights w = preset.build(context);
    if (config.d_model && *config.d_model != w.d_model)
        fail_input(where, "tensors have width " + std::to_string(w.d_model) + " but " + config.path + " says " +
                              std::to_string(*config.d_model));

    // Step 3: masking and position conventions, options first.
    w.causal = options.causal.value_or(preset.causal);
    w.rope = options.rope.value_or(preset.rope);
    w.rope_base = options.rope_base ? *options.rope_base : config.rope_base ? *config.rope_base : 10000.0;
    validate_layer(w, where);
    return w;
}

LayerWeights load_layer(const std::string& checkpoint_path, const std::string& layout, int layer,
                        const LayoutOptions& options) {
    find_preset(layout);  // an unknown layout is a usage error before any file is read
    const HfConfig config = options.config_path.empty() ? find_hf_config_beside(checkpoint_path) : read_hf_config(options.config_path);
    const SafetensorsFile file(checkpoint_path);
    return load_layer(file, layout, layer, options, config);
}

}  // namespace attn_viz
