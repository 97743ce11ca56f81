// One check shared by the loader tests: an action must fail with Error(bad_input) and a one-line
// message containing every given fragment (typically the file name and what is wrong).
#pragma once

#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

#include "error.hpp"

namespace test_support {

inline void expect_input_error(const std::function<void()>& action, const std::vector<std::string>& fragments) {
    try {
        action();
        FAIL("accepted bad input; expected an error mentioning '" << fragments.back() << "'");
    } catch (const attn_viz::Error& e) {
        const std::string message = e.what();
        CHECK_MESSAGE(e.kind() == attn_viz::ErrorKind::bad_input, message);
        CHECK_MESSAGE(message.find('\n') == std::string::npos, message);
        for (const std::string& fragment : fragments)
            CHECK_MESSAGE(message.find(fragment) != std::string::npos, "'" << fragment << "' not in: " << message);
    }
}

}  // namespace test_support
