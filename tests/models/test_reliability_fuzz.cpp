// Fuzz findings as regression tests: every file in tests/fuzz/regressions/<target>/ (a crash-,
// leak- or timeout- file scripts/fuzz.sh produced) is fed, byte for byte, to the loader that
// target exercises; each must end in success or a clean attn_viz::Error. (The sanitized suite,
// scripts/test.sh --sanitize, is what turns a memory error or undefined behaviour into a failure.)
#include <algorithm>
#include <filesystem>

#include <doctest/doctest.h>

#include "expect_error.hpp"
#include "fuzz/tokenizer_use.hpp"
#include "gguf.hpp"
#include "gguf_llama.hpp"
#include "gguf_tokenizer.hpp"
#include "hf_config.hpp"
#include "hf_folder_fixture.hpp"
#include "hf_llama_checkpoint.hpp"
#include "hf_tokenizer.hpp"
#include "hf_transformer_checkpoint.hpp"
#include "input_file.hpp"
#include "json_input.hpp"
#include "llama2c_checkpoint.hpp"
#include "llama2c_tokenizer.hpp"
#include "npy.hpp"
#include "reliability_fixtures.hpp"
#include "safetensors.hpp"
#include "sequence_stream.hpp"
#include "token_file.hpp"
#include "utf8.hpp"
#include "weights_file.hpp"

using namespace attn_viz;
using namespace test_support;
namespace fs = std::filesystem;

namespace {

const fs::path regressions_dir = fs::path(source_dir()) / "tests/fuzz/regressions";

// What the fuzz target `target` does with `bytes` (see tests/fuzz/fuzz_<target>.cpp).
void feed_loader(const std::string& target, const std::string& bytes, const ScratchDir& scratch) {
    const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
    if (target == "fuzz_npy") {
        parse_npy(data, bytes.size(), "finding.npy");
    } else if (target == "fuzz_weights_json") {
        parse_weights(parse_json_text(bytes, "finding.json"), "finding.json", scratch.path().string());
    } else if (target == "fuzz_input_json" && !bytes.empty()) {
        parse_sequence(parse_json_text(std::string_view(bytes).substr(1), "finding.json"), 1 + data[0] % 8,
                       "finding.json", scratch.path().string());
    } else if (target == "fuzz_corpus_jsonl") {
        write_text(scratch / "finding.jsonl", bytes);
        CorpusDocuments documents(scratch / "finding.jsonl");
        SequenceStream stream(documents, 4);
        SequenceInput sequence;
        std::string where;
        while (stream.next(sequence, where)) {}
    } else if (target == "fuzz_safetensors") {
        write_text(scratch / "finding.safetensors", bytes);
        const SafetensorsFile file(scratch / "finding.safetensors");
        for (const std::string& name : file.names()) {
            try {
                file.load(name);
            } catch (const Error&) {}
        }
    } else if (target == "fuzz_llama2c_checkpoint") {
        write_text(scratch / "finding.bin", bytes);
        read_llama2c_checkpoint(scratch / "finding.bin");
    } else if (target == "fuzz_llama2c_tokenizer" && !bytes.empty() && data[0] % 2 == 0) {
        write_text(scratch / "finding-tokenizer.bin", bytes.substr(1));
        attn_viz_fuzz::use_llama_tokenizer(Llama2cTokenizer(scratch / "finding-tokenizer.bin"));
    } else if (target == "fuzz_llama2c_tokenizer" &&
               !bytes.empty()) {  // text for a tokenizer with byte tokens and merges
        write_text(scratch / "finding-merges.bin", tokenizer_bytes(vocabulary_with_bytes({{" ", 0},
                                                                                          {"t", 0},
                                                                                          {"h", 0},
                                                                                          {"e", 0},
                                                                                          {"a", 0},
                                                                                          {"b", 0},
                                                                                          {"th", 2},
                                                                                          {"he", 1},
                                                                                          {" the", 3},
                                                                                          {"ab", 2},
                                                                                          {"ba", 2}}),
                                                                   6));
        const Llama2cTokenizer tokenizer(scratch / "finding-merges.bin");
        const std::string text = bytes.substr(1);
        CHECK(tokenizer.decode(tokenizer.encode(text, true, false)) == escape_invalid_utf8(text));
    } else if (target == "fuzz_gguf") {
        write_text(scratch / "finding.gguf", bytes);
        attn_viz_fuzz::use_llama_tokenizer(read_gguf_llama_tokenizer(GgufFile(scratch / "finding.gguf"), 0));
    } else if (target == "fuzz_token_file") {
        write_text(scratch / "finding-tokens", bytes);
        read_tokens(scratch / "finding-tokens");
    } else if (target == "fuzz_hf_config") {
        write_text(scratch / "finding-config.json", bytes);
        read_hf_config(scratch / "finding-config.json");
    } else if (target == "fuzz_hf_tokenizer") {
        write_text(scratch / "finding-tokenizer.json", bytes);
        attn_viz_fuzz::use_hf_tokenizer(HfTokenizer::load(scratch / "finding-tokenizer.json", attn_viz_fuzz::limits()));
    } else if (target == "fuzz_hf_folder") {
        const HfFixtureFolders folders = write_hf_fixture_folders(scratch / "finding-folders");
        const fs::path folder = place_hf_fixture_input(folders, data, bytes.size());
        const std::vector<std::string>& llama_types = hf_llama_model_types();
        if (std::find(llama_types.begin(), llama_types.end(), read_hf_config(folder / "config.json").model_type) !=
            llama_types.end())
            read_hf_llama_folder(folder.string());
        else
            read_hf_transformer_folder(folder.string());
    }
}

}  // namespace

