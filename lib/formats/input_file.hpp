// The input sequence file: {"tokens": [...], "embeddings": [[...], ...] or {"npy": "x.npy"},
// "attention_mask": [1, 1, 0, ...]} (Hugging Face's convention: 1 = a real token, 0 = padding
// that no query may attend to; optional).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "load_limits.hpp"
#include "tensor.hpp"

namespace attn_viz {

struct SequenceInput {
    std::vector<std::string> tokens;    // T labels; "0".."T-1" when the file has none
    Tensor embeddings;                  // [T, D]
    std::vector<uint8_t> key_excluded;  // [T] 1 where attention_mask is 0; empty = no padding
};

// Reads one sequence whose embeddings must have `d_model` columns.
SequenceInput read_input_file(const std::string& path, int64_t d_model, const LoadLimits& limits = {});

// Parses a sequence from a JSON object already in memory (one line of a JSONL corpus);
// `where` names it in messages, `base_dir` resolves {"npy": ...} references.
SequenceInput parse_sequence(const nlohmann::json& doc, int64_t d_model, const std::string& where,
                             const std::string& base_dir, const LoadLimits& limits = {});

// "0", "1", ... "n-1"
std::vector<std::string> index_labels(int64_t n);

}  // namespace attn_viz
