// model_files.hpp: what a model path is, decided by content, with its header parsed once and
// shared by the weights and the tokenizer. On stories260K in its three formats.
#include <filesystem>
#include <string>
#include <utility>

#include <doctest/doctest.h>

#include "expect_error.hpp"
#include "model_files.hpp"
#include "model_tokenizer_file.hpp"
#include "support.hpp"
#include "weights_fingerprint.hpp"

using namespace attn_viz;
using namespace test_support;
namespace fs = std::filesystem;

TEST_SUITE("models") {

TEST_CASE("a folder's model_type decides first: an unsupported one is refused by name before any other key") {
    ScratchDir dir;
    // Published configs of families attn-viz does not read, holding keys other families refuse.
    const std::pair<std::string, std::string> configs[] = {
        {"deberta-v2", R"({"model_type": "deberta-v2", "type_vocab_size": 0, "hidden_size": 8})"},
        {"qwen2_moe", R"({"model_type": "qwen2_moe", "sliding_window": 0, "num_attention_heads": -1})"},
    };
    for (const auto& [type, config] : configs) {
        CAPTURE(type);
        write_text(dir / "config.json", config);
        expect_error(ErrorKind::bad_input, [&] { open_model_files(dir.path().string()); },
                     {dir / "config.json", "model_type \"" + type + "\" is not supported (supported: llama, mistral",
                      "bert, bart, t5)"});
    }
    write_text(dir / "config.json", R"({"hidden_size": 8})");
    expect_error(ErrorKind::bad_input, [&] { open_model_files(dir.path().string()); },
                 {dir / "config.json", "has no \"model_type\""});
}

TEST_CASE("a folder holding only PyTorch pickles says so and how to convert it") {
    ScratchDir dir;
    write_text(dir / "config.json", R"({"model_type": "bert", "hidden_size": 8, "num_attention_heads": 2})");
    for (const char* pickle : {"pytorch_model.bin", "pytorch_model.bin.index.json"}) {
        CAPTURE(pickle);
        write_text(dir / pickle, "not read");
        expect_error(ErrorKind::bad_input, [&] { open_model_files(dir.path().string()); },
                     {dir.path().string(), std::string("PyTorch pickle (") + pickle + ") and no model.safetensors",
                      "save_pretrained"});
        fs::remove(dir / pickle);
    }
}

TEST_CASE("open_model_files and is_model_path tell a model by its content, not its name") {
    const std::string bin = stories260k_dir();
    const std::string gguf = shared_model_dir("stories260K-gguf", {"stories260K.gguf"});
    const std::string hf = shared_model_dir("stories260K-hf", {"config.json", "model.safetensors"});
    if (bin.empty() || gguf.empty() || hf.empty()) return;
    ScratchDir dir;
    // Named as neither: a llama2.c checkpoint and a GGUF file with other extensions.
    fs::copy_file(bin + "/stories260K.bin", dir / "model.ckpt");
    fs::copy_file(gguf + "/stories260K.gguf", dir / "model.weights");

    const ModelFiles folder = open_model_files(hf), llama2c = open_model_files(dir / "model.ckpt"),
                     gguf_file = open_model_files(dir / "model.weights");
    CHECK(folder.format == ModelFormat::hf_folder);
    CHECK(folder.config.model_type == "llama");
    CHECK(llama2c.format == ModelFormat::llama2c);
    CHECK(gguf_file.format == ModelFormat::gguf);
    REQUIRE(gguf_file.gguf);
    CHECK(gguf_file.gguf->get_string("general.architecture") == "llama");

    for (const std::string& model : {hf, dir / "model.ckpt", dir / "model.weights"}) CHECK(is_model_path(model));
    // A tokenizer, a folder's config.json, tensors and a path that is not there are not models.
    for (const std::string& other :
         {bin + "/tok512.bin", hf + "/config.json", hf + "/model.safetensors", dir / "absent.bin"})
        CHECK_FALSE(is_model_path(other));

    expect_error(ErrorKind::bad_input, [&] { open_model_files(hf + "/config.json"); },
                 {"config.json of a model folder, not a model", "pass the folder"});
    expect_error(ErrorKind::bad_input, [&] { read_model_tokenizer(llama2c, "", 512); },
                 {"model.ckpt", "tokenizer.bin", "not given"});
}

TEST_CASE("a model's header is parsed once: the weights and the tokenizer read what open_model_files parsed") {
    const std::string gguf = shared_model_dir("stories260K-gguf", {"stories260K.gguf"});
    const std::string hf = shared_model_dir("stories260K-hf", {"config.json", "model.safetensors", "tokenizer.json"});
    if (gguf.empty() || hf.empty()) return;
    ScratchDir dir;
    const uint64_t gguf_fingerprint =
        model_fingerprint(read_model_weights(open_model_files(gguf + "/stories260K.gguf")));
    const uint64_t hf_fingerprint = model_fingerprint(read_model_weights(open_model_files(hf)));

    // GGUF: the file is replaced by garbage after opening; the mapped, parsed file still serves both.
    fs::copy_file(gguf + "/stories260K.gguf", dir / "m.gguf");
    const ModelFiles gguf_files = open_model_files(dir / "m.gguf");
    write_text(dir / "m.gguf.new", "not a GGUF file");
    fs::rename(dir / "m.gguf.new", dir / "m.gguf");
    CHECK(model_fingerprint(read_model_weights(gguf_files)) == gguf_fingerprint);
    CHECK(read_model_tokenizer(gguf_files, "", 512)->encode("Once upon a time").size() > 1);

    // A folder: config.json is spoiled after opening; the weights are read with the parsed one.
    fs::create_directories(dir / "hf");
    for (const char* name : {"config.json", "model.safetensors", "tokenizer.json"})
        fs::copy_file(fs::path(hf) / name, fs::path(dir / "hf") / name);
    const ModelFiles folder = open_model_files(dir / "hf");
    write_text(dir / "hf/config.json", "{\"model_type\": \"gpt2\", \"n_embd\": -1}");
    CHECK(model_fingerprint(read_model_weights(folder)) == hf_fingerprint);
}

}  // TEST_SUITE("models")
