// Corpus streams split into shards (--shard I/N): every sequence in exactly one shard, i mod N,
// for JSONL files and folders, and the model corpus's {"text"} / {"tokens"} lines.
#include <filesystem>
#include <map>

#include <doctest/doctest.h>

#include "error.hpp"
#include "expect_error.hpp"
#include "sequence_stream.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

// A JSONL line with T random rows of D numbers; the first number of the first row is `id` so the
// sequence can be recognised after reading.
std::string sequence_line(int id, int64_t T, int64_t D) {
    Tensor x = random_tensor({T, D});
    x.data[0] = static_cast<float>(id);
    nlohmann::json rows = nlohmann::json::array();
    for (int64_t t = 0; t < T; ++t)
        rows.push_back(std::vector<float>(x.data.begin() + t * D, x.data.begin() + (t + 1) * D));
    return nlohmann::json{{"embeddings", rows}}.dump();
}

// The ids of the sequences a stream yields, in order, and the corpus size it counted.
std::pair<std::vector<int>, int64_t> read_ids(const std::string& path, int64_t D, CorpusShard shard) {
    CorpusDocuments documents(path, LoadLimits{}, shard);
    SequenceStream stream(documents, D);
    SequenceInput sequence;
    std::string where;
    std::vector<int> ids;
    while (stream.next(sequence, where)) ids.push_back(static_cast<int>(sequence.embeddings.data[0]));
    return {ids, documents.corpus_sequences()};
}

}  // namespace

TEST_SUITE("tokenizers") {

TEST_CASE("parse_corpus_shard reads I/N and refuses anything else as a usage error") {
    const CorpusShard s = parse_corpus_shard("2/5");
    CHECK(s.index == 2);
    CHECK(s.count == 5);
    CHECK(s.text() == "2/5");
    CHECK(parse_corpus_shard("0/1").count == 1);
    for (const char* bad :
         {"", "3", "4/4", "-1/4", "1/0", "1/-2", " 1/4", "1/4 ", "1/4/2", "a/4", "1/1000001", "0x1/4", "1.0/4"}) {
        CAPTURE(bad);
        expect_error(ErrorKind::usage, [&] { parse_corpus_shard(bad); }, {"is not a shard I/N"});
    }
}

TEST_CASE("the shards of a JSONL corpus hold every sequence exactly once, sequence i in shard i mod N") {
    ScratchDir dir;
    const int64_t D = 3;
    const int count = 2 + static_cast<int>(rng()() % 30);
    CAPTURE(count);
    std::string text;
    for (int i = 0; i < count; ++i) {
        text += sequence_line(i, 1 + static_cast<int64_t>(rng()() % 4), D) + "\n";
        if (rng()() % 3 == 0) text += " \t\r\n";  // blank lines neither count nor shift the split
    }
    write_text(dir / "c.jsonl", text);
    for (int64_t N : {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{count}, int64_t{count + 2}}) {
        std::map<int, int> seen;
        for (int64_t I = 0; I < N; ++I) {
            const auto [ids, corpus_size] = read_ids(dir / "c.jsonl", D, {I, N});
            CHECK(corpus_size == count);
            for (size_t k = 0; k < ids.size(); ++k) {
                CHECK(ids[k] % N == I);
                if (k > 0) CHECK(ids[k] > ids[k - 1]);  // corpus order within a shard
                ++seen[ids[k]];
            }
        }
        CHECK(static_cast<int>(seen.size()) == count);
        for (const auto& [id, times] : seen) CHECK(times == 1);
    }
}

TEST_CASE("the shards of a folder corpus split its files in name order") {
    ScratchDir dir;
    std::filesystem::create_directory(dir / "c");
    for (int i = 0; i < 7; ++i) write_text(dir / ("c/s" + std::to_string(i) + ".json"), sequence_line(i, 2, 4));
    write_text(dir / "c/notes.txt", "not a sequence");
    const auto [ids, corpus_size] = read_ids(dir / "c", 4, {1, 3});
    CHECK(ids == std::vector<int>{1, 4});
    CHECK(corpus_size == 7);
    CHECK(read_ids(dir / "c", 4, {}).first.size() == 7);
}

TEST_CASE("a shard parses only its own lines; a malformed line is the error of the shard that holds it") {
    ScratchDir dir;
    write_text(dir / "c.jsonl", sequence_line(0, 2, 3) + "\n{broken\n" + sequence_line(2, 2, 3) + "\n");
    const auto [ids, corpus_size] = read_ids(dir / "c.jsonl", 3, {0, 2});
    CHECK(ids == std::vector<int>{0, 2});
    CHECK(corpus_size == 3);
    expect_error(ErrorKind::bad_input, [&] { read_ids(dir / "c.jsonl", 3, {1, 2}); }, {"c.jsonl:2", "invalid JSON"});
}

// The fingerprint and size of the corpus at `path` as shard `shard` sees them once read to the end.
std::pair<uint64_t, int64_t> corpus_identity(const std::string& path, CorpusShard shard = {}) {
    CorpusDocuments documents(path, LoadLimits{}, shard);
    nlohmann::json doc;
    std::string where;
    while (documents.next(doc, where)) {}
    return {documents.corpus_fingerprint(), documents.corpus_sequences()};
}

TEST_CASE("every shard sees the same corpus fingerprint; it changes with any line's content or order") {
    ScratchDir dir;
    std::vector<std::string> lines;
    for (int i = 0; i < 6; ++i) lines.push_back(sequence_line(i, 2, 3));
    const auto write = [&](const std::string& name, const std::vector<std::string>& text,
                           const std::string& separator) {
        std::string all;
        for (const std::string& line : text) all += line + separator;
        write_text(dir / name, all);
        return dir / name;
    };
    const auto identity = corpus_identity(write("c.jsonl", lines, "\n"));
    CHECK(identity.second == 6);
    for (int64_t I = 0; I < 4; ++I) CHECK(corpus_identity(dir / "c.jsonl", {I, 4}) == identity);
    CHECK(corpus_identity(write("blank.jsonl", lines, "\n\n  \n")) == identity);  // blank lines are not sequences
    std::vector<std::string> changed = lines;
    char& digit = changed[4][changed[4].find_last_of("0123456789")];  // the last row's last digit
    digit = digit == '5' ? '6' : '5';
    CHECK(corpus_identity(write("changed.jsonl", changed, "\n")).first != identity.first);
    changed = lines;
    std::swap(changed[1], changed[2]);
    CHECK(corpus_identity(write("swapped.jsonl", changed, "\n")).first != identity.first);
    changed = lines;
    changed.pop_back();
    CHECK(corpus_identity(write("shorter.jsonl", changed, "\n")).first != identity.first);

    // A folder: its files' names and sizes, in name order.
    std::filesystem::create_directory(dir / "f");
    for (int i = 0; i < 3; ++i) write_text(dir / ("f/s" + std::to_string(i) + ".json"), lines[static_cast<size_t>(i)]);
    const auto folder = corpus_identity(dir / "f");
    CHECK(folder.second == 3);
    CHECK(corpus_identity(dir / "f", {1, 2}) == folder);
    write_text(dir / "f/s1.json", lines[1] + " ");
    CHECK(corpus_identity(dir / "f").first != folder.first);
    write_text(dir / "f/s1.json", lines[1]);
    CHECK(corpus_identity(dir / "f") == folder);
    std::filesystem::rename(dir / "f/s1.json", dir / "f/t1.json");
    CHECK(corpus_identity(dir / "f").first != folder.first);
}

TEST_CASE("a model corpus line is a text or a list of token ids") {
    ModelSequence s = parse_model_sequence(nlohmann::json{{"text", "Once upon a time"}}, "c.jsonl:1");
    REQUIRE(s.text);
    CHECK(*s.text == "Once upon a time");
    CHECK(s.token_ids.empty());
    s = parse_model_sequence(nlohmann::json::parse(R"({"tokens": [1, 403, 0]})"), "c.jsonl:2");
    CHECK(!s.text);
    CHECK(s.token_ids == std::vector<int>{1, 403, 0});
    CHECK(parse_model_sequence(nlohmann::json{{"text", ""}}, "w").text == std::string());
    for (const char* bad : {R"({})", R"([1, 2])", R"({"text": "a", "tokens": [1]})", R"({"text": 3})",
                            R"({"tokens": []})", R"({"tokens": [1, -2]})", R"({"tokens": [1.5]})",
                            R"({"tokens": ["1"]})", R"({"tokens": [4294967296]})", R"({"tokens": 7})"}) {
        CAPTURE(bad);
        expect_error(ErrorKind::bad_input, [&] { parse_model_sequence(nlohmann::json::parse(bad), "c.jsonl:9"); },
                     {"c.jsonl:9"});
    }
}

}  // TEST_SUITE("tokenizers")

