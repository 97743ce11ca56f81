// What a corpus result was computed from, as 64-bit fingerprints (XXH3, core/fingerprint.hpp):
// the layer or model (weights_fingerprint.hpp: so partials of different weights are not merged)
// and each sequence where it sits in its corpus (so one sequence is not counted twice, while a
// line the corpus repeats counts at each of its positions). docs/analysis.md, "Fingerprints",
// defines the bytes hashed.
#pragma once

#include <cstdint>
#include <vector>

#include "tensor.hpp"
#include "weights_fingerprint.hpp"

namespace attn_viz {

// embeddings: [T, D]; key_excluded: [T] or empty (= no padding). The embeddings (rank,
// dimensions, values), then T mask bytes (1 = excluded), so "no mask" and "all ones" agree.
uint64_t sequence_fingerprint(const Tensor& embeddings, const std::vector<uint8_t>& key_excluded);

// A sequence of token ids (a model corpus line, {"text"} encoded or {"tokens"}): T, then each id;
// with a text pair's token types (one per id), T and each type after them.
uint64_t token_sequence_fingerprint(const std::vector<int>& ids, const std::vector<int>& token_types = {});

// An encoder-decoder's corpus line: S, each source id, T, each target id.
uint64_t token_pair_fingerprint(const std::vector<int>& source, const std::vector<int>& target);

// The key a corpus run counts a sequence under: the corpus's fingerprint
// (CorpusDocuments::corpus_fingerprint), the sequence's position in the corpus (0-based, every
// shard's sequences counted) and the sequence's own fingerprint (one of the two above). Equal for
// the same sequence counted twice (a shard run twice, or a copy of the corpus under another
// path); different for a line the corpus holds at two positions.
uint64_t corpus_sequence_key(uint64_t corpus_fingerprint, int64_t position, uint64_t sequence_fingerprint);

}  // namespace attn_viz
