// llama.cpp's tokenizer test vectors (../shared/models/tokenizers/llama.cpp-vocab): strings and
// the ids Hugging Face's own tokenizers give them, checked against an HfTokenizer.
#pragma once

#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "hf_tokenizer.hpp"
#include "support.hpp"

namespace test_support {

// llama.cpp's vocabulary test vectors: NAME.inp holds strings each followed by
// "\n__ggml_vocab_test__\n"; NAME.out one line of " id id ..." per string.
struct VocabCase {
    std::string text;
    std::vector<int> ids;
};

inline std::vector<VocabCase> vocab_cases(const std::string& dir, const std::string& name) {
    const std::string inputs = read_text(dir + "/" + name + ".inp"), outputs = read_text(dir + "/" + name + ".out");
    const std::string separator = "\n__ggml_vocab_test__\n";
    std::vector<VocabCase> cases;
    for (size_t at = 0, end; (end = inputs.find(separator, at)) != std::string::npos; at = end + separator.size())
        cases.push_back({inputs.substr(at, end - at), {}});
    std::istringstream lines(outputs);
    std::string line;
    for (VocabCase& c : cases) {
        REQUIRE(std::getline(lines, line));
        std::istringstream numbers(line);
        for (int id; numbers >> id;) c.ids.push_back(id);
    }
    return cases;
}

// `encode` (without BOS/CLS/SEP, as the vectors were written) gives each case's ids.
inline void check_vocab_cases(const std::string& kind,
                              const std::function<std::vector<int>(const std::string&)>& encode,
                              const std::vector<VocabCase>& cases) {
    REQUIRE(cases.size() == 46);
    int exact = 0;
    for (const VocabCase& c : cases) {
        CAPTURE(c.text);
        const std::vector<int> ids = encode(c.text);
        CHECK(ids == c.ids);
        exact += ids == c.ids;
    }
    MESSAGE(kind << ": " << exact << " of " << cases.size() << " test strings encode exactly");
}

inline void check_vocab_cases(const attn_viz::HfTokenizer& tokenizer, const std::vector<VocabCase>& cases) {
    check_vocab_cases(
        tokenizer.kind(), [&](const std::string& text) { return tokenizer.encode(text, /*add_special_tokens=*/false); },
        cases);
}

}  // namespace test_support
