// Progress of a long run on stderr ("attn-viz: layer 3 of 12", "attn-viz: sequence 120 of 400"), for
// a person waiting at a terminal: shown only when stderr is a terminal and not under -q/--quiet,
// so scripts and logs never see it. One line, redrawn in place at most 10 times a second, with
// its final count always shown, and erased when the work is done, so that what follows starts
// on a clean line.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "analysis_catalog.hpp"
#include "sequence_stream.hpp"

namespace attn_viz_cli {

// Whether progress is shown: stderr is a terminal and the user did not ask for quiet.
bool progress_wanted(bool quiet);

class Progress {
public:
    // what: "layer", "sequence", "token"; total: the count to reach, or 0 when unknown.
    Progress(bool enabled, std::string what, int64_t total = 0);
    ~Progress();
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;

    // `done` items of `total` are finished (total 0: keep the constructor's).
    void update(int64_t done, int64_t total = 0);
    // Erases the line (the destructor does it too).
    void finish();

private:
    void draw();

    bool enabled_, shown_ = false;
    std::string what_;
    int64_t total_, done_ = 0, drawn_ = 0;
    std::chrono::steady_clock::time_point last_;
};

// The session's progress (analysis_catalog.hpp's ProgressFactory) as Progress lines, shown as
// progress_wanted says: each long step ("ablated head") its own line, erased when it is done.
attn_viz::ProgressFactory progress_lines(bool quiet);

// The progress of a corpus run over `documents` ("sequence 23 of 50"), shown as progress_wanted
// says; the total is counted first (CorpusDocuments::count_sequences) only when it is shown.
Progress corpus_progress(bool quiet, const attn_viz::CorpusDocuments& documents);

}  // namespace attn_viz_cli
