// One check shared by the loader tests: an action must fail with Error(bad_input), a one-line
// message containing every given fragment (typically the file name and what is wrong) and the
// given Remedy (none unless the caller can ask for something that gets past the error).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "error.hpp"

namespace test_support {

inline void expect_input_error(const std::function<void()>& action, const std::vector<std::string>& fragments,
                               attn_viz::Remedy remedy = attn_viz::Remedy::none) {
    try {
        action();
        FAIL("accepted bad input; expected an error mentioning '" << fragments.back() << "'");
    } catch (const attn_viz::Error& e) {
        const std::string message = e.what();
        CHECK_MESSAGE(e.kind() == attn_viz::ErrorKind::bad_input, message);
        CHECK_MESSAGE(message.find('\n') == std::string::npos, message);
        CHECK_MESSAGE(e.remedy() == remedy, message);
        for (const std::string& fragment : fragments)
            CHECK_MESSAGE(message.find(fragment) != std::string::npos, "'" << fragment << "' not in: " << message);
    }
}

}  // namespace test_support
