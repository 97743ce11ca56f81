// Wall-clock time per stage of a run, printed by --timings (load, attention, statistics, ...).
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace attn_viz {

class Timings {
public:
    // Measures from construction to destruction and adds it to `timings` under `stage`.
    class Scope {
    public:
        Scope(Timings& timings, std::string stage)
            : timings_(timings), stage_(std::move(stage)), start_(std::chrono::steady_clock::now()) {}
        ~Scope() {
            timings_.add(stage_, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
        }

    private:
        Timings& timings_;
        std::string stage_;
        std::chrono::steady_clock::time_point start_;
    };

    void add(const std::string& stage, double seconds);
    double seconds(const std::string& stage) const;  // 0 when never measured
    // One line per stage in order of first appearance: "  attention   12.3 ms".
    std::string table() const;

private:
    std::vector<std::pair<std::string, double>> stages_;
};

}  // namespace attn_viz