TEST_SUITE("reliability") {

TEST_CASE("every recorded fuzz finding ends in success or a clean Error") {
    ScratchDir scratch;
    int files = 0;
    for (const auto& target : fs::directory_iterator(regressions_dir))
        for (const auto& finding : fs::directory_iterator(target.path())) {
            ++files;
            CAPTURE(finding.path().string());
            try {
                feed_loader(target.path().filename().string(), read_text(finding.path().string()), scratch);
            } catch (const Error& e) {
                CHECK(std::string(e.what()).find("finding") != std::string::npos);  // the message names the input
            }
        }
    CHECK(files > 0);
}

TEST_CASE("fuzz_npy finding: an .npy array with no elements loads as an empty tensor of its shape") {
    // crash-7b47766d...: shape (0, 5) made parse_npy pass the empty vector's null pointer to memcpy.
    const std::string bytes =
        read_text((regressions_dir / "fuzz_npy/crash-7b47766d128d1aa4c77a26c72c2045d37d176854").string());
    const Tensor t = parse_npy(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), "empty.npy");
    CHECK(t.shape == std::vector<int64_t>{0, 5});
    CHECK(t.empty());
    // Truncating it anywhere is a clean error naming the file.
    const size_t cut = std::uniform_int_distribution<size_t>(0, bytes.size() - 1)(rng());
    expect_error(ErrorKind::bad_input,
                 [&] { parse_npy(reinterpret_cast<const unsigned char*>(bytes.data()), cut, "cut.npy"); }, {"cut.npy"});
}

TEST_CASE("fuzz_npy finding: a float64 shape near 2^62 elements is refused as truncated, without overflow") {
    // crash-cd8fb8b3...: the message computed count * 8 bytes in int64, which overflowed.
    const std::string bytes =
        read_text((regressions_dir / "fuzz_npy/crash-cd8fb8b3549fa415c4b2f6071bf93ae9f16fd528").string());
    expect_error(ErrorKind::bad_input,
                 [&] { parse_npy(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), "wide.npy"); },
                 {"wide.npy: truncated .npy data: shape [2, 1866086, 186666086, 668, 6] needs", "values of 8 bytes"});
}

TEST_CASE("a float64 .npy or safetensors value beyond float32's range becomes Inf and is refused as non-finite") {
    ScratchDir dir;
    Tensor small = random_tensor({3});
    // A float64 .npy by hand: 1e300 at a random index.
    std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }";
    header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
    header += '\n';
    std::string bytes = std::string("\x93NUMPY\x01\x00", 8) + char(header.size()) + char(0) + header;
    const int64_t at = std::uniform_int_distribution<int64_t>(0, 2)(rng());
    for (int64_t i = 0; i < 3; ++i) {
        const double v = i == at ? -1e300 : double(small.data[size_t(i)]);
        bytes.append(reinterpret_cast<const char*>(&v), 8);
    }
    const Tensor t = parse_npy(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), "big.npy");
    CHECK(t.data[size_t(at)] == -std::numeric_limits<float>::infinity());
    write_text(dir / "big.npy", bytes);
    write_text(dir / "x.json", R"({"embeddings": {"npy": "big.npy"}})");
    expect_error(
        ErrorKind::bad_input, [&] { read_input_file(dir / "x.json", 3); },
        {"big.npy", "embeddings[" + std::to_string(at) + "] is not finite"}, Remedy::allow_nonfinite);
}

}  // TEST_SUITE("reliability")
