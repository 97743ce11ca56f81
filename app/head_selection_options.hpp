// attn-viz model --layers / --heads: which heads get pictures (docs/rendering.md, "Choosing what
// to draw"). The grammar, case-insensitive, items separated by commas:
//   --layers  N | A-B                       (every head of layer N, of layers A..B inclusive)
//   --heads   LxHy | LxHa-b | x:y | x:a-b   (head y of layer x; heads a..b of layer x)
// Both options together draw the union.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "head_selection.hpp"  // lib/report: HeadSelection

namespace attn_viz_cli {

// One item of a selection: layers [first_layer, last_layer], of each heads [first_head, last_head]
// or every head.
struct HeadRange {
    std::string option, text;  // "--heads" and the item as written, for messages
    int64_t first_layer = 0, last_layer = 0;
    bool every_head = false;
    int64_t first_head = 0, last_head = 0;
};

// The items of --layers (layers_text) and --heads (heads_text), either "" when not given.
// Throws Error(usage, "--heads 'L3X1': ...") naming the option and the item on a syntax error.
std::vector<HeadRange> parse_head_selection(const std::string& layers_text, const std::string& heads_text);

// The heads `ranges` select in a model of num_layers x num_heads; every head when `ranges` is
// empty. Throws Error(usage) naming the item and the model's shape when an item lies outside it.
attn_viz::HeadSelection select_heads(const std::vector<HeadRange>& ranges, int64_t num_layers, int64_t num_heads);

}  // namespace attn_viz_cli
