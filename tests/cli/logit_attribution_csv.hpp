// Reading logit_attribution.csv back in the CLI tests: each position's components summed.
#pragma once

#include <map>
#include <sstream>
#include <string>

namespace test_support {

// logit_attribution.csv's text -> position -> the sum of its components' contributions (the
// sixth column; the target's quoted text follows it).
inline std::map<int, double> logit_attribution_sums(const std::string& csv) {
    std::map<int, double> sums;
    std::istringstream lines(csv);
    std::string line;
    std::getline(lines, line);  // the header
    while (std::getline(lines, line)) {
        size_t at = 0;
        for (int column = 0; column < 5; ++column) at = line.find(',', at) + 1;
        sums[std::stoi(line)] += std::stod(line.substr(at, line.find(',', at) - at));
    }
    return sums;
}

}  // namespace test_support
