#include "piece_trie.hpp"

namespace attn_viz {

void PieceTrie::insert(std::string_view piece, int id) {
    if (piece.empty()) return;
    uint32_t& first = root_children_[byte_at(piece, 0)];
    if (first == none) first = new_node(byte_at(piece, 0));
    uint32_t node = first;
    for (size_t at = 1; at < piece.size(); ++at) node = add_child(node, byte_at(piece, at));
    nodes_[node].id = id;
}

uint32_t PieceTrie::add_child(uint32_t node, unsigned char byte) {
    uint32_t last = none;
    for (uint32_t at = nodes_[node].first_child; at != none; at = nodes_[at].next_sibling) {
        if (nodes_[at].byte == byte) return at;
        last = at;
    }
    const uint32_t added = new_node(byte);
    (last == none ? nodes_[node].first_child : nodes_[last].next_sibling) = added;
    return added;
}

uint32_t PieceTrie::new_node(unsigned char byte) {
    nodes_.push_back({none, none, -1, byte});
    return static_cast<uint32_t>(nodes_.size() - 1);
}

}  // namespace attn_viz
