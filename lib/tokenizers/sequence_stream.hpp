// Many input sequences read one at a time (corpus mode): a JSONL file with one input object per
// line, or a folder of input JSON files taken in name order. Only the current sequence is held.
// A run may take one shard of the corpus (--shard I/N): the sequences whose index i (0-based, in
// corpus order: the JSONL file's non-blank lines, or the folder's files) has i mod N == I, so that
// N runs anywhere cover the corpus exactly once and merge exactly (README, "Corpora on a cluster").
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fingerprint.hpp"
#include "hf_tokenizer.hpp"
#include "input_file.hpp"
#include "input_lines.hpp"
#include "load_limits.hpp"
#include "model_tokenizer.hpp"

namespace attn_viz {

// Shard `index` of `count` (0 <= index < count): the sequences i with i mod count == index.
// Round-robin rather than contiguous blocks, so that a corpus sorted by length (the cost is
// quadratic in T) still gives shards of equal cost, and no shard must count the corpus first.
struct CorpusShard {
    int64_t index = 0;
    int64_t count = 1;

    bool holds(int64_t sequence) const { return sequence % count == index; }
    std::string text() const;  // "I/N"
};

inline constexpr int64_t max_corpus_shards = 1000000;

// "I/N" with 0 <= I < N <= max_corpus_shards; throws Error(usage) otherwise.
CorpusShard parse_corpus_shard(const std::string& text);

// What the lines of a corpus file are: JSON documents, or (as `attn-viz tokenize --inputs` and
// `model --inputs` take them) JSON documents in a ".jsonl" file and texts in any other file, each
// line read as {"text": line} without a trailing "\r".
enum class CorpusLines { json, json_or_text };

// The JSON documents of a corpus, or of one shard of it, one at a time. A shard reads past the
// other shards' lines without parsing them (a malformed line is reported by the shard that owns it).
class CorpusDocuments {
public:
    // Opens `path` (a file of lines as `lines` says, or a folder of .json files); every document is
    // read within `limits`: a line longer than the budget's share for parsing JSON
    // (json_bytes_per_text_byte per byte) is refused, naming the file and line, as soon as that much
    // of it is read. A folder's corpus is its entries named *.json, each of which must be a regular
    // file or a symbolic link to one: a named pipe, a socket, a device, a folder, a dangling link or
    // a link that loops throws Error(io) naming the entry and what it is. Other entries (a README,
    // a folder of .npy files) are not looked at.
    explicit CorpusDocuments(const std::string& path, const LoadLimits& limits = {}, CorpusShard shard = {},
                             CorpusLines lines = CorpusLines::json);
    // The JSON documents `lines` held in memory (e.g. from Python), read as the lines of a JSONL
    // file named `name` would be: the same shards, positions and corpus fingerprint, documents
    // named "<name>:<line>" (1-based).
    CorpusDocuments(const std::string& name, std::vector<std::string> lines, CorpusShard shard = {});

    // Reads the shard's next document into `doc` and names it in `where` ("c.jsonl:17",
    // "dir/a.json"); false at the end. Blank lines are skipped and not counted; a malformed line
    // (or a text line that is not UTF-8) throws Error(bad_input) naming the file and line.
    bool next(nlohmann::json& doc, std::string& where);

    // How many documents next() returns from the start, the shard's share, counted without reading
    // one: a folder's .json entries, the held lines, or a file's non-blank lines found in one pass
    // over the file mapped (a scan for newlines at memory speed once the file is in the page cache,
    // where it leaves the file for the run to read).
    int64_t count_sequences() const;

