// What kind of file a path holds, told from its bytes rather than its name, so that a file given
// where another kind belongs (a .npy as layer weights, a tokenizer as a checkpoint) is refused
// with a message saying what it is and what was expected, instead of a parse error from deep
// inside the wrong loader.
#pragma once

#include <cstddef>
#include <string>

#include "error.hpp"

namespace attn_viz {

enum class FileKind { unknown, npy, safetensors, llama2c_checkpoint, llama2c_tokenizer, json };

// The kind the bytes look like: the .npy magic, a safetensors header length followed by '{', a
// llama2.c tokenizer (max_token_length then records that end exactly at the end of the file),
// a llama2.c checkpoint header with consistent sizes, else JSON ('{' or '[' first), else unknown.
FileKind sniff_file_kind(const unsigned char* bytes, size_t size);

// "a NumPy array (.npy)", "a llama2.c tokenizer", ...
std::string file_kind_description(FileKind kind);

// Throws Error(bad_input, "<path>: is <what it is>, not <expected_what>...") when the bytes are
// recognisably another kind than `expected` (`expected_what` says what the caller reads, e.g.
// "layer weights (an attn-viz/weights@1 JSON)"); does nothing for `expected` itself, for JSON-
// looking bytes (a '{' first is a weak sign) or unknown bytes: the loader then says what is wrong. The error's Remedy
// says what to do where there is one (a checkpoint and a tokenizer swapped, a whole model given as one layer).
void refuse_other_file_kind(const unsigned char* bytes, size_t size, const std::string& path, FileKind expected,
                            const std::string& expected_what);

}  // namespace attn_viz
