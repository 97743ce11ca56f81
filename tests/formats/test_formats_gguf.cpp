// GGUF files written here byte by byte: metadata of every kind, tensors in their row-major shape,
// alignment, and hostile files refused with one-line errors naming the file.
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include <doctest/doctest.h>

#include "error.hpp"
#include "expect_error.hpp"
#include "gguf.hpp"
#include "gguf_builder.hpp"
#include "layer_weights.hpp"
#include "random_ggml_blocks.hpp"
#include "safetensors.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

// A small valid file: three scalars, arrays, one [3, 5] matrix and one [4] vector of floats.
GgufBuilder small_file(const Tensor& matrix, const Tensor& vector) {
    GgufBuilder b;
    b.add_string("general.architecture", "llama");
    b.add_u32("llama.block_count", 7);
    b.add_f32("llama.rope.freq_base", 500000.0f);
    b.add_string_array("tokenizer.ggml.tokens", {"<unk>", "\xe2\x96\x81the", ""});
    b.add_f32_array("tokenizer.ggml.scores", {0.0f, -1.5f, 2.0f});
    b.add_i32_array("tokenizer.ggml.token_type", {2, 1, -3});
    b.add_f32_tensor("m.weight", {5, 3}, matrix.data);
    b.add_f32_tensor("v.weight", {4}, vector.data);
    return b;
}

}  // namespace

