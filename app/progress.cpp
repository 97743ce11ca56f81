#include "progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <memory>

namespace attn_viz_cli {

bool progress_wanted(bool quiet) { return !quiet && isatty(STDERR_FILENO) == 1; }

Progress corpus_progress(bool quiet, const attn_viz::CorpusDocuments& documents) {
    const bool shown = progress_wanted(quiet);
    return Progress(shown, "sequence", shown ? documents.count_sequences() : 0);
}

Progress::Progress(bool enabled, std::string what, int64_t total)
    : enabled_(enabled), what_(std::move(what)), total_(total) {}

Progress::~Progress() { finish(); }

void Progress::update(int64_t done, int64_t total) {
    if (!enabled_) return;
    if (total > 0) total_ = total;
    done_ = done;
    const auto now = std::chrono::steady_clock::now();
    const bool last = total_ > 0 && done >= total_;
    if (shown_ && !last && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    draw();
}

void Progress::draw() {
    shown_ = true;
    drawn_ = done_;
    const long long done = done_;
    if (total_ > 0)
        std::fprintf(stderr, "\rattn-viz: %s %lld of %lld\033[K", what_.c_str(), done, static_cast<long long>(total_));
    else
        std::fprintf(stderr, "\rattn-viz: %s %lld\033[K", what_.c_str(), done);
    std::fflush(stderr);
}

void Progress::finish() {
    if (!shown_) return;
    if (drawn_ != done_) draw();  // the final count, even when it came sooner than a redraw
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    shown_ = false;
}

attn_viz::ProgressFactory progress_lines(bool quiet) {
    const bool shown = progress_wanted(quiet);
    return [shown](const std::string& what) -> attn_viz::StepCallback {
        if (!shown) return {};
        auto progress = std::make_shared<Progress>(true, what);
        return [progress](int64_t done, int64_t total) { progress->update(done, total); };
    };
}

}  // namespace attn_viz_cli
