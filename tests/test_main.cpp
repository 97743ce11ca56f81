// The doctest runner of every test executable. Where the executable links the attention layer,
// oneDNN's ISA is capped below AMX before any test touches oneDNN.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#if __has_include("onednn_backend.hpp")
#include "onednn_backend.hpp"
#define ATTN_VIZ_TESTS_USE_ONEDNN 1
#endif

int main(int argc, char** argv) {
#ifdef ATTN_VIZ_TESTS_USE_ONEDNN
    attn_viz::cap_onednn_isa();
#endif
    doctest::Context context(argc, argv);
    return context.run();
}