TEST_SUITE("formats") {

TEST_CASE("GGUF: metadata, arrays and tensors in their row-major shape") {
    ScratchDir dir;
    const Tensor matrix = random_tensor({3, 5}), vector = random_tensor({4});
    for (uint32_t version : {2u, 3u}) {
        GgufBuilder b = small_file(matrix, vector);
        b.version = version;
        write_text(dir / "m.gguf", b.bytes());
        const GgufFile f(dir / "m.gguf");
        CHECK(f.version() == version);
        CHECK(is_gguf_file(dir / "m.gguf"));
        CHECK(f.get_string("general.architecture") == "llama");
        CHECK(f.get_uint("llama.block_count") == 7u);
        CHECK(f.get_float("llama.rope.freq_base") == 500000.0);
        CHECK(f.get_float("llama.block_count") == 7.0);
        CHECK(!f.get_uint("llama.absent"));
        CHECK(f.get_string_array("tokenizer.ggml.tokens") == std::vector<std::string>{"<unk>", "\xe2\x96\x81the", ""});
        CHECK(f.get_float_array("tokenizer.ggml.scores") == std::vector<float>{0.0f, -1.5f, 2.0f});
        CHECK(f.get_int_array("tokenizer.ggml.token_type") == std::vector<int64_t>{2, 1, -3});
        REQUIRE(f.tensors().size() == 2);
        CHECK(f.tensors()[1].offset % 32 == 0);
        CHECK(f.find_tensor("m.weight")->shape() == std::vector<int64_t>{3, 5});
        CHECK(f.load("m.weight").data == matrix.data);
        CHECK(f.load("m.weight").shape == matrix.shape);
        CHECK(f.load("v.weight").data == vector.data);
    }
}

TEST_CASE("GGUF: a TensorSource, read as a safetensors file of the same tensors is") {
    ScratchDir dir;
    const Tensor matrix = random_tensor({3, 5}), vector = random_tensor({4});
    write_text(dir / "m.gguf", small_file(matrix, vector).bytes());
    write_safetensors(dir / "m.safetensors", {{"v.weight", vector}, {"m.weight", matrix}});
    const GgufFile gguf(dir / "m.gguf");
    const SafetensorsFile safetensors(dir / "m.safetensors");
    for (const TensorSource* source :
         {static_cast<const TensorSource*>(&gguf), static_cast<const TensorSource*>(&safetensors)}) {
        CAPTURE(source->path());
        CHECK(source->names() == std::vector<std::string>{"m.weight", "v.weight"});
        CHECK(source->contains("m.weight"));
        CHECK(!source->contains("m.bias"));
        CHECK(source->shape("m.weight") == std::vector<int64_t>{3, 5});
        CHECK(load_of_shape(*source, "m.weight", {3, 5}).data == matrix.data);
        CHECK(load_of_shape(*source, "v.weight", {4}).data == vector.data);
        expect_error(ErrorKind::bad_input, [&] { load_of_shape(*source, "m.bias", {5}); },
                     {source->path(), "has no tensor \"m.bias\""});
        expect_error(ErrorKind::bad_input,
                     [&] {
                         check_of_shape(*source, "m.weight", {5, 3});
                     },
                     {source->path(), "tensor \"m.weight\" has shape [3, 5], expected [5, 3]"});
    }
    expect_error(ErrorKind::bad_input, [&] { gguf.shape("absent"); }, {"m.gguf", "has no tensor \"absent\""});
}

TEST_CASE("GGUF: general.alignment places the data") {
    ScratchDir dir;
    const Tensor a = random_tensor({3}), c = random_tensor({2, 2});
    GgufBuilder b;
    b.alignment = 64;
    b.add_u32("general.alignment", 64);
    b.add_f32_tensor("a", {3}, a.data);
    b.add_f32_tensor("c", {2, 2}, c.data);
    write_text(dir / "m.gguf", b.bytes());
    const GgufFile f(dir / "m.gguf");
    CHECK(f.alignment() == 64);
    CHECK(f.load("a").data == a.data);
    CHECK(f.load("c").data == c.data);
}

TEST_CASE("GGUF: wrong value types are named with their key") {
    ScratchDir dir;
    write_text(dir / "m.gguf", small_file(random_tensor({3, 5}), random_tensor({4})).bytes());
    const GgufFile f(dir / "m.gguf");
    expect_error(ErrorKind::bad_input, [&] { f.get_uint("general.architecture"); },
                 {"m.gguf", "general.architecture", "string"});
    expect_error(ErrorKind::bad_input, [&] { f.get_string("llama.block_count"); },
                 {"m.gguf", "llama.block_count", "expected a string"});
    expect_error(ErrorKind::bad_input, [&] { f.get_float_array("tokenizer.ggml.tokens"); },
                 {"m.gguf", "not an array of float32"});
    expect_error(ErrorKind::bad_input, [&] { f.get_string_array("tokenizer.ggml.merges"); },
                 {"m.gguf", "no metadata key \"tokenizer.ggml.merges\""});
    expect_error(ErrorKind::bad_input, [&] { f.load("absent.weight"); }, {"m.gguf", "no tensor \"absent.weight\""});
}

TEST_CASE("GGUF: hostile files are refused before allocating, naming the file") {
    ScratchDir dir;
    const std::string path = dir / "bad.gguf";
    const GgufBuilder good_builder = small_file(random_tensor({3, 5}), random_tensor({4}));
    const std::string good = good_builder.bytes();
    auto expect_refused = [&](const std::string& bytes, const std::string& fragment) {
        CAPTURE(fragment);
        write_text(path, bytes);
        expect_error(ErrorKind::bad_input, [&] { GgufFile f(path); }, {"bad.gguf", fragment});
    };
    auto patched = [&](size_t at, const auto& value) {
        std::string bytes = good;
        std::memcpy(bytes.data() + at, &value, sizeof value);
        return bytes;
    };

    expect_refused("", "no \"GGUF\" magic");
    expect_refused("GGML" + good.substr(4), "no \"GGUF\" magic");
    expect_refused(patched(4, uint32_t{1}), "version 1");
    expect_refused(patched(4, uint32_t{0x03000000}), "big-endian");
    expect_refused(patched(4, uint32_t{9}), "unknown GGUF version 9");
    expect_refused(patched(8, uint64_t{1} << 60), "more than its");
    expect_refused(patched(16, ~uint64_t{0}), "more than its");
    // Truncated anywhere: in the header, the metadata, the infos or the data.
    for (size_t cut :
         {size_t{10}, size_t{30}, good_builder.infos_start() - 3, good_builder.infos_start() + 20, good.size() - 1})
        expect_refused(good.substr(0, cut), "truncated");
    // The first key's length (at 24), its value type (after the 8 + 20 bytes of "general.architecture").
    expect_refused(patched(24, uint64_t{1} << 40), "more than 2^24");
    expect_refused(patched(24 + 8 + 20, uint32_t{13}), "unknown value type 13");
    // A string value's length past the end.
    expect_refused(patched(24 + 8 + 20 + 4, uint64_t{1} << 23), "truncated");

    // The first tensor info ("m.weight"): n_dims, dims, type, offset.
    const size_t info = good_builder.infos_start() + 8 + 8;
    expect_refused(patched(info, uint32_t{0}), "0 dimensions");
    expect_refused(patched(info, uint32_t{5}), "5 dimensions");
    expect_refused(patched(info + 4, int64_t{-5}), "must be positive");
    expect_refused(patched(info + 4, int64_t{1} << 62), "larger than the file");
    expect_refused(patched(info + 12, int64_t{1} << 40), "larger than the file");
    expect_refused(patched(info + 20, uint32_t{4}), "unknown ggml type 4");
    expect_refused(patched(info + 20, uint32_t{8}), "not whole Q8_0 blocks");
    expect_refused(patched(info + 24, uint64_t{8}), "not a multiple of the alignment");
    expect_refused(patched(info + 24, uint64_t{1} << 20), "runs past the end");
    expect_refused(patched(info + 24, ~uint64_t{31}), "runs past the end");

    // Structural problems built on purpose.
    GgufBuilder twice;
    twice.add_u32("a", 1);
    twice.add_u32("a", 2);
    expect_refused(twice.bytes(), "\"a\" appears twice");
    GgufBuilder same_tensor;
    same_tensor.add_f32_tensor("t", {1}, std::vector<float>{1.0f});
    same_tensor.add_f32_tensor("t", {1}, std::vector<float>{2.0f});
    expect_refused(same_tensor.bytes(), "\"t\" appears twice");
    GgufBuilder bad_alignment;
    bad_alignment.add_u32("general.alignment", 24);
    expect_refused(bad_alignment.bytes(), "not a power of two");
    GgufBuilder nested;
    std::string nested_bytes = [&] {
        nested.add_i32_array("n", {1});
        std::string bytes = nested.bytes();
        const uint32_t array = 9;
        std::memcpy(bytes.data() + 24 + 8 + 1 + 4, &array, 4);  // the element type
        return bytes;
    }();
    expect_refused(nested_bytes, "array of arrays");
    GgufBuilder huge_array;
    huge_array.add_i32_array("n", {1});
    std::string huge = huge_array.bytes();
    const uint64_t count = uint64_t{1} << 61;
    std::memcpy(huge.data() + 24 + 8 + 1 + 4 + 4, &count, 8);
    expect_refused(huge, "more than the file holds");
}

TEST_CASE("GGUF: tensors of a type attn-viz cannot decode, and non-finite values, are refused on load") {
    ScratchDir dir;
    GgufBuilder b;
    b.add_tensor("q2", {256}, 10, std::string(84, '\x11'));  // Q2_K
    b.add_f32_tensor("nan", {2}, std::vector<float>{1.0f, std::numeric_limits<float>::quiet_NaN()});
    write_text(dir / "m.gguf", b.bytes());
    const GgufFile f(dir / "m.gguf");
    expect_error(ErrorKind::bad_input, [&] { f.load("q2"); }, {"m.gguf", "\"q2\"", "Q2_K", "cannot decode"});
    // The same refusal before any decoding, as a streamed model checks its blocks up front.
    expect_error(ErrorKind::bad_input, [&] { check_of_shape(f, "q2", {256}); }, {"m.gguf", "\"q2\"", "Q2_K"});
    CHECK_NOTHROW(check_of_shape(f, "nan", {2}));
    expect_error(
        ErrorKind::bad_input, [&] { f.load("nan"); }, {"m.gguf", "nan"}, Remedy::allow_nonfinite);
    LoadLimits small;
    small.memory_budget = 4;
    expect_error(
        ErrorKind::bad_input, [&] { GgufFile(dir / "m.gguf", small).load("nan"); }, {"m.gguf"},
        Remedy::raise_memory_budget);
}

TEST_CASE("GGUF: load_rows decodes rows as stored or straight into their transpose, in the memory the output has") {
    ScratchDir dir;
    GgufBuilder b;
    const Tensor plain = random_tensor({37, 5});
    b.add_f32_tensor("f32", {5, 37}, plain.data);
    b.add_tensor("q4_k", {512, 19}, static_cast<uint32_t>(GgmlType::q4_k), random_blocks(GgmlType::q4_k, 19 * 2));
    b.add_tensor("q8_0", {96, 33}, static_cast<uint32_t>(GgmlType::q8_0), random_blocks(GgmlType::q8_0, 33 * 3));
    b.add_tensor("q6_k", {256, 1}, static_cast<uint32_t>(GgmlType::q6_k), random_blocks(GgmlType::q6_k, 1));
    write_text(dir / "m.gguf", b.bytes());
    const GgufFile f(dir / "m.gguf");
    for (const RowLayout layout : {RowLayout::as_stored, RowLayout::transposed})
        for (const char* name : {"f32", "q4_k", "q8_0", "q6_k"}) {
            CAPTURE(name);
            CAPTURE(static_cast<int>(layout));
            const Tensor whole = f.load(name);
            const int64_t rows = whole.dim(0);
            // Rows [begin, begin + count) of the whole tensor, in `layout`.
            const auto expected = [&](int64_t begin, int64_t count) {
                const Tensor part = rows_of(whole, begin, count);
                return layout == RowLayout::transposed ? transposed(part) : part;
            };
            Tensor out;
            f.load_rows(name, 0, rows, layout, out);
            CHECK(out.shape == expected(0, rows).shape);
            CHECK(out.data == expected(0, rows).data);
            // Parts of the rows (as a fused q/k/v projection is split), each into the same memory.
            const float* memory = out.ptr();
            for (const auto& [begin, count] :
                 {std::pair<int64_t, int64_t>{0, 1}, {rows / 3, rows - rows / 3}, {rows - 1, 1}}) {
                f.load_rows(name, begin, count, layout, out);
                CHECK(out.ptr() == memory);
                CHECK(out.shape == expected(begin, count).shape);
                CHECK(out.data == expected(begin, count).data);
            }
        }
    Tensor out;
    CHECK_THROWS_AS(f.load_rows("f32", 30, 8, RowLayout::as_stored, out), Error);
    CHECK_THROWS_AS(f.load_rows("absent", 0, 1, RowLayout::transposed, out), Error);
}

TEST_CASE("GGUF: load_rows refuses a non-finite value as load does, naming its index in the whole tensor") {
    ScratchDir dir;
    GgufBuilder b;
    Tensor values = random_tensor({20, 3});
    values.data[17 * 3 + 1] = std::numeric_limits<float>::quiet_NaN();
    b.add_f32_tensor("nan", {3, 20}, values.data);
    write_text(dir / "m.gguf", b.bytes());
    const GgufFile f(dir / "m.gguf");
    for (const RowLayout layout : {RowLayout::as_stored, RowLayout::transposed}) {
        Tensor out;
        f.load_rows("nan", 0, 17, layout, out);  // the rows before the NaN
        expect_error(
            ErrorKind::bad_input, [&] { f.load_rows("nan", 17, 3, layout, out); },
            {"m.gguf", "nan[17, 1] is not finite"}, Remedy::allow_nonfinite);
        LoadLimits lenient;
        lenient.allow_nonfinite = true;
        GgufFile(dir / "m.gguf", lenient).load_rows("nan", 0, 20, layout, out);
        CHECK(std::isnan(out.data[layout == RowLayout::transposed ? 1 * 20 + 17 : 17 * 3 + 1]));
    }
}

}  // TEST_SUITE("formats")
