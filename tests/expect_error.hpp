// The one check of a thrown attn_viz::Error shared by the tests: an action must fail with an Error
// of the given kind, a one-line message containing every given fragment (typically the file name
// and what is wrong) and the given Remedy (none unless the caller can ask for something that gets
// past the error).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "error.hpp"

namespace test_support {

// Returns the message, for the few tests that check more of it (where it starts, how long it is).
inline std::string expect_error(attn_viz::ErrorKind kind, const std::function<void()>& action,
                                const std::vector<std::string>& fragments,
                                attn_viz::Remedy remedy = attn_viz::Remedy::none) {
    try {
        action();
    } catch (const attn_viz::Error& e) {
        const std::string message = e.what();
        CHECK_MESSAGE(e.kind() == kind, message);
        CHECK_MESSAGE(message.find('\n') == std::string::npos, message);
        CHECK_MESSAGE(e.remedy() == remedy, message);
        for (const std::string& fragment : fragments)
            CHECK_MESSAGE(message.find(fragment) != std::string::npos, "'" << fragment << "' not in: " << message);
        return message;
    }
    std::string expected;
    for (const std::string& fragment : fragments) expected += " '" + fragment + "'";
    FAIL("no error thrown" << (expected.empty() ? "" : "; expected one mentioning" + expected));
    return "";
}

}  // namespace test_support