    // Where relative {"npy": ...} references of the documents are resolved.
    const std::string& base_dir() const { return base_dir_; }
    // The sequences of the whole corpus (every shard's) passed so far: the corpus's size once
    // next() has returned false.
    int64_t corpus_sequences() const { return sequences_passed_; }
    // The position in the whole corpus (0-based, every shard's sequences counted) of the document
    // next() read last.
    int64_t position() const { return sequences_passed_ - 1; }
    // Once next() has returned false, the fingerprint of the whole corpus, the same in every
    // shard: XXH3 of each non-blank line of a JSONL file (its length as 8 bytes, then its bytes),
    // or of each file of a folder (its name's length, its name, its size in bytes) in name order.
    // Files that lines refer to ({"npy": ...}) are not part of it.
    uint64_t corpus_fingerprint() const { return fingerprint_.value(); }

private:
    std::string path_, base_dir_;
    LoadLimits limits_;
    CorpusShard shard_;
    int64_t sequences_passed_ = 0;
    Fingerprint fingerprint_;
    std::unique_ptr<InputLines> jsonl_;    // a file of lines (JSONL or plain text)
    std::vector<std::string> held_lines_;  // or lines in memory, the next at held_next_
    size_t held_next_ = 0;
    bool text_lines_ = false;
    std::string line_;
    std::vector<std::string> files_;  // folder mode, sorted by name

    void add_text(const std::string& text);  // to the fingerprint: length, then bytes
    // The next line of the file or of the held lines into line_, its 1-based number into `number`; false at the end.
    bool next_line(int64_t& number);
};

// Input sequences (embeddings, tokens, mask) of a layer's corpus or of one shard of it: the
// documents of `documents` (which must outlive the stream) parsed as parse_sequence reads them.
class SequenceStream {
public:
    // Embeddings must have `d_model` columns. Every sequence is read within `limits`.
    SequenceStream(CorpusDocuments& documents, int64_t d_model, const LoadLimits& limits = {});

    // Reads the next sequence into `out` and names it in `where`; false at the end.
    bool next(SequenceInput& out, std::string& where);

private:
    CorpusDocuments& documents_;
    int64_t d_model_;
    LoadLimits limits_;
};

// One sequence of a model corpus (attn-viz model --inputs): {"text": "..."} for the model's
// tokenizer, or {"tokens": [1, 403, ...]} (ids, each in [0, 2^31)). Exactly one of the two is set.
struct ModelSequence {
    std::optional<std::string> text;
    std::optional<std::string> text_pair;  // "text_pair" beside "text": the pair's second text
    std::vector<int> token_ids;
};

// The keys a corpus line names a sequence's text and ids with: "text" and "tokens", or an
// encoder-decoder's decoder input, "target_text" and "target_tokens".
struct SequenceKeys {
    const char* text = "text";
    const char* tokens = "tokens";
};
inline constexpr SequenceKeys target_keys = {"target_text", "target_tokens"};

// Throws Error(bad_input, "<where>: ...") for anything else (neither or both keys, an empty or
// non-integer id list).
ModelSequence parse_model_sequence(const nlohmann::json& doc, const std::string& where, const SequenceKeys& keys = {});

// The ids a model without a decoder input runs for one corpus document: its text encoded by
// `tokenizer` within `max_tokens` (the text's size checked against limits.memory_budget first; cut
// to it with limits.truncate_texts, as encode_for_context cuts), its text pair ("text" and
// "text_pair") encoded as a pair with the token types the tokenizer gives (never cut), or its ids
// as given (checked by the caller against the model). Errors name `where`; a document with an
// encoder-decoder's target ("target_text", "target_tokens") is refused, not run without it.
EncodedText model_sequence_ids(const nlohmann::json& doc, const ModelTokenizer& tokenizer, int64_t max_tokens,
                               const LoadLimits& limits, const std::string& where);

// An encoder-decoder's corpus line: the source ("text" or "tokens") and the decoder input as given
// ("target_text" or "target_tokens"), each read as model_sequence_ids reads a document. A line
// without a target throws Error(bad_input, "<where>: ...").
struct SequencePair {
    std::vector<int> source, target;
};
SequencePair model_sequence_pair_ids(const nlohmann::json& doc, const ModelTokenizer& tokenizer, int64_t max_tokens,
                                     uint64_t memory_budget, const std::string& where);

}  // namespace attn_viz
