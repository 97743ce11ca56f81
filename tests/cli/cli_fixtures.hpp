// Small valid weights/input files for command-line tests, written with fresh random numbers, and
// helpers to run the tool in the background and see what it left on disk.
#pragma once

#include <fcntl.h>
#include <pty.h>
#include <spawn.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include "npy.hpp"
#include "reference_attention.hpp"
#include "support.hpp"
#include "weights_file.hpp"

extern char** environ;

namespace test_support {

// An input object {"tokens": ["w0", ...], "embeddings": [T random rows of D numbers]} as one line
// of JSON (a JSONL corpus line without its newline).
inline std::string random_sequence_line(int64_t T, int64_t D) {
    attn_viz::Tensor x = random_tensor({T, D});
    nlohmann::json rows = nlohmann::json::array();
    nlohmann::json tokens = nlohmann::json::array();
    for (int64_t t = 0; t < T; ++t) {
        rows.push_back(std::vector<float>(x.data.begin() + t * D, x.data.begin() + (t + 1) * D));
        tokens.push_back(std::string("w").append(std::to_string(t)));
    }
    return nlohmann::json{{"tokens", tokens}, {"embeddings", rows}}.dump();
}

// Writes DIR/w.json (a random D x D layer with H heads) and DIR/x.json (T tokens).
inline void write_layer_fixture(const ScratchDir& dir, int64_t D, int64_t H, int64_t T, bool causal = false) {
    attn_viz::write_weights_file(dir / "w.json", random_layer(D, H, H, causal, true));
    write_text(dir / "x.json", random_sequence_line(T, D));
}

// "run --weights DIR/w.json --input DIR/x.json --out DIR/out": the command over the files either
// fixture above writes.
inline std::string layer_fixture_run(const ScratchDir& dir) {
    return "run --weights " + (dir / "w.json") + " --input " + (dir / "x.json") + " --out " + (dir / "out");
}

// Writes DIR/w.json (D x D, H heads) whose four matrices are .npy files beside it (wq.npy, wk.npy,
// wv.npy, wo.npy), and DIR/x.json whose T x D embeddings are DIR/emb.npy.
inline void write_npy_layer_fixture(const ScratchDir& dir, int64_t D, int64_t H, int64_t T) {
    const attn_viz::LayerWeights w = random_layer(D, H, H, false, false);
    nlohmann::json weights = {{"format", "attn-viz/weights@1"}, {"d_model", D}, {"num_heads", H}};
    const std::pair<const char*, const attn_viz::Tensor*> matrices[] = {
        {"W_Q", &w.w_q}, {"W_K", &w.w_k}, {"W_V", &w.w_v}, {"W_O", &w.w_o}};
    for (const auto& [name, tensor] : matrices) {
        std::string file = std::string("w") + static_cast<char>(name[2] - 'A' + 'a') + ".npy";  // W_Q -> wq.npy
        attn_viz::write_npy(dir / file, *tensor);
        weights[name] = {{"npy", file}};
    }
    write_text(dir / "w.json", weights.dump());
    attn_viz::write_npy(dir / "emb.npy", random_tensor({T, D}));
    write_text(dir / "x.json", nlohmann::json{{"embeddings", {{"npy", "emb.npy"}}}}.dump());
}

// Names directly in `dir`: staging folders and temporary files show up here.
inline std::set<std::string> names_in(const std::filesystem::path& dir) {
    std::set<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir)) names.insert(e.path().filename().string());
    return names;
}

// Every regular file below `dir`, as paths relative to it.
inline std::set<std::string> files_below(const std::filesystem::path& dir) {
    std::set<std::string> files;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir))
        if (entry.is_regular_file()) files.insert(std::filesystem::relative(entry.path(), dir).string());
    return files;
}

// Everything below `dir`, without following symbolic links: each regular file with its bytes,
// each symbolic link with its target, each folder as "folder".
inline std::map<std::string, std::string> snapshot(const std::filesystem::path& dir) {
    namespace fs = std::filesystem;
    std::map<std::string, std::string> entries;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        const std::string name = fs::relative(e.path(), dir).string();
        if (e.is_symlink())
            entries[name] = "symbolic link to " + fs::read_symlink(e.path()).string();
        else if (e.is_directory())
            entries[name] = "folder";
        else
            entries[name] = "file " + read_text(e.path().string());
    }
    return entries;
}

// The argv of the built attn-viz with `args`, null-terminated; its strings live in `storage`.
inline std::vector<char*> attn_viz_argv(const std::vector<std::string>& args, std::vector<std::string>& storage) {
    storage = {attn_viz_binary()};
    storage.insert(storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& s : storage) argv.push_back(s.data());
    argv.push_back(nullptr);
    return argv;
}

// Starts attn-viz with `args` (output discarded) and returns its pid.
inline pid_t spawn_attn_viz(const std::vector<std::string>& args) {
    std::vector<std::string> storage;
    std::vector<char*> argv = attn_viz_argv(args, storage);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = -1;
    REQUIRE(posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) == 0);
    posix_spawn_file_actions_destroy(&actions);
    return pid;
}

inline int wait_exit_code(pid_t pid) {
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Polls until `ready` holds (true) or 60 s pass (false).
template <typename Ready>
bool wait_until(Ready ready) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
        if (ready()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return false;
}

// Runs attn-viz with `args` on a pseudo-terminal (stdout and stderr both the terminal): what the
// terminal showed and the exit code.
inline CommandResult run_on_terminal(const std::vector<std::string>& args) {
    std::vector<std::string> storage;
    std::vector<char*> argv = attn_viz_argv(args, storage);
    int terminal = -1;
    const pid_t pid = forkpty(&terminal, nullptr, nullptr, nullptr);
    REQUIRE(pid >= 0);
    if (pid == 0) {
        execv(argv[0], argv.data());
        _exit(127);
    }
    CommandResult result;
    char buffer[4096];
    for (ssize_t n; (n = read(terminal, buffer, sizeof buffer)) > 0;)
        result.output.append(buffer, static_cast<size_t>(n));
    close(terminal);
    result.exit_code = wait_exit_code(pid);
    return result;
}

// The staging folders (NAME.attn-viz-partial-...) directly in `dir`.
inline std::set<std::string> staging_in(const std::filesystem::path& dir) {
    std::set<std::string> found;
    for (const std::string& name : names_in(dir))
        if (name.find(".attn-viz-partial-") != std::string::npos) found.insert(name);
    return found;
}

}  // namespace test_support
