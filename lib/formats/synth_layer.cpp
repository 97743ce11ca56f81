#include "synth_layer.hpp"

#include <cmath>
#include <map>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "error.hpp"
#include "file_write.hpp"
#include "json_text.hpp"
#include "weights_file.hpp"

namespace attn_viz {

namespace {

// Embedding layout (D = 48): dims 0..7 hold a position code of four frequencies,
// (cos w_f i, sin w_f i) with w_f = pi 2^f / (T + 1); dim 8 marks the first token; dim 9 is a
// constant 1; dims 10..47 hold the word's content vector.
constexpr int64_t d_model = 48, num_heads = 6, d_head = 8, frequencies = 4;
constexpr int64_t first_marker = 8, constant_channel = 9, first_content = 10;
constexpr double wanted_logit_gap = 20.0;  // scaled-score gap between the planted key and any other

double frequency(int64_t f, int64_t T) {
    return M_PI * std::pow(2.0, static_cast<double>(f)) / static_cast<double>(T + 1);
}

// Writes a rotation by `shift` positions of every frequency pair times `gain` into the head's
// query columns: query i then carries position i + shift's code, so it matches key i + shift.
void plant_position_query(Tensor& w, int64_t head, int64_t shift, double gain, int64_t T) {
    for (int64_t f = 0; f < frequencies; ++f) {
        const double angle = frequency(f, T) * static_cast<double>(shift);
        const int64_t r = 2 * f, c = head * d_head + 2 * f;
        w.data[r * d_model + c] = static_cast<float>(gain * std::cos(angle));
        w.data[r * d_model + c + 1] = static_cast<float>(gain * std::sin(angle));
        w.data[(r + 1) * d_model + c] = static_cast<float>(-gain * std::sin(angle));
        w.data[(r + 1) * d_model + c + 1] = static_cast<float>(gain * std::cos(angle));
    }
}

}  // namespace

std::vector<std::string> planted_demo_tokens() {
    return {"the", "cat", "sat", "on", "the", "mat", "because", "the", "cat", "was", "very", "tired"};
}

PlantedLayer make_planted_layer(const std::vector<std::string>& tokens, uint64_t seed) {
    const int64_t T = static_cast<int64_t>(tokens.size());
    if (T < 2 || T > 64) throw Error(ErrorKind::usage, fmt::format("synth: need 2 to 64 tokens, got {}", T));
    PlantedLayer p;
    p.tokens = tokens;
    std::mt19937_64 generator(seed);
    std::normal_distribution<double> normal(0.0, 1.0);

    // Step 1: embeddings.
    p.embeddings = Tensor({T, d_model});
    std::map<std::string, std::vector<float>> content;
    for (int64_t i = 0; i < T; ++i) {
        float* x = p.embeddings.ptr() + i * d_model;
        for (int64_t f = 0; f < frequencies; ++f) {
            x[2 * f] = static_cast<float>(std::cos(frequency(f, T) * static_cast<double>(i)));
            x[2 * f + 1] = static_cast<float>(std::sin(frequency(f, T) * static_cast<double>(i)));
        }
        x[first_marker] = i == 0 ? 1.0f : 0.0f;
        x[constant_channel] = 1.0f;
        auto [it, fresh] = content.try_emplace(tokens[static_cast<size_t>(i)]);
        if (fresh)
            for (int64_t d = first_content; d < d_model; ++d)
                it->second.push_back(static_cast<float>(0.5 * normal(generator)));
        std::copy(it->second.begin(), it->second.end(), x + first_content);
    }

    // Step 2: the gain that separates the planted key from every other position by
    // wanted_logit_gap after the 1/sqrt(d_h) scale. Position scores are g^2 sum_f cos(w_f delta);
    // the worst rival offset is the largest such sum over delta != 0 within the sequence.
    double rival = -INFINITY;
    for (int64_t delta = 1; delta <= T + 1; ++delta) {
        double sum = 0;
        for (int64_t f = 0; f < frequencies; ++f) sum += std::cos(frequency(f, T) * static_cast<double>(delta));
        rival = std::max(rival, sum);
    }
    const double position_gain = std::sqrt(wanted_logit_gap * std::sqrt(double(d_head)) / (frequencies - rival));
    const double sink_gain = std::sqrt(wanted_logit_gap * std::sqrt(double(d_head)));

    // Step 3: queries and keys per head.
    LayerWeights& w = p.weights;
    w.d_model = d_model, w.num_heads = num_heads, w.num_kv_heads = num_heads, w.d_head = d_head, w.causal = false;
    w.w_q = Tensor({d_model, d_model});
    w.w_k = Tensor({d_model, d_model});
    for (int64_t h : {0, 3, 4, 5})  // keys carry the plain position code
        for (int64_t r = 0; r < 2 * frequencies; ++r)
            w.w_k.data[r * d_model + h * d_head + r] = static_cast<float>(position_gain);
    plant_position_query(w.w_q, 0, -1, position_gain, T);                                 // head 0: previous token
    w.w_q.data[constant_channel * d_model + 1 * d_head] = static_cast<float>(sink_gain);  // head 1: every query ...
    w.w_k.data[first_marker * d_model + 1 * d_head] = static_cast<float>(sink_gain);      // ... matches key 0's marker
    // head 2: W_Q stays zero, so every score is 0 and the map is uniform.
    plant_position_query(w.w_q, 3, 0, position_gain, T);   // head 3: self
    plant_position_query(w.w_q, 4, +1, position_gain, T);  // heads 4 and 5: next token, identical
    plant_position_query(w.w_q, 5, +1, position_gain, T);
    p.planted = {"previous-token", "sink", "diffuse", "self", "next-token", "next-token"};

    // Step 4: values read the content dims, random; heads 4 and 5 share value columns and output rows.
    w.w_v = Tensor({d_model, d_model});
    w.w_o = Tensor({d_model, d_model});
    for (int64_t r = first_content; r < d_model; ++r)
        for (int64_t c = 0; c < d_model; ++c) w.w_v.data[r * d_model + c] = static_cast<float>(normal(generator) / 4);
    for (float& x : w.w_o.data) x = static_cast<float>(normal(generator) / 4);
    for (int64_t r = 0; r < d_model; ++r)
        for (int64_t c = 0; c < d_head; ++c)
            w.w_v.data[r * d_model + 5 * d_head + c] = w.w_v.data[r * d_model + 4 * d_head + c];
    std::copy(w.w_o.data.begin() + 4 * d_head * d_model, w.w_o.data.begin() + 5 * d_head * d_model,
              w.w_o.data.begin() + 5 * d_head * d_model);
    validate_layer(w, "synth");
    return p;
}

void write_planted_layer(const std::string& weights_path, const std::string& input_path, const PlantedLayer& p) {
    write_weights_file(weights_path, p.weights);
    nlohmann::json embeddings = nlohmann::json::array();
    const int64_t T = p.embeddings.dim(0), D = p.embeddings.dim(1);
    for (int64_t i = 0; i < T; ++i)
        embeddings.push_back(
            std::vector<float>(p.embeddings.data.begin() + i * D, p.embeddings.data.begin() + (i + 1) * D));
    const nlohmann::json input = {{"tokens", p.tokens}, {"embeddings", std::move(embeddings)}};
    write_file_atomically(input_path, json_file_text(input));
}

}  // namespace attn_viz
