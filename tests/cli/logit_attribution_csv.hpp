// Reading logit_attribution.csv back in the CLI tests: each position's components summed.
#pragma once

#include <map>
#include <sstream>
#include <string>

namespace test_support {

// logit_attribution.csv's text -> position -> the sum of its components' contributions.
inline std::map<int, double> logit_attribution_sums(const std::string& csv) {
    std::map<int, double> sums;
    std::istringstream lines(csv);
    std::string line;
    std::getline(lines, line);  // the header
    while (std::getline(lines, line)) {
        const int position = std::stoi(line.substr(0, line.find(',')));
        sums[position] += std::stod(line.substr(line.rfind(',') + 1));
    }
    return sums;
}

}  // namespace test_support
