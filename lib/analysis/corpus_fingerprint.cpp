#include "corpus_fingerprint.hpp"

#include "fingerprint.hpp"

namespace attn_viz {

uint64_t sequence_fingerprint(const Tensor& embeddings, const std::vector<uint8_t>& key_excluded) {
    Fingerprint f;
    f.add_tensor(embeddings);
    std::vector<uint8_t> mask(static_cast<size_t>(embeddings.dim(0)), 0);
    for (size_t i = 0; i < key_excluded.size() && i < mask.size(); ++i) mask[i] = key_excluded[i] ? 1 : 0;
    f.add_bytes(mask.data(), mask.size());
    return f.value();
}

uint64_t token_sequence_fingerprint(const std::vector<int>& ids, const std::vector<int>& token_types) {
    Fingerprint f;
    for (const std::vector<int>* values : {&ids, &token_types}) {
        if (values->empty()) continue;  // no types: a single text's fingerprint as before pairs existed
        f.add_int(static_cast<int64_t>(values->size()));
        for (int value : *values) f.add_int(value);
    }
    return f.value();
}

uint64_t token_pair_fingerprint(const std::vector<int>& source, const std::vector<int>& target) {
    Fingerprint f;
    for (const std::vector<int>* ids : {&source, &target}) {
        f.add_int(static_cast<int64_t>(ids->size()));
        for (int id : *ids) f.add_int(id);
    }
    return f.value();
}

uint64_t corpus_sequence_key(uint64_t corpus_fingerprint, int64_t position, uint64_t sequence_fingerprint) {
    Fingerprint f;
    f.add_int(static_cast<int64_t>(corpus_fingerprint));
    f.add_int(position);
    f.add_int(static_cast<int64_t>(sequence_fingerprint));
    return f.value();
}

}  // namespace attn_viz
