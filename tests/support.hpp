// Helpers shared by the tests: fresh random data, scratch directories, running the CLI.
#pragma once

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "tensor.hpp"

namespace test_support {

// A generator seeded from the clock (printed once), so every run draws fresh data;
// ATTN_VIZ_TEST_SEED=N replays a run.
std::mt19937_64& rng();

// Uniform in [-scale, scale], never all zero.
attn_viz::Tensor random_tensor(std::vector<int64_t> shape, float scale = 1.0f);

// 1 to max_length letters drawn from `alphabet` (each a string, so a letter may take several bytes).
std::vector<std::string> random_letters(const std::vector<std::string>& alphabet, int max_length);

// A fresh empty directory under the system temp dir, removed when the object dies.
class ScratchDir {
public:
    ScratchDir();
    ~ScratchDir();
    const std::filesystem::path& path() const { return path_; }
    std::string operator/(const std::string& name) const { return (path_ / name).string(); }

private:
    std::filesystem::path path_;
};

struct CommandResult {
    int exit_code = -1;
    std::string output;  // stdout and stderr together
};

// The source tree, ../shared beside it and the attn-viz binary built with the tests, as absolute
// paths. Only support.cpp is compiled with them, so the other test objects do not depend on where
// the tree is (ccache shares them between checkouts).
const std::string& source_dir();
const std::string& shared_dir();
const std::string& attn_viz_binary();

// Runs a shell command line, capturing its output.
CommandResult run_command(const std::string& command_line);

// Runs the attn-viz binary built alongside the tests with the given arguments.
CommandResult run_attn_viz(const std::string& arguments);

// ../shared/models/stories260K, or "" when ../shared is absent (the test then prints a
// skip message and returns).
std::string stories260k_dir();

// ../shared/models/NAME when it holds every file of `required`, or "" after printing a skip
// message (the test then returns).
std::string shared_model_dir(const std::string& name, const std::vector<std::string>& required);

// The fixture of the tests that run attn-viz on stories260K (TEST_CASE_FIXTURE): its folder, ""
// when ../shared lacks it (the test then returns), and a fresh scratch folder.
struct Stories260kFixture {
    std::string model = stories260k_dir();
    ScratchDir dir;
};

// The same for stories260K converted to GGUF: the folder holding stories260K.gguf and
// stories260K-Q8_0.gguf.
struct Stories260kGgufFixture {
    std::string gguf = shared_model_dir("stories260K-gguf", {"stories260K.gguf", "stories260K-Q8_0.gguf"});
    ScratchDir dir;
};

void write_text(const std::string& path, const std::string& text);
std::string read_text(const std::string& path);

// Largest |a - b| over two tensors of equal shape.
double max_abs_diff(const attn_viz::Tensor& a, const attn_viz::Tensor& b);

}  // namespace test_support
