// Writing a run's results without ever leaving half of them behind, and without ever replacing or
// removing a file the user did not get from attn-viz.
//
// Every file of a run is written into a staging folder beside the destination (staging_dir.hpp),
// and files outside it (--dump-attention F.npy) into a staging folder beside theirs. commit()
// moves everything into place with rename(2); if the run fails, throws or is interrupted (SIGINT,
// SIGTERM) first, the staging folders are removed and the previous results, if any, are left as
// they were; the interrupt says so on stderr ("attn-viz: interrupted: nothing written, the
// previous results in DIR are kept", or "... nothing written to DIR" when there were none). No destination may be a
// file the run reads (input_files.hpp): that is refused (Error usage) when the destination is requested and again,
// before anything moves, in commit().
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "staging_dir.hpp"

namespace attn_viz {

class OutputDir {
public:
    // Refuses (Error usage), unless `force`, a `dir` that holds an earlier attn-viz run (its
    // results are kept: Remedy::replace_earlier_run) or any other files. Nothing is created until
    // the first file is requested.
    OutputDir(std::string dir, bool force);
    // A run that keeps no files (`--json` without `--out`): the files a report writes are staged
    // in the system's temporary folder and removed, never committed; there is no external file.
    struct KeepNothing {};
    explicit OutputDir(KeepNothing);
    ~OutputDir();  // removes whatever was not committed
    OutputDir(const OutputDir&) = delete;
    OutputDir& operator=(const OutputDir&) = delete;

    // Where to write `relative` (e.g. "head_00.png", "layer_01/head_03.png") inside the run
    // directory; parent folders are created in the staging area. `relative` must be a name
    // attn-viz writes (see is_attn_viz_output_name).
    std::string file(const std::string& relative);

    // Where to write a file that belongs at `final_path`, outside the run directory. A
    // `final_path` that exists and is not a regular file (/dev/stdout, a FIFO) is written
    // directly; an existing directory is refused (Error usage).
    std::string external_file(const std::string& final_path);

    // Records `inputs` as files of the run (input_files.hpp) even if it does not read them:
    // commit() will neither replace nor remove them.
    void protect_inputs(const std::vector<std::string>& inputs);

    // Moves everything into place. Files a previous run left in the directory that this run
    // did not write again are removed (only names listed in its manifest that attn-viz writes,
    // regular files reached without following a symbolic link), so the folder always describes
    // one run. Nothing is written through a symbolic link inside the directory. An interrupt
    // (SIGINT, SIGTERM, SIGHUP) during commit() waits until it is done, then exits with 130, so
    // it never leaves a mix of two runs.
    void commit();

    const std::string& dir() const { return dir_; }  // "" when it keeps nothing

    // The files of the run directory requested so far: (relative path, where it is staged until
    // commit()), in the order they were requested. Python reads a run's arrays from here.
    std::vector<std::pair<std::string, std::string>> staged_files() const;

private:
    struct External {
        std::string final_path, staged_name;  // staged_name: inside the staging folder of its folder
        StagingDir* staging;
    };
    std::string dir_;
    bool keep_nothing_ = false;
    std::unique_ptr<StagingDir> staging_;                                  // made by the first file()
    std::vector<std::string> files_;                                       // relative paths in staging
    std::map<std::string, std::unique_ptr<StagingDir>> external_staging_;  // by the externals' folder
    std::vector<External> externals_;
    std::vector<std::string> staged_paths_;  // every staged file, named in errors by its destination (file_write.hpp)
    void move_into_existing_dir();
};

// Whether `relative` ("stats.json", "layer_01/head_03.png") is a name attn-viz writes in a run
// directory: folders and a file of letters, digits, '_', '-' and '.', none starting with '.', the
// file ending in .png, .svg, .json, .csv, .html or .npy. A previous run's manifest entry that is not is
// never removed.
bool is_attn_viz_output_name(const std::string& relative);

// Refuses (Error usage) to write an output at `path` when it is one of `inputs` or any other file
// the run has read (same file on disk).
void refuse_overwriting_inputs(const std::string& path, const std::vector<std::string>& inputs);

}  // namespace attn_viz
