// A prefix tree over the bytes of a vocabulary's pieces, as Hugging Face's tokenizers library keeps
// a Unigram vocabulary: the pieces a text starts with are found in one walk down from the root,
// in time proportional to how far the text follows the tree. Looking every prefix up in a hash
// map instead costs the sum of the prefixes' lengths, up to the longest piece, at every position
// of a word: cubic in the length for a long piece and a long word.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace attn_viz {

class PieceTrie {
public:
    // Adds `piece` with `id` (>= 0); a piece added again keeps its last id. An empty piece is
    // never found, so it is not added.
    void insert(std::string_view piece, int id);

    // Calls found(length, id) for every piece that `text` starts with, shortest first. Returns
    // the number of bytes of `text` the walk followed: the work it did.
    template <typename Found>
    size_t for_each_prefix(std::string_view text, Found&& found) const {
        size_t depth = 0;
        for (uint32_t node = text.empty() ? none : root_children_[byte_at(text, 0)]; node != none;) {
            ++depth;
            if (nodes_[node].id >= 0) found(depth, nodes_[node].id);
            node = depth < text.size() ? child(node, byte_at(text, depth)) : none;
        }
        return depth;
    }

private:
    static constexpr uint32_t none = 0;  // nodes_[0] stands for the root, which is no node's child

    // A node below the root: the byte that leads to it, its first child and its next sibling
    // (none at the end of a list), and the id of the piece that ends here (-1 for none).
    struct Node {
        uint32_t first_child = none;
        uint32_t next_sibling = none;
        int32_t id = -1;
        unsigned char byte = 0;
    };

    static unsigned char byte_at(std::string_view text, size_t at) { return static_cast<unsigned char>(text[at]); }

    // The child of `node` that `byte` leads to, or none.
    uint32_t child(uint32_t node, unsigned char byte) const {
        uint32_t at = nodes_[node].first_child;
        while (at != none && nodes_[at].byte != byte) at = nodes_[at].next_sibling;
        return at;
    }
    // That child, added at the end of the list if it was not there.
    uint32_t add_child(uint32_t node, unsigned char byte);
    // A new node below the root or below another, without children or a piece.
    uint32_t new_node(unsigned char byte);

    // The root's children by their byte, since every position of a word starts there; deeper
    // nodes keep theirs in a list, in the order the pieces were added (the first pieces of a
    // vocabulary are its likeliest).
    std::array<uint32_t, 256> root_children_{};
    std::vector<Node> nodes_ = std::vector<Node>(1);
};

}  // namespace attn_viz
