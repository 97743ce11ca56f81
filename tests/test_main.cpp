// The doctest runner. oneDNN's ISA is capped below AMX before any test touches oneDNN.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "onednn_backend.hpp"

int main(int argc, char** argv) {
    attn_viz::cap_onednn_isa();
    doctest::Context context(argc, argv);
    return context.run();
}
