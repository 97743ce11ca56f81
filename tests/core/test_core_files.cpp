// Errors that name the file: element_count's messages.
#include <doctest/doctest.h>

#include <string>

#include "error.hpp"
#include "support.hpp"

using namespace attn_viz;

namespace {

// Runs `action`, which must throw Error of `kind` whose message holds every fragment.
template <typename Action>
void expect_error(Action action, ErrorKind kind, const std::vector<std::string>& fragments) {
    try {
        action();
        FAIL("no error; expected one with " << fragments.front());
    } catch (const Error& e) {
        CHECK(e.kind() == kind);
        for (const std::string& f : fragments) CHECK_MESSAGE(std::string(e.what()).find(f) != std::string::npos, e.what());
    }
}

}  // namespace

TEST_SUITE("core") {

TEST_CASE("element_count names the file or tensor whose shape is negative or overflows") {
    CHECK(element_count({2, 3, 4}, "x.npy") == 24);
    CHECK(element_count({}, "x.npy") == 1);
    CHECK(element_count({0, int64_t{1} << 62, 5}, "x.npy") == 0);
    expect_error([] { element_count({int64_t{1} << 31, int64_t{1} << 31, 4}, "big.npy"); }, ErrorKind::bad_input,
                 {"big.npy: ", "more than 2^62 elements"});
    expect_error([] { element_count({3, -1}, "neg.npy"); }, ErrorKind::bad_input, {"neg.npy: ", "negative dimension"});
}

}