TEST_SUITE("tokenizers") {

TEST_CASE("lines held in memory are the JSONL file of the same lines: documents, shards, positions, fingerprint") {
    ScratchDir dir;
    std::vector<std::string> lines;
    const int count = 11;  // lines 4 and 8 blank
    std::string text;
    for (int i = 0; i < count; ++i) {
        lines.push_back(i % 4 == 3 ? "  " : nlohmann::json{{"tokens", {i, i + 1}}}.dump());
        text += lines.back() + "\n";
    }
    write_text(dir / "c.jsonl", text);
    for (const CorpusShard shard : {CorpusShard{0, 1}, CorpusShard{1, 3}, CorpusShard{2, 3}}) {
        CAPTURE(shard.text());
        CorpusDocuments file(dir / "c.jsonl", LoadLimits{}, shard), held("<lines>", lines, shard);
        nlohmann::json a, b;
        std::string where_a, where_b;
        while (file.next(a, where_a)) {
            REQUIRE(held.next(b, where_b));
            CHECK(a == b);
            CHECK(where_b == "<lines>" + where_a.substr(where_a.rfind(':')));
            CHECK(held.position() == file.position());
        }
        CHECK_FALSE(held.next(b, where_b));
        CHECK(held.corpus_sequences() == file.corpus_sequences());
        CHECK(held.corpus_fingerprint() == file.corpus_fingerprint());
    }
    CorpusDocuments bad("<lines>", std::vector<std::string>{"{\"tokens\": [1]}", "{oops"});
    nlohmann::json doc;
    std::string where;
    CHECK(bad.next(doc, where));
    expect_error(ErrorKind::bad_input, [&] { bad.next(doc, where); }, {"<lines>:2"});
}

}  // TEST_SUITE("tokenizers")
