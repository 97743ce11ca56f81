// The library's one exception type. Messages carry their context ("w.json: W_Q row 3 has 5
// numbers, expected 8"); main() catches once, prints the message on one line and exits with
// exit_code(kind). The library never names a command-line option: where the user can get past an
// error by asking for something, the error carries a Remedy and app/ names the option.
#pragma once

#include <stdexcept>
#include <string>

namespace attn_viz {

enum class ErrorKind {
    usage,      // the command line is wrong
    bad_input,  // an input file is malformed, inconsistent or too large
    io,         // a file could not be read or written (missing, permissions, disk full)
    internal,   // a bug or an unexpected library failure
};

// What the caller can change to get past an error (app/main.cpp names the option that does it).
enum class Remedy {
    none,
    allow_nonfinite,      // LoadLimits::allow_nonfinite: load NaN/Inf values anyway
    raise_memory_budget,  // a larger LoadLimits::memory_budget
    force_output_dir,     // OutputDir's `force`: write into a folder that holds other files
    replace_earlier_run,  // OutputDir's `force`: replace the results of an earlier run in the folder
    give_num_heads,       // LayoutOptions::num_heads
    give_num_kv_heads,    // LayoutOptions::num_kv_heads
    give_layout,          // LayerSource::layout, for a safetensors checkpoint
    change_layout,        // another LayerSource::layout or LayoutOptions::prefix
    swap_model_files,     // a llama2.c checkpoint given as the tokenizer, or the other way round
    run_whole_model,      // a whole llama2.c model given where one layer's weights belong
    truncate_text,        // LoadLimits::truncate_texts: cut a text longer than the model's context to it
};

class Error : public std::runtime_error {
public:
    Error(ErrorKind kind, const std::string& message, Remedy remedy = Remedy::none)
        : std::runtime_error(message), kind_(kind), remedy_(remedy) {}
    ErrorKind kind() const { return kind_; }
    Remedy remedy() const { return remedy_; }

private:
    ErrorKind kind_;
    Remedy remedy_;
};

// Exit status of the attn-viz command for each kind (documented in README.md):
// 0 success, 1 a --fail-above threshold was exceeded, 2 usage, 3 bad input, 4 I/O, 5 internal,
// 130 interrupted.
int exit_code(ErrorKind kind);

// Throws Error(bad_input, "<where>: <what>", remedy).
[[noreturn]] void fail_input(const std::string& where, const std::string& what, Remedy remedy = Remedy::none);

}  // namespace attn_viz
