#include "sequence_stream.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "error.hpp"
#include "input_files.hpp"
#include "memory_budget.hpp"

namespace fs = std::filesystem;

namespace attn_viz {

SequenceStream::SequenceStream(const std::string& path, int64_t d_model, const LoadLimits& limits)
    : d_model_(d_model), limits_(limits), path_(path) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
        for (const auto& entry : fs::directory_iterator(path, ec))
            if (entry.is_regular_file() && entry.path().extension() == ".json") files_.push_back(entry.path().string());
        if (ec) throw Error(ErrorKind::io, path + ": cannot list the folder: " + ec.message());
        std::sort(files_.begin(), files_.end());
        if (files_.empty()) fail_input(path, "folder holds no .json input files");
        return;
    }
    jsonl_.open(path);
    if (!jsonl_) throw Error(ErrorKind::io, path + ": cannot open: " + std::strerror(errno));
    record_input_file(path, "corpus");
    base_dir_ = fs::path(path).parent_path().string();
}

bool SequenceStream::next(SequenceInput& out, std::string& where) {
    if (!files_.empty()) {
        if (next_file_ == files_.size()) return false;
        where = files_[next_file_++];
        out = read_input_file(where, d_model_, limits_);
        return true;
    }
    std::string line;
    while (std::getline(jsonl_, line)) {
        ++line_number_;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        where = path_ + ":" + std::to_string(line_number_);
        check_memory_elements(line.size(), json_bytes_per_text_byte, limits_.memory_budget,
                              where + ": parsing " + std::to_string(line.size()) + " bytes of JSON");
        nlohmann::json doc;
        try {
            doc = nlohmann::json::parse(line);
        } catch (const nlohmann::json::exception& e) {
            fail_input(where, std::string("invalid JSON: ") + e.what());
        }
        out = parse_sequence(doc, d_model_, where, base_dir_, limits_);
        return true;
    }
    if (jsonl_.bad()) throw Error(ErrorKind::io, path_ + ": read failed: " + std::strerror(errno));
    return false;
}

}  // namespace attn_viz
