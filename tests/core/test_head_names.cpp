// The one head notation: L1H3 (any case) and 1:3, lists and ranges, and what is refused.
#include <random>
#include <string>

#include <doctest/doctest.h>

#include "error.hpp"
#include "expect_error.hpp"
#include "head_names.hpp"
#include "support.hpp"

using namespace attn_viz;
using test_support::expect_error;

TEST_SUITE("core") {

TEST_CASE("parse_head_name reads L1H3 in any case and 1:3 alike, for random heads, and writes L1H3") {
    auto& rng = test_support::rng();
    std::uniform_int_distribution<int64_t> number(0, 4095);
    for (int trial = 0; trial < 200; ++trial) {
        const int64_t layer = trial < 2 ? trial * 99999 : number(rng), head = number(rng);
        const std::string l = std::to_string(layer), h = std::to_string(head);
        const HeadName want{layer, head};
        for (const std::string& text : {"L" + l + "H" + h, "l" + l + "h" + h, "L" + l + "h" + h, l + ":" + h}) {
            INFO(text);
            CHECK(parse_head_name(text, "--svg") == want);
            CHECK(parse_head_name(text, "--svg", true) == want);
        }
        CHECK(head_name(layer, head) == "L" + l + "H" + h);
        CHECK(parse_head_name(head_name(layer, head), "--svg") == want);
        CHECK(parse_head_name(h, "--svg", true) == HeadName{std::nullopt, head});
    }
}

TEST_CASE("parse_head_name refuses what is not a head, naming the option and the text") {
    for (const char* text : {"", "L", "H3", "L1", "LH3", "L1H", "1:", ":3", "1:3:4", "L-1H3", "1:-3", "L1H3x", "x1H3",
                             "L1 H3", "1.5:3", "99999999999999999999:1", "L1H3,L2H4", "1-2", "L1H0-3"}) {
        INFO(text);
        const std::string message = expect_error(ErrorKind::usage, [&] { parse_head_name(text, "--svg", true); }, {});
        CHECK(message == "--svg '" + std::string(text) + "': expected a head as L1H3 or 1:3, or a head number alone");
    }
    CHECK(expect_error(ErrorKind::usage, [] { parse_head_name("3", "--ablate"); }, {}) ==
          "--ablate '3': expected a head as L1H3 or 1:3");
}

TEST_CASE("parse_head_names reads lists mixing both forms, with ranges of heads, in the order given") {
    const std::vector<HeadName> want = {{1, 3}, {2, 0}, {4, 0}, {4, 1}, {4, 2}, {0, 5}, {7, 7}};
    CHECK(parse_head_names("L1H3,2:0,L4H0-2,l0h5,7:7-7", "--heads") == want);
    CHECK(parse_head_names("L12H11", "--heads") == std::vector<HeadName>{{12, 11}});
    const std::vector<HeadName> wide = parse_head_names("3:0-65535", "--heads");
    CHECK(wide.size() == 65536);
    CHECK(wide.back() == HeadName{3, 65535});
    for (const char* text :
         {"", ",", "L1H3,", ",L1H3", "L1H3,,L2H0", "3", "L1H3-1", "L1H-3", "L1H0-", "1:0-65536", "all"}) {
        INFO(text);
        CHECK(expect_error(ErrorKind::usage, [&] { parse_head_names(text, "--heads"); }, {}) ==
              "--heads '" + std::string(text) + "': expected heads as L1H3,L2H0-7 or 1:3,2:0-7");
    }
}

}  // TEST_SUITE("core")
