#include "support.hpp"

#include <unistd.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include <sys/wait.h>

namespace test_support {

std::mt19937_64& rng() {
    static std::mt19937_64 generator = [] {
        uint64_t seed = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
        if (const char* s = std::getenv("ATTN_VIZ_TEST_SEED")) seed = std::strtoull(s, nullptr, 10);
        std::cerr << "test seed: " << seed << " (ATTN_VIZ_TEST_SEED=" << seed << " replays it)\n";
        return std::mt19937_64(seed);
    }();
    return generator;
}

attn_viz::Tensor random_tensor(std::vector<int64_t> shape, float scale) {
    attn_viz::Tensor t(std::move(shape));
    std::uniform_real_distribution<float> dist(-scale, scale);
    for (float& x : t.data) x = dist(rng());
    if (!t.data.empty()) t.data[0] = scale * 0.5f;  // never all zero
    return t;
}

std::vector<std::string> random_letters(const std::vector<std::string>& alphabet, int max_length) {
    std::vector<std::string> letters;
    const int length = static_cast<int>(rng()() % static_cast<uint64_t>(max_length)) + 1;
    for (int i = 0; i < length; ++i) letters.push_back(alphabet[rng()() % alphabet.size()]);
    return letters;
}

ScratchDir::ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "attn-viz-test-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
}

ScratchDir::~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
}

CommandResult run_command(const std::string& command_line) {
    CommandResult result;
    FILE* pipe = popen((command_line + " 2>&1").c_str(), "r");
    if (!pipe) return result;
    std::array<char, 4096> buffer{};
    size_t n;
    while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), n);
    int status = pclose(pipe);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return result;
}

const std::string& source_dir() {
    static const std::string path = ATTN_VIZ_SOURCE_DIR;
    return path;
}

const std::string& shared_dir() {
    static const std::string path = ATTN_VIZ_SHARED_DIR;
    return path;
}

const std::string& attn_viz_binary() {
    static const std::string path = ATTN_VIZ_BINARY;
    return path;
}

CommandResult run_attn_viz(const std::string& arguments) {
    return run_command("'" + attn_viz_binary() + "' " + arguments);
}

std::string stories260k_dir() { return shared_model_dir("stories260K", {"stories260K.bin", "tok512.bin"}); }

std::string shared_model_dir(const std::string& name, const std::vector<std::string>& required) {
    const std::filesystem::path dir = std::filesystem::path(shared_dir()) / "models" / name;
    for (const std::string& file : required)
        if (!std::filesystem::exists(dir / file)) {
            std::cerr << "skipped: ../shared/models/" << name << "/" << file
                      << " is absent; tests that need it not run\n";
            return "";
        }
    return dir.string();
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

double max_abs_diff(const attn_viz::Tensor& a, const attn_viz::Tensor& b) {
    if (a.shape != b.shape) return INFINITY;
    double m = 0;
    for (size_t i = 0; i < a.data.size(); ++i) m = std::max(m, std::fabs(double(a.data[i]) - double(b.data[i])));
    return m;
}

}  // namespace test_support
