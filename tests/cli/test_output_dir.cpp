// OutputDir and StagingDir on their own: fresh staging names, dead runs' leftovers, the names a
// manifest may list, and the checks commit() makes before it moves anything.
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include <doctest/doctest.h>

#include "cli_fixtures.hpp"
#include "expect_error.hpp"
#include "input_files.hpp"
#include "output_dir.hpp"
#include "reliability_fixtures.hpp"

using namespace attn_viz;
using namespace test_support;
namespace fs = std::filesystem;

namespace {

// A run directory made through OutputDir holding `files` (name -> contents).
void commit_run(const std::string& dir, const std::map<std::string, std::string>& files, bool force = false) {
    OutputDir out(dir, force);
    for (const auto& [name, text] : files) write_text(out.file(name), text);
    out.commit();
}

}  // namespace

TEST_SUITE("reliability") {

TEST_CASE("only names attn-viz writes are accepted as outputs or acted on in a manifest") {
    for (const char* name : {"stats.json", "heads.csv", "head_00.png", "layer_01/head_03.png", "seq_00/report.html",
                             "seq_02/layer_00/head_11.svg", "compare.json", "weights.json"})
        CHECK_MESSAGE(is_attn_viz_output_name(name), name);
    for (const char* name :
         {"", "/etc/passwd.png", "../x.png", "a/../b.png", "./x.png", ".attn-viz-run", "assets/thesis.tex", "notes.txt",
          "x.png/", "a//b.png", "a b.png", "png", ".hidden/x.png", "x.PNG\n"})
        CHECK_MESSAGE(!is_attn_viz_output_name(name), name);
    ScratchDir dir;
    OutputDir out(dir / "out", false);
    expect_error(ErrorKind::internal, [&] { out.file("thesis.tex"); }, {"thesis.tex: not a name attn-viz writes"});
}

TEST_CASE("staging names: the destination's name, the PID and six letters or digits") {
    CHECK(is_staging_name("out.attn-viz-partial-123-Ab3dE9", "out"));
    CHECK(is_staging_name("a.npy.attn-viz-partial-7-zzzzzz", "a.npy"));
    for (const char* name :
         {"out.attn-viz-partial-123-Ab3dE9x", "out.attn-viz-partial-123-Ab3dE", "out.attn-viz-partial-123",
          "out.attn-viz-partial--Ab3dE9", "out.attn-viz-partial-12a-Ab3dE9", "out.attn-viz-partial-1-Ab3d.9",
          "out2.attn-viz-partial-123-Ab3dE9", "xout.attn-viz-partial-123-Ab3dE9"})
        CHECK_MESSAGE(!is_staging_name(name, "out"), name);
}

TEST_CASE("a staging folder is new, beside its destination, and removed unless released") {
    ScratchDir dir;
    std::set<std::string> paths;
    {
        const StagingDir first(dir / "out"), second(dir / "out");  // the second must not take the live first
        for (const StagingDir* s : {&first, &second}) {
            CHECK(fs::is_directory(fs::symlink_status(s->path())));
            CHECK(fs::path(s->path()).parent_path() == dir.path());
            CHECK(is_staging_name(fs::path(s->path()).filename().string(), "out"));
            paths.insert(s->path());
        }
        CHECK(paths.size() == 2);
        CHECK(staging_in(dir.path()).size() == 2);
        write_text(first.path() + "/stats.json", "staged");
    }
    CHECK(names_in(dir.path()).empty());
}

TEST_CASE("a dead run's staging folder (its lock not held) is removed by the next one for the same destination only") {
    ScratchDir dir;
    std::string dead_path, other_path;
    {
        StagingDir dead(dir / "out"), other(dir / "elsewhere");
        write_text(dead.path() + "/foreign.png", "left by a killed run");
        dead_path = dead.path(), other_path = other.path();
        dead.release();  // as a killed run leaves it: the folder stays, the lock is gone
        other.release();
    }
    fs::create_directories(dir / "victim");
    write_text(dir / "victim/keep.png", "the victim's");
    const std::string planted = dir / "out.attn-viz-partial-1-AAAAAA";
    fs::create_directory_symlink(dir / "victim", planted);
    REQUIRE(fs::exists(dead_path));
    const StagingDir next(dir / "out");
    CHECK(!fs::exists(dead_path));
    CHECK(fs::exists(other_path));  // another destination's: left for a run into that one
    CHECK(fs::is_symlink(planted));
    CHECK(read_text(dir / "victim/keep.png") == "the victim's");
}

TEST_CASE("an earlier run in the folder is kept unless `force`, which replaces it") {
    ScratchDir dir;
    commit_run(dir / "out", {{"stats.json", "first run"}});
    const auto before = snapshot(dir.path());
    try {
        OutputDir out(dir / "out", false);
        FAIL("an earlier run was not refused");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::usage);
        CHECK(e.remedy() == Remedy::replace_earlier_run);
        CHECK(std::string(e.what()) == dir / "out" + ": holds an earlier attn-viz run, which is kept");
    }
    CHECK(snapshot(dir.path()) == before);
    commit_run(dir / "out", {{"stats.json", "second run"}}, true);
    CHECK(read_text(dir / "out/stats.json") == "second run");
}

