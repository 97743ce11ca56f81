// Inputs given per token: token labels (a JSON list, or a text file with one token per line)
// and input embeddings (a [T, D] .npy array or a safetensors tensor).
#pragma once

#include <string>
#include <vector>

#include "load_limits.hpp"
#include "tensor.hpp"

namespace attn_viz {

// Token labels. A file whose first non-blank character is '[' is a JSON list of strings (numbers
// are accepted and printed as text); anything else is one token per line ('\n' or "\r\n"; a final
// newline does not add an empty token), where bytes that are not valid UTF-8 become "\xNN"
// (escape_invalid_utf8; a JSON list is UTF-8 by definition). Throws Error(bad_input) naming the file.
std::vector<std::string> read_tokens(const std::string& path);

// Token ids written as "1,403,407" (commas and/or spaces). Throws Error(usage) naming `where`
// (e.g. "--tokens") on anything that is not a non-negative integer list.
std::vector<int> parse_token_ids(const std::string& text, const std::string& where);

// Input embeddings x: [T, D]. `.npy` files are read whole; `.safetensors` files give the tensor
// `tensor_name`, or their only tensor when `tensor_name` is empty.
Tensor read_embeddings(const std::string& path, const std::string& tensor_name = "", const LoadLimits& limits = {});

}  // namespace attn_viz
