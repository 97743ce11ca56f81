// The front ends (app/, python/src/) drive the library through lib/session and the layers that
// have no model in them: they include no header of lib/attention or lib/models, except those
// docs/development.md lists under "Front-end includes still below the session", each with its
// reason. The list is checked both ways: a new include fails, and so does an entry whose include
// is gone (the list only shrinks, and says what is true).
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <doctest/doctest.h>

#include "cli_fixtures.hpp"

namespace fs = std::filesystem;

namespace {

std::string file_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// "app/cmd_run.cpp includes attention.hpp" for every include of a front-end source naming a
// header of lib/attention or lib/models.
std::set<std::string> model_layer_includes(const fs::path& root) {
    std::set<std::string> below;
    for (const char* layer : {"lib/attention", "lib/models"})
        for (const auto& entry : fs::directory_iterator(root / layer))
            if (entry.path().extension() == ".hpp") below.insert(entry.path().filename().string());
    std::set<std::string> found;
    const std::regex include(R"(^\s*#\s*include\s+"([^"]+)\")");
    for (const char* front_end : {"app", "python/src"})
        for (const auto& entry : fs::directory_iterator(root / front_end)) {
            const std::string ext = entry.path().extension().string();
            if (ext != ".cpp" && ext != ".hpp") continue;
            std::istringstream lines(file_text(entry.path()));
            for (std::string line; std::getline(lines, line);) {
                std::smatch m;
                if (std::regex_search(line, m, include) && below.count(m[1].str()))
                    found.insert(
                        fmt::format("{}/{} includes {}", front_end, entry.path().filename().string(), m[1].str()));
            }
        }
    return found;
}

// The entries of docs/development.md's list: lines "- `app/cmd_run.cpp` includes `attention.hpp`: why".
std::set<std::string> documented_exceptions(const fs::path& root) {
    std::set<std::string> listed;
    const std::regex entry(R"(^- `([^`]+)` includes `([^`]+)`: \S.*$)");
    std::istringstream lines(file_text(root / "docs/development.md"));
    bool in_list = false;
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("#", 0) == 0)
            in_list = line.find("Front-end includes still below the session") != std::string::npos;
        std::smatch m;
        if (in_list && std::regex_match(line, m, entry)) listed.insert(m[1].str() + " includes " + m[2].str());
    }
    return listed;
}

}  // namespace

TEST_SUITE("cli") {

TEST_CASE("front ends include lib/attention and lib/models only where docs/development.md says why") {
    const fs::path root = test_support::source_dir();
    const std::set<std::string> found = model_layer_includes(root), listed = documented_exceptions(root);
    for (const std::string& include : found) {
        INFO("not listed in docs/development.md: " << include);
        CHECK(listed.count(include) == 1);
    }
    for (const std::string& entry : listed) {
        INFO("listed in docs/development.md, but no longer true: " << entry);
        CHECK(found.count(entry) == 1);
    }
}

}  // TEST_SUITE("cli")