TEST_CASE("commit() checks again that no destination became an input after it was requested") {
    ScratchDir dir;
    commit_run(dir / "out", {{"stats.json", "first run"}, {"old.png", "first run"}});
    const auto before = snapshot(dir.path());
    {
        OutputDir out(dir / "out", true);
        write_text(out.file("stats.json"), "second run");
        record_input_file(dir / "out/stats.json", "weights");  // read after the file was requested
        expect_error(ErrorKind::usage, [&] { out.commit(); },
                     {"refusing to overwrite an input: " + (dir / "out/stats.json") + ", read as weights"});
    }
    CHECK(snapshot(dir.path()) == before);
}

TEST_CASE("commit() never removes an input a previous run's manifest lists, and replaces the rest whole") {
    ScratchDir dir;
    commit_run(dir / "out",
               {{"stats.json", "first run"}, {"entropy.png", "first run"}, {"layer_00/head_00.png", "first run"}});
    record_input_file(dir / "out/entropy.png", "");
    const auto before = snapshot(dir.path());
    {
        OutputDir out(dir / "out", true);
        write_text(out.file("stats.json"), "second run");
        expect_error(ErrorKind::usage, [&] { out.commit(); }, {dir / "out/entropy.png", "refusing to remove an input"});
    }
    CHECK(snapshot(dir.path()) == before);
    fs::rename(dir / "out/entropy.png", dir / "entropy.png");  // no longer an input of the run directory
    commit_run(dir / "out", {{"stats.json", "second run"}, {"heads.csv", "second run"}}, true);
    CHECK(read_text(dir / "out/.attn-viz-run") == "heads.csv\nstats.json\n");
    CHECK(!fs::exists(dir / "out/layer_00/head_00.png"));
    CHECK(read_text(dir / "out/stats.json") == "second run");
}

TEST_CASE("an output outside the run directory shares its folder's staging and refuses an input") {
    ScratchDir dir;
    write_text(dir / "w.npy", "weights");
    record_input_file(dir / "w.npy", ".npy tensor");
    OutputDir out(dir / "out", false);
    expect_error(ErrorKind::usage, [&] { out.external_file(dir / "w.npy"); }, {"refusing to overwrite an input"});
    const std::string a = out.external_file(dir / "a.npy"), b = out.external_file(dir / "b.npy");
    CHECK(fs::path(a).parent_path() == fs::path(b).parent_path());
    CHECK(out.external_file(dir / "a.npy") == a);
    write_text(a, "a"), write_text(b, "b"), write_text(out.file("stats.json"), "stats");
    out.commit();
    CHECK(read_text(dir / "a.npy") == "a");
    CHECK(read_text(dir / "b.npy") == "b");
    CHECK(staging_in(dir.path()).empty());
}

}  // TEST_SUITE("reliability")
