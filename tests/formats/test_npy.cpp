#include <cstring>

#include <doctest/doctest.h>

#include "error.hpp"
#include "expect_error.hpp"
#include "npy.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;

TEST_SUITE("unit") {

TEST_CASE("npy round-trips float32 tensors of several ranks") {
    ScratchDir dir;
    for (std::vector<int64_t> shape : std::vector<std::vector<int64_t>>{{7}, {3, 5}, {2, 1, 9}, {1, 1}}) {
        Tensor t = random_tensor(shape);
        write_npy(dir / "t.npy", t);
        Tensor back = read_npy(dir / "t.npy");
        CHECK(back.shape == t.shape);
        CHECK(back.data == t.data);
    }
}

TEST_CASE("npy reads float64 written by NumPy's layout") {
    // Hand-built version 1.0 header for a <f8 array of shape (2, 2).
    std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }";
    header.append(64 - (10 + header.size() + 1) % 64, ' ');
    header += '\n';
    std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
    bytes += static_cast<char>(header.size() & 0xff);
    bytes += static_cast<char>(header.size() >> 8);
    bytes += header;
    const double values[4] = {1.5, -2.25, 3.0, 1e-3};
    bytes.append(reinterpret_cast<const char*>(values), sizeof values);
    Tensor t = parse_npy(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), "x.npy");
    CHECK(t.shape == std::vector<int64_t>{2, 2});
    CHECK(t.data[1] == doctest::Approx(-2.25));
    CHECK(t.data[3] == doctest::Approx(1e-3));
}

TEST_CASE("npy rejects hostile files with a message naming them") {
    ScratchDir dir;
    Tensor t = random_tensor({4, 4});
    write_npy(dir / "ok.npy", t);
    const std::string good = read_text(dir / "ok.npy");
    auto expect_bad = [&](const std::string& bytes, const std::string& fragment) {
        write_text(dir / "bad.npy", bytes);
        expect_error(ErrorKind::bad_input, [&] { read_npy(dir / "bad.npy"); }, {"bad.npy", fragment});
    };
    expect_bad(good.substr(0, good.size() - 3), "truncated");
    expect_bad("not numpy at all", "magic");
    std::string big = good;
    big.replace(big.find("(4, 4)"), 6, "(9999999, 99999)");
    expect_bad(big, "truncated");
    std::string ints = good;
    ints.replace(ints.find("<f4"), 3, "<i4");
    expect_bad(ints, "dtype");
    std::string fortran = good;
    fortran.replace(fortran.find("False"), 5, "True ");
    expect_bad(fortran, "Fortran");
    // Dimensions each within range whose product overflows 64 bits.
    std::string overflow = good;
    overflow.replace(overflow.find("(4, 4)"), 6, "(1099511627776, 1099511627776, 1099511627776)");
    expect_bad(overflow, "more than 2^62 elements");
    CHECK_THROWS_AS(read_npy(dir / "missing.npy"), Error);
}

}  // TEST_SUITE("unit")
