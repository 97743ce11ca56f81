#include "provenance.hpp"

#include <filesystem>
#include <string>
#include <vector>

#include "file_digest.hpp"
#include "input_files.hpp"

namespace attn_viz_cli {
namespace {

std::vector<std::string>& command_line() {
    static std::vector<std::string> arguments;
    return arguments;
}

}  // namespace

void record_command_line(int argc, char** argv) { command_line().assign(argv, argv + argc); }

nlohmann::json run_provenance(std::optional<uint64_t> seed) {
    nlohmann::json inputs = nlohmann::json::array();
    for (const attn_viz::InputFile& file : attn_viz::recorded_input_files()) {
        if (file.role == "font") continue;
        std::error_code ec;
        const auto bytes = std::filesystem::file_size(file.path, ec);
        inputs.push_back({{"path", file.path},
                          {"role", file.role},
                          {"bytes", ec ? nlohmann::json(nullptr) : nlohmann::json(bytes)},
                          {"sha256", attn_viz::file_sha256(file.path)}});
    }
    nlohmann::json provenance = {{"tool", "attn-viz"},
                                 {"version", ATTN_VIZ_VERSION},
                                 {"command_line", command_line()},
                                 {"inputs", std::move(inputs)}};
    if (seed) provenance["seed"] = *seed;
    return provenance;
}

}  // namespace attn_viz_cli
